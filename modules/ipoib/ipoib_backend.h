// What the ipoib module asks the kernel besides sysfs. Mode, pkey children
// (create_child/delete_child) and the pkey/parent files are sysfs on the live
// root as under a tree root, read and written through HostFs by the module.
// MTU and admin state go through the link module's LinkBackend (rtnetlink /
// the /sys/class/net files). Addresses are netlink only, behind this
// interface, chosen once per root by NewIpoibAddressBackend:
// - live: rtnetlink RTM_GETADDR/NEWADDR/DELADDR (libnl-route-3 rtnl_addr),
//   in the calling process's network namespace; what it read is handed to
//   `snapshot` as kIpoibAddressCapture;
// - tree: that capture file, "<ifname> <address>/<prefix>" per line (no file:
//   no addresses), rewritten on add and remove and removed once empty.
#ifndef PROVISIONER_MODULES_IPOIB_IPOIB_BACKEND_H_
#define PROVISIONER_MODULES_IPOIB_IPOIB_BACKEND_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr const char* kIpoibAddressCapture = "/run/provisioner/ipoib-addresses";

class IpoibAddressBackend {
 public:
  virtual ~IpoibAddressBackend() = default;
  virtual std::string Name() const = 0;  // "netlink" | "tree"
  // The global addresses of `ifname`, canonical "172.16.0.10/16" /
  // "fd00::10/64" (IPv6 link-local left out: the kernel makes them), sorted.
  // NOT_FOUND (ENODEV) when there is no such netdev.
  virtual StatusOr<std::vector<std::string>> Read(const std::string& ifname) = 0;
  // `cidr` canonical, as Read gives it.
  virtual Status Add(const std::string& ifname, const std::string& cidr) = 0;
  virtual Status Remove(const std::string& ifname, const std::string& cidr) = 0;
};

std::unique_ptr<IpoibAddressBackend> NewNetlinkIpoibAddressBackend(const HostFs* notes = nullptr);
std::unique_ptr<IpoibAddressBackend> NewTreeIpoibAddressBackend(HostFs& fs);
// The one factory: netlink for the live root (reporting to `fs` for
// snapshot), the capture file under a tree root.
std::unique_ptr<IpoibAddressBackend> NewIpoibAddressBackend(HostFs& fs);

// "172.16.0.10/16" (as host.yaml writes it) -> the canonical text Read gives;
// nullopt when it is no address with a prefix length.
std::optional<std::string> CanonicalCidr(const std::string& text);
// The capture file's text and back.
std::string RenderIpoibAddresses(const std::map<std::string, std::vector<std::string>>& by_if);
std::map<std::string, std::vector<std::string>> ParseIpoibAddresses(const std::string& text);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_IPOIB_IPOIB_BACKEND_H_
