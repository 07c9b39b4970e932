// mlx5's RoCE ECN enables: /sys/class/net/<if>/ecn/roce_np/enable/<prio>
// (notification point: the receiver sends CNPs for CE-marked packets) and
// ecn/roce_rp/enable/<prio> (reaction point: the sender lowers its rate on
// CNPs), "0"/"1" per priority 0..7 (the driver's sysfs, as in MLNX_OFED's
// mlx5_core and NVIDIA's RoCE configuration guides). Plain files on both
// roots, so read and written through the host layer (and under --root into
// the tree).
#ifndef PROVISIONER_MODULES_ROCE_ROCE_ECN_H_
#define PROVISIONER_MODULES_ROCE_ROCE_ECN_H_

#include <map>
#include <optional>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr char kEcnNp[] = "roce_np";
inline constexpr char kEcnRp[] = "roce_rp";

// /sys/class/net/<if>/ecn/<point>/enable/<prio>
std::string EcnPath(const std::string& ifname, const std::string& point, int prio);
// Whether the netdev has the ecn/ directory.
bool HasEcn(const HostFs& fs, const std::string& ifname);
// Priority -> enabled for the files present under ecn/<point>/enable; a file
// that does not read "0" or "1" is an error naming it.
StatusOr<std::map<int, bool>> ReadEcn(const HostFs& fs, const std::string& ifname,
                                      const std::string& point);
StatusOr<bool> ReadEcnOne(const HostFs& fs, const std::string& ifname, const std::string& point,
                          int prio);
Status WriteEcn(HostFs& fs, const std::string& ifname, const std::string& point, int prio, bool on);

// The CNP settings of the notification point in NVIDIA's out-of-tree mlx5
// (MLNX_OFED / DOCA-OFED): /sys/class/net/<if>/ecn/roce_np/cnp_dscp (0..63)
// and cnp_802p_prio (0..7), a decimal each. The upstream driver has neither.
inline constexpr char kCnpDscp[] = "cnp_dscp";
inline constexpr char kCnpPrio[] = "cnp_802p_prio";
std::string CnpPath(const std::string& ifname, const std::string& file);
// nullopt when the file is absent; an error naming it when it does not
// read a number in range.
StatusOr<std::optional<int>> ReadCnp(const HostFs& fs, const std::string& ifname,
                                     const std::string& file);
Status WriteCnp(HostFs& fs, const std::string& ifname, const std::string& file, int value);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ROCE_ROCE_ECN_H_
