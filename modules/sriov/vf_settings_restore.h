// A numVfs change's rollback restores the VF settings (planner.h,
// kVfSettingsAtCount): the kernel re-creates VFs with driver defaults (MTU
// 1500, no VLAN, no rate, link state auto, a random MAC, trust off, new
// GUIDs), so putting the count back is not putting the host back. What the
// planner recorded for the count the change now sets is written again and
// verified, through the vf module's host code (the same backends, netlink
// on the live root, the capture files under a tree) and the link backend
// for the VF netdevs' MTU.
#ifndef PROVISIONER_MODULES_SRIOV_VF_SETTINGS_RESTORE_H_
#define PROVISIONER_MODULES_SRIOV_VF_SETTINGS_RESTORE_H_

#include "engine/base/status.h"
#include "engine/module/module.h"
#include "engine/plan/change.h"

namespace provisioner {

// After `change` set `pf`'s count to `target`: the recorded settings, when
// the record is for `target` VFs (else nothing). The MAC and GUIDs first
// (they rebind the VF: a new netdev), then trust, spoof check, link state,
// rate, VLAN, then the netdevs' MTU.
Status RestoreVfSettings(const Change& change, int target, HostContext& ctx);
// Re-reads each recorded setting: an error names the VF, the setting, the
// value recorded and the value now.
Status VerifyVfSettings(const Change& change, int target, HostContext& ctx);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_SRIOV_VF_SETTINGS_RESTORE_H_
