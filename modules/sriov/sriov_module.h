// Module "sriov": SR-IOV facts of every PF, spec.nics[].numVfs planning
// (planner.h) and sriov_numvfs changes (sriov_host.h).
#ifndef PROVISIONER_MODULES_SRIOV_SRIOV_MODULE_H_
#define PROVISIONER_MODULES_SRIOV_SRIOV_MODULE_H_

#include <string_view>

#include "engine/module/module.h"
#include "modules/sriov/sriov_host.h"

namespace provisioner {

class SriovModule final : public ModuleWithOptions<NumVfsApplyOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "sriov"; }
  // RenderFactsJson (discover output): sriov_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange, RenderFactsJson);
  // Different PFs at once: no state here; each write and wait is on its own PF's files.
  bool ConcurrentApply() const override { return true; }
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_SRIOV_SRIOV_MODULE_H_
