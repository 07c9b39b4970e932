// Global addresses of a netdev (the ipoib module's IPoIB netdevs, the
// railnet module's Ethernet rails): one interface and its two backends,
// chosen once per root by NewNetdevAddressBackend:
// - live: rtnetlink RTM_GETADDR/NEWADDR/DELADDR (libnl-route-3 rtnl_addr),
//   in the calling process's network namespace; what it read is handed to
//   `snapshot` as the caller's capture file;
// - tree: that capture file, "<ifname> <address>/<prefix>" per line (no file:
//   no addresses), rewritten on add and remove and removed once empty.
// Each module keeps its own capture file (a capture is one writer's: a
// snapshot keeps the last NoteCapture of a path).
#ifndef PROVISIONER_MODULES_LINK_ADDRESS_BACKEND_H_
#define PROVISIONER_MODULES_LINK_ADDRESS_BACKEND_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

class NetdevAddressBackend {
 public:
  virtual ~NetdevAddressBackend() = default;
  virtual std::string Name() const = 0;  // "netlink" | "tree"
  // The global addresses of `ifname`, canonical "172.16.0.10/16" /
  // "fd00::10/64" (IPv6 link-local left out: the kernel makes them), sorted.
  // NOT_FOUND (ENODEV) when there is no such netdev.
  virtual StatusOr<std::vector<std::string>> Read(const std::string& ifname) = 0;
  // `cidr` canonical, as Read gives it.
  virtual Status Add(const std::string& ifname, const std::string& cidr) = 0;
  virtual Status Remove(const std::string& ifname, const std::string& cidr) = 0;
};

// `capture`: the host path of the capture file ("/run/provisioner/...").
// `notes` (may be null): where the netlink backend reports what it read.
std::unique_ptr<NetdevAddressBackend> NewNetlinkNetdevAddressBackend(const std::string& capture,
                                                         const HostFs* notes = nullptr);
std::unique_ptr<NetdevAddressBackend> NewTreeNetdevAddressBackend(HostFs& fs, const std::string& capture);
// The one factory: netlink for the live root (reporting to `fs` for
// snapshot), the capture file under a tree root.
std::unique_ptr<NetdevAddressBackend> NewNetdevAddressBackend(HostFs& fs, const std::string& capture);

// Makes the whole set: removes what `want` lacks, adds what is missing.
Status SetAddresses(NetdevAddressBackend& backend, const std::string& ifname,
                    const std::vector<std::string>& want);

// "172.16.0.10/16" (as host.yaml writes it) -> the canonical text Read gives;
// nullopt when it is no address with a prefix length.
std::optional<std::string> CanonicalCidr(const std::string& text);
// The capture file's text and back.
std::string RenderAddressCapture(const std::map<std::string, std::vector<std::string>>& by_if);
std::map<std::string, std::vector<std::string>> ParseAddressCapture(const std::string& text);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_LINK_ADDRESS_BACKEND_H_
