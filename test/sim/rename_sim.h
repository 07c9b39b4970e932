// What the kernel does when a netdev or an RDMA device is renamed, acting on
// a host tree. Under a tree root there is no rtnetlink or RDMA netlink: the
// names module's tree backend asks for a rename by writing the new name to
// a request file (modules/names/names_backend.h), which this answers:
//
//   /run/provisioner/names/net/<old>         <- "<new>\n"  (RTM_SETLINK IFLA_IFNAME)
//   /run/provisioner/names/infiniband/<old>  <- "<new>\n"  (RDMA_NLDEV_CMD_SET DEV_NAME)
//
// netdev (net/core/dev.c dev_change_name, dev_valid_name): ENODEV no such
// netdev; EINVAL a name the kernel refuses (empty, over 15 bytes, "." or
// "..", '/', ':' or whitespace); EBUSY while it is up (IFF_UP in flags); the
// same name: nothing; EEXIST a name in use. Then the device's net/<old>
// directory becomes net/<new>, /sys/class/net/<old> goes and
// /sys/class/net/<new> points at it; what the kernel prints from the name
// follows it (uevent INTERFACE=, the RDMA GID tables' ndevs, an IPoIB
// child's parent, the roce module's DCB capture run/provisioner/dcb/<if>).
// RDMA device (drivers/infiniband/core/nldev.c nldev_set_doit,
// device.c ib_device_rename): ENODEV no such device; EINVAL an empty name,
// 64 bytes or more (IB_DEVICE_NAME_MAX), '/' (device_rename); the same
// name: nothing; EEXIST a name in use. Then infiniband/<old> becomes
// infiniband/<new>, with /sys/class/infiniband/<new>, uevent NAME= and the
// uverbs devices' ibdev.
// Each returns 0 or the errno and changes nothing when it fails; the
// request file is never left in the tree.
#ifndef PROVISIONER_TEST_SIM_RENAME_SIM_H_
#define PROVISIONER_TEST_SIM_RENAME_SIM_H_

#include <string>
#include <string_view>

#include "test/support/host_tree.h"

namespace provisioner::testing {

inline constexpr char kNetdevRenameDir[] = "/run/provisioner/names/net/";
inline constexpr char kRdmaRenameDir[] = "/run/provisioner/names/infiniband/";

int RenameNetdev(TreeWriter& w, const std::string& old_name, std::string_view value);
int RenameRdmaDevice(TreeWriter& w, const std::string& old_name, std::string_view value);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_RENAME_SIM_H_
