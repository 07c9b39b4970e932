// Renaming a PF's netdev and RDMA device. Two backends: rtnetlink
// (libnl-route-3) and RDMA netlink for the live root; for a tree root,
// request files the kernel simulator answers (test/sim/rename_sim.h): a
// tree has no kernel to rename anything, and a plain tree (no simulator)
// has no request file to write (ENOENT, said as such).
#ifndef PROVISIONER_MODULES_NAMES_NAMES_BACKEND_H_
#define PROVISIONER_MODULES_NAMES_NAMES_BACKEND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

class NamesBackend {
 public:
  virtual ~NamesBackend() = default;
  virtual std::string Name() const = 0;  // "netlink" | "tree"
  // The kernel refuses to rename a netdev that is up (dev_change_name:
  // EBUSY): down when up, IFLA_IFNAME, back up when it was. A failed rename
  // brings the netdev back up under its old name. EEXIST: `to` is in use.
  virtual Status RenameNetdev(const std::string& from, const std::string& to) = 0;
  // RDMA_NLDEV_CMD_SET with RDMA_NLDEV_ATTR_DEV_INDEX and _DEV_NAME, as
  // `rdma dev set <from> name <to>` sends it. EEXIST: `to` is in use.
  virtual Status RenameRdma(const std::string& from, const std::string& to) = 0;
};

std::unique_ptr<NamesBackend> NewNetlinkNamesBackend();
// Under a tree root: /run/provisioner/names/{net,infiniband}/<from> <- "<to>\n",
// with the netdev's flags written down and back up around it as on the live root.
std::unique_ptr<NamesBackend> NewTreeNamesBackend(HostFs& fs);
// The one factory (names_backend_factory.cc).
std::unique_ptr<NamesBackend> NewNamesBackend(HostFs& fs);

inline constexpr char kNetdevRenameRequests[] = "/run/provisioner/names/net/";
inline constexpr char kRdmaRenameRequests[] = "/run/provisioner/names/infiniband/";

// The RDMA netlink wire messages (names_netlink.cc), for tests: the device
// dump that maps a name to its index (RDMA_NLDEV_CMD_GET, NLM_F_DUMP) and the
// rename (RDMA_NLDEV_CMD_SET, NLM_F_ACK).
std::vector<uint8_t> BuildRdmaDevDumpRequest(uint32_t seq);
std::vector<uint8_t> BuildRdmaRenameRequest(uint32_t seq, uint32_t index, const std::string& name);
// One RDMA_NLDEV_CMD_GET reply: the device's index and name.
struct RdmaDevEntry {
  uint32_t index = 0;
  std::string name;
};
StatusOr<RdmaDevEntry> ParseRdmaDevReply(const std::vector<uint8_t>& msg);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_NAMES_NAMES_BACKEND_H_
