// The eswitch module's pure part: planning spec.nics[].eswitchMode and the
// doctor check of VF representors (no host access).
#ifndef PROVISIONER_MODULES_ESWITCH_ESWITCH_PLANNER_H_
#define PROVISIONER_MODULES_ESWITCH_ESWITCH_PLANNER_H_

#include <optional>
#include <string>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kEswitchModule[] = "eswitch";
inline constexpr char kEswitchModeAttribute[] = "eswitchMode";

// VF index of a representor's phys_port_name "pf<N>vf<M>" (mlx5, ice);
// nullopt for any other name ("p0", "pf0", "pf0sf1", "c1pf0").
std::optional<int> RepresentorVfIndex(const std::string& phys_port_name);

// One change per selected PF whose mode differs: eswitch/<bdf>/eswitchMode,
// before the mode now, after the one asked. detail: "driver", "pfNetdev",
// and for mlx5 into switchdev "flowSteeringMode": "smfs" (when the device
// has the param and it is not smfs yet) and "hwTcOffload": true, and
// "rebindVfs": true (mlx5: the VFs are unbound and bound again around the
// change). Phase kPhaseEswitch after numVfs (mlx5 and others), or
// kPhaseEswitchBeforeVfs before it (ice, which refuses with VFs present: a
// plan error when the PF has VFs now).
void PlanEswitch(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

// Doctor: every SR-IOV PF in switchdev has one representor per VF; a PF a
// nic wants in another mode than it is.
void CheckEswitch(const DesiredState* desired, const HostFacts& facts, CheckSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ESWITCH_ESWITCH_PLANNER_H_
