// Module "firmware": the ConnectX firmware configuration per card (mstflint
// `mstconfig`; a captured query file under a tree root), planning
// spec.nics[].linkType and the SR-IOV limits numVfs needs, and setting them
// for the next boot (disruption reboot: apply exits 3). Registered at order
// 5 (after pci); its changes run first (kPhaseFirmware, see change.h).
#ifndef PROVISIONER_MODULES_FIRMWARE_FIRMWARE_MODULE_H_
#define PROVISIONER_MODULES_FIRMWARE_FIRMWARE_MODULE_H_

#include <functional>
#include <memory>
#include <string_view>

#include "engine/module/module.h"
#include "modules/firmware/firmware_tool.h"

namespace provisioner {

struct FirmwareModuleOptions {
  // The tool for a root: by default mstconfig on the live root, the captured
  // files under a tree root. Tests inject others.
  std::function<std::unique_ptr<FirmwareTool>(HostFs&)> tool;
};

class FirmwareModule final : public Module {
 public:
  FirmwareModule() = default;
  explicit FirmwareModule(FirmwareModuleOptions options) : options_(std::move(options)) {}

  std::string_view name() const override { return "firmware"; }
  Status Discover(HostContext& ctx, HostFacts& facts) override;
  void Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const override;
  Status Apply(const Change& change, HostContext& ctx) override;
  Status Verify(const Change& change, HostContext& ctx) override;
  // doctor: firmware_doctor.cc ("ATS off with GPUDirect")
  void Check(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) const override;
  // discover output: firmware_render.cc
  void RenderFactsJson(const HostFacts& facts, FactsJson& out) const override;

 private:
  std::unique_ptr<FirmwareTool> Tool(HostFs& fs) const;
  FirmwareModuleOptions options_;
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_FIRMWARE_FIRMWARE_MODULE_H_
