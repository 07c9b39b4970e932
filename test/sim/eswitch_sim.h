// What mlx5 and ice do when the devlink E-Switch mode changes, acting on a
// host tree. Under a tree root the eswitch module keeps a PF's devlink state
// in the capture file /run/provisioner/devlink/<PF BDF> (JSON {"mode":...,
// "flowSteeringMode":..., "hwTcOffload":...}, modules/eswitch); a write of
// it is the devlink request, checked here as the driver checks it:
//
//   not a capture (ParseDevlinkCapture refuses it)               EINVAL
//   no such PCI function                                         ENODEV
//   ice (ice_eswitch_mode_set): mode changes while the PF has
//   VFs ("allowed only if there is no VFs created")              EOPNOTSUPP
//   mlx5 (mlx5_devlink_fs_mode_validate): flowSteeringMode
//   changes while the E-Switch is in switchdev                   EOPNOTSUPP
//   else                                                         0, then:
//
// entering switchdev creates one representor netdev per VF under the PF's
// PCI function (mlx5 en_rep.c, ice_repr.c register them with the PF's
// device as parent): net/<name> with phys_port_name "pf<PF function>vf<i>"
// and the PF's phys_switch_id, down; the name is what udev's path policy
// gives it from the PF's ("ens6f0np0" -> "ens6f0npf0vf1"; eth<ifindex> when
// that is longer than 15 bytes). The PF netdev gets its phys_switch_id
// (readable in switchdev only: mlx5e_rep's ndo_get_port_parent_id).
// Leaving switchdev removes them. VFs created or destroyed while in
// switchdev (sriov_numvfs) get or lose theirs: EswitchSyncRepresentors.
#ifndef PROVISIONER_TEST_SIM_ESWITCH_SIM_H_
#define PROVISIONER_TEST_SIM_ESWITCH_SIM_H_

#include <string>
#include <string_view>

#include "test/support/host_tree.h"

namespace provisioner::testing {

// True for /run/provisioner/devlink/<bdf>.
bool IsDevlinkCapture(std::string_view path);

// The driver's checks alone, for a PF whose capture held `old_content`
// ("" = none): 0 or the errno.
int EswitchCaptureCheck(const TreeWriter& w, const std::string& bdf, std::string_view old_content,
                        std::string_view content);

// The driver's checks and reaction for a write of `content` to the capture
// of `bdf` (whose old content is read from the tree): 0 or the errno. On 0
// the file is stored and the representors follow; on an errno nothing changes.
int EswitchCaptureWrite(TreeWriter& w, const std::string& bdf, std::string_view content);

// Makes the PF's representors match its captured mode and VF count (after
// a sriov_numvfs write). `pf_dir` is the PF's real directory.
Status EswitchSyncRepresentors(TreeWriter& w, const std::string& pf_dir);

// The representor name of VF `vf` of the PF whose netdev is `pf_netdev`.
std::string RepresentorName(const std::string& pf_netdev, int pf_func, int vf);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_ESWITCH_SIM_H_
