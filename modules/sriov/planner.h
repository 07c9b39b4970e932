// The SR-IOV planner: spec.nics[].numVfs against the discovered PFs. Pure (no
// host access): a function of the desired state and the facts, testable from
// structs alone.
#ifndef PROVISIONER_MODULES_SRIOV_PLANNER_H_
#define PROVISIONER_MODULES_SRIOV_PLANNER_H_

#include <string>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kSriovModule[] = "sriov";
inline constexpr char kNumVfsAttribute[] = "numVfs";
// A numVfs change's detail: {"numVfs": N, "vfIndexes": [..]}, the VFs whose
// netdevs were administratively up when the PF had N VFs (before the
// change). Applying the count N again (the change's rollback) brings those
// up again and verifies them.
inline constexpr char kVfsUpAtCount[] = "vfsUpAtCount";
// A numVfs change from N > 0 VFs: {"numVfs": N, "pfNetdev": "ens6f0np0",
// "vfs": [{"index": i, "mtu", "mac", "trust", "spoofChk", "linkState",
// "rate": {"min","max"}, "vlan": {"id","qos","proto"}, "guid"}, ...]}, each
// VF's settings as discovery read them before the change (known ones only;
// "guid" for an InfiniBand PF's VFs). The kernel re-creates VFs with driver
// defaults: the change's rollback, back to N, restores these and verifies
// them (vf_settings_restore.h). In the journal with the change, so that
// `apply --rollback` after a kill -9 has them.
inline constexpr char kVfSettingsAtCount[] = "vfSettingsAtCount";

// "sriov/0000:af:00.0/numVfs"
std::string NumVfsChangeId(const std::string& pf);

// The record `key` (kVfsUpAtCount, kVfSettingsAtCount) of a numVfs change's
// detail when it was made at `target` VFs and holds the array `list`
// ("vfIndexes", "vfs"); null otherwise: another count, or a record of
// another shape (the detail comes from files too: a journal, a saved plan).
const nlohmann::json* RecordAtCount(const Change& change, const char* key, const char* list,
                                    int target);

// For every nic with numVfs: one change per selected PF whose sriov_numvfs
// differs; errors (at field paths) for selectors matching nothing, PFs without
// SR-IOV, counts above sriov_totalvfs and nics disagreeing about one PF.
void PlanNumVfs(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

// PFs that have VFs now (sriov_numvfs > 0) and that no nic of `desired`
// selects: their VFs are left as they are. Plan::unmanaged_pfs_with_vfs.
int CountUnmanagedPfsWithVfs(const DesiredState& desired, const HostFacts& facts);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_SRIOV_PLANNER_H_
