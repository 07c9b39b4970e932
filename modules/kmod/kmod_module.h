// Module "kmod": kernel modules (spec.kernelModules). Discovery through
// libkmod and HostFs (kmod_host.h), pure planning (kmod_planner.h), apply
// loads the missing modules and writes etc/modules-load.d/provisioner.conf.
#ifndef PROVISIONER_MODULES_KMOD_KMOD_MODULE_H_
#define PROVISIONER_MODULES_KMOD_KMOD_MODULE_H_

#include <string_view>

#include "engine/module/module.h"

namespace provisioner {

class KmodModule final : public Module {
 public:
  std::string_view name() const override { return "kmod"; }
  // Discover needs facts.kernel.release (pci module) for lib/modules/<release>.
  // RenderFactsJson (discover output): kmod_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, RenderFactsJson);
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_MODULE_H_
