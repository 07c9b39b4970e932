// Reading and changing a netdev's MTU and admin state. Two backends: rtnetlink
// (libnl-route-3) for the live root, and the /sys/class/net/<if> files for a
// tree root (mtu, flags, operstate; apply writes mtu and flags, as root can on
// a real sysfs too — the kernel simulator's stand-in under a tree).
#ifndef PROVISIONER_MODULES_LINK_LINK_BACKEND_H_
#define PROVISIONER_MODULES_LINK_LINK_BACKEND_H_

#include <memory>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/link_facts.h"

namespace provisioner {

class LinkBackend {
 public:
  virtual ~LinkBackend() = default;
  virtual std::string Name() const = 0;  // "netlink" | "sysfs"
  // NOT_FOUND (ENODEV) when there is no such netdev.
  virtual StatusOr<LinkFacts> Read(const std::string& ifname) = 0;
  virtual Status SetMtu(const std::string& ifname, int mtu) = 0;
  virtual Status SetUp(const std::string& ifname, bool up) = 0;
};

// libnl: rtnl_link_get_kernel to read (plus one RTM_GETLINK for
// IFLA_MIN_MTU/IFLA_MAX_MTU, which libnl 3.7 does not parse), rtnl_link_change
// to set. Acts in the calling process's network namespace. Each link read is
// reported to `notes` (when given) as the sysfs files the sysfs backend reads
// instead, so that `snapshot` copies them.
std::unique_ptr<LinkBackend> NewNetlinkLinkBackend(const HostFs* notes = nullptr);
// /sys/class/net/<if>/{mtu,flags,operstate} through `fs`.
std::unique_ptr<LinkBackend> NewSysfsLinkBackend(HostFs& fs);

// The one factory (link_backend_factory.cc): netlink for the live root
// (reporting to `fs` for snapshot), the sysfs files under a tree root.
std::unique_ptr<LinkBackend> NewLinkBackend(HostFs& fs);

// True for a name the kernel accepts for a netdev (1-15 bytes, no '/', ':' or
// whitespace, not "." or ".."): safe in a sysfs path.
bool IsValidIfname(const std::string& name);

// What the backends that work on a netdev's files under a tree root (link,
// ipoib, roce's DCB) check first: kInvalidArgument for a bad name, kNotFound
// (ENODEV) when /sys/class/net has no such netdev; OK otherwise.
Status CheckNetdevInTree(const HostFs& fs, const std::string& ifname);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_LINK_LINK_BACKEND_H_
