// What the rdma module asks the kernel, behind two interfaces chosen once per
// root by NewRdmaBackends (rdma_backend_factory.cc, the one place the module
// asks whether the root is the live one):
// - NetnsBackend, the live RDMA netns mode. Live root: RDMA netlink
//   (RDMA_NLDEV_CMD_SYS_GET/SET). Tree root: the ib_core parameter file is
//   the simulated kernel's state, and a set rewrites it (refused, as the
//   kernel does, while named network namespaces exist in /run/netns).
// - AddressBackend, the netdev addresses of provisioner's network namespace.
//   Live root: getifaddrs, and what it answered is stored for `snapshot` as
//   kAddressCapture. Tree root: that capture file when the tree has one,
//   else the /proc/net stand-in (if_inet6, and fib_trie + route for IPv4).
#ifndef PROVISIONER_MODULES_RDMA_RDMA_BACKEND_H_
#define PROVISIONER_MODULES_RDMA_RDMA_BACKEND_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/host_model.h"
#include "modules/rdma/rdma_netlink.h"

namespace provisioner::rdma {

class NetnsBackend {
 public:
  virtual ~NetnsBackend() = default;
  // The mode now: "shared" | "exclusive"; the error says why it is unknown.
  virtual StatusOr<std::string> Get() = 0;
  // Where a mode Get returned comes from (RdmaFacts::netns_mode_source).
  virtual std::string Source() const = 0;
  // Switches the mode now. `*refused` says whether a failure is the kernel
  // refusing to switch now (EBUSY while other network namespaces exist;
  // EOPNOTSUPP, EPROTONOSUPPORT, ENOENT without RDMA netlink or ib_core),
  // which a persistent setting can defer to the next boot, rather than an
  // error (a tree's failed write keeps its errno but is no refusal).
  virtual Status Set(const std::string& mode, bool* refused) = 0;
  // True when an EBUSY may clear by itself (a namespace going away): the
  // module then retries.
  virtual bool RetryWhenBusy() const = 0;
};

class AddressBackend {
 public:
  virtual ~AddressBackend() = default;
  // Fills RdmaFacts::addresses and addresses_known.
  virtual void Read(RdmaFacts& facts) = 0;
};

struct RdmaBackends {
  std::unique_ptr<NetnsBackend> netns;
  std::unique_ptr<AddressBackend> addresses;
  // Compare sysfs with rdma-core (libibverbs) and log differences: the live
  // root only (rdma-core reads this machine).
  bool cross_check_rdma_core = false;
};

// Live: `client` (RDMA netlink), getifaddrs; `fs` only hears the captures.
std::unique_ptr<NetnsBackend> NewNetlinkNetnsBackend(std::unique_ptr<NetnsModeClient> client);
std::unique_ptr<AddressBackend> NewGetifaddrsAddressBackend(const HostFs& fs);
// Tree: the stand-ins described above.
std::unique_ptr<NetnsBackend> NewTreeNetnsBackend(HostFs& fs);
std::unique_ptr<AddressBackend> NewTreeAddressBackend(const HostFs& fs);

// The one factory: live backends for the live root (netlink through
// `netns_client`, rdma-core cross-check when `cross_check_rdma_core`), the
// tree backends otherwise.
RdmaBackends NewRdmaBackends(HostFs& fs,
                             const std::function<std::unique_ptr<NetnsModeClient>()>& netns_client,
                             bool cross_check_rdma_core);

}  // namespace provisioner::rdma

#endif  // PROVISIONER_MODULES_RDMA_RDMA_BACKEND_H_
