// Module "eswitch": spec.nics[].eswitchMode, a PF's devlink E-Switch mode
// (legacy | switchdev), through a DevlinkBackend (eswitch_backend.h:
// devlink generic netlink on the live root, the capture files under a tree
// root). Apply follows the driver's order: mlx5 (phase kPhaseEswitch, after
// numVfs) sets flow_steering_mode smfs and hw-tc-offload on first, unbinds
// the PF's VFs, changes the mode, binds the VFs to their drivers again; ice
// (kPhaseEswitchBeforeVfs) changes the mode before numVfs creates VFs.
// Discovery reads the mode and finds the VF representors; doctor says when
// a switchdev PF lacks some (eswitch_planner.h).
#ifndef PROVISIONER_MODULES_ESWITCH_ESWITCH_MODULE_H_
#define PROVISIONER_MODULES_ESWITCH_ESWITCH_MODULE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "engine/module/module.h"
#include "modules/eswitch/eswitch_backend.h"

namespace provisioner {

struct EswitchModuleOptions {
  // The devlink backend for a root (NewDevlinkBackend unless a test says otherwise).
  BackendForRoot<DevlinkBackend> devlink = NewDevlinkBackend;
};

class EswitchModule final : public ModuleWithOptions<EswitchModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "eswitch"; }
  // RenderFactsJson: discover -o json: per SR-IOV NIC whose mode was read, "eswitch":
  // {"mode", "flowSteeringMode" (when known), "representors": [netdevs by VF]}.
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange, Check, RenderFactsJson);
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ESWITCH_ESWITCH_MODULE_H_
