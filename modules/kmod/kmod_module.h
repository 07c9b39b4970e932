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
  // Needs facts.kernel.release (pci module) for lib/modules/<release>.
  Status Discover(HostContext& ctx, HostFacts& facts) override;
  void Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const override;
  Status Apply(const Change& change, HostContext& ctx) override;
  Status Verify(const Change& change, HostContext& ctx) override;
  // discover output: kmod_render.cc
  void RenderFactsJson(const HostFacts& facts, FactsJson& out) const override;
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_MODULE_H_
