// rdma-core (libibverbs) view of the RDMA devices, to cross-check sysfs
// discovery on the live root. libibverbs enumerates devices from
// $SYSFS_PATH/class/infiniband_verbs (when RDMA netlink is absent) and keeps
// only those whose /dev/infiniband/uverbsN exists; GIDs need an opened
// device (a kernel-backed uverbs character device), so under a tree only the
// device list and node GUIDs can be compared. The only user of <infiniband/verbs.h>.
#ifndef PROVISIONER_MODULES_RDMA_VERBS_H_
#define PROVISIONER_MODULES_RDMA_VERBS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/model/rdma_facts.h"

namespace provisioner::rdma {

struct VerbsGid {
  int port = 1;
  RdmaGid gid;  // index, text as sysfs prints it, type, netdev (ifindex -> name)
};

struct VerbsDevice {
  std::string name;
  std::string node_guid;  // sysfs text form
  bool gids_queried = false;
  std::string open_error;  // why the device could not be opened ("" when it was)
  std::vector<VerbsGid> gids;
};

// 16 raw GID bytes -> "fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e".
std::string GidText(const uint8_t* raw16);
// enum ibv_gid_type -> "IB/RoCE v1" | "RoCE v2" (the sysfs names).
std::string GidTypeName(uint32_t ibv_gid_type, bool roce);
// A node GUID as ibv_get_device_guid returns it (big-endian) -> "0c42:a103:005b:7c2e".
std::string GuidText(uint64_t be_guid);

// ibv_get_device_list, and with `with_gids` ibv_open_device +
// ibv_query_gid_table per device. An empty list when libibverbs finds none.
StatusOr<std::vector<VerbsDevice>> QueryRdmaCore(bool with_gids);

// Differences between rdma-core's view and sysfs discovery ("" = agree):
// device names, node GUIDs, and for devices whose GIDs were queried, every
// used GID slot (index, GID, type, netdev).
std::vector<std::string> CompareWithSysfs(const std::vector<VerbsDevice>& verbs,
                                          const std::vector<RdmaDevice>& sysfs);

}  // namespace provisioner::rdma

#endif  // PROVISIONER_MODULES_RDMA_VERBS_H_
