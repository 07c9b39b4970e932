// What the kernel does on a write to a VF netdev's `mtu` sysfs file
// (net/core/net-sysfs.c mtu_store -> dev_set_mtu -> dev_validate_mtu, then
// the driver's ndo_change_mtu), acting on a host tree. `dir` is the netdev's
// real directory (/sys/devices/.../<VF BDF>/net/ens6f0v0).
//
//   not a number (kstrtoul base 0: "9000", "9000\n", "0x2328")  EINVAL
//   below min_mtu (ETH_MIN_MTU 68)                              EINVAL
//   above max_mtu (mlx5: 9978, MLX5E_HW2SW_MTU of the port's
//   largest hardware MTU, what `ip -d link` shows as maxmtu)    EINVAL
//   above the PF netdev's MTU (the VF's frames leave through
//   the PF's port, which carries none larger; the refusal the
//   sriov-network-operator avoids by raising the PF first)      EINVAL
//   else                                                        the file reads "<n>\n"
//
// Returns 0 or the errno, and changes nothing when it fails.
#ifndef PROVISIONER_TEST_SIM_NETDEV_SIM_H_
#define PROVISIONER_TEST_SIM_NETDEV_SIM_H_

#include <string>
#include <string_view>

#include "test/support/host_tree.h"

namespace provisioner::testing {

// The largest MTU of a simulated mlx5 Ethernet VF netdev (IFLA_MAX_MTU).
inline constexpr int kSimVfMaxMtu = 9978;

// True when `dir` is the directory of a VF's netdev (<VF>/net/<if>, the VF
// having a `physfn` link).
bool IsVfNetdevDir(const TreeWriter& w, const std::string& dir);

// The kernel's checks alone: 0 and the MTU in `*mtu`, or the errno.
int VfNetdevCheckMtu(const TreeWriter& w, const std::string& dir, std::string_view value, int* mtu);
// The checks, then the file reads "<n>\n".
int VfNetdevSetMtu(TreeWriter& w, const std::string& dir, std::string_view value);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_NETDEV_SIM_H_
