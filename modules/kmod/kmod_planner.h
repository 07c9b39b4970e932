// Pure planning of spec.kernelModules (no host access).
//
// Each listed module that is not loaded gives a live change
// "kmod/<name>/loaded" (false -> true, its modules.dep dependencies in the
// detail). The modules to load at boot are kept in
// etc/modules-load.d/provisioner.conf (a file only we write): one change
// "kmod/modules-load.d/provisioner.conf" when its list differs. A module that
// is neither loaded nor in modules.dep cannot be loaded: an error naming the
// field, or with `required: false` a warning, and it is then left out of the
// file too (systemd-modules-load would fail on it at every boot).
#ifndef PROVISIONER_MODULES_KMOD_KMOD_PLANNER_H_
#define PROVISIONER_MODULES_KMOD_KMOD_PLANNER_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr char kKmodModule[] = "kmod";
inline constexpr char kKmodAttrLoaded[] = "loaded";
inline constexpr char kKmodAttrPersist[] = "modules";
inline constexpr char kKmodPersistTarget[] = "modules-load.d/provisioner.conf";

void PlanKernelModules(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

// True when `name` (any '-'/'_' spelling) is in the loaded list.
bool IsModuleLoaded(const KmodFacts& facts, const std::string& name);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_PLANNER_H_
