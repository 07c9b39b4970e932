// Module "firmware": the ConnectX firmware configuration per card (mstflint
// `mstconfig`; a captured query file under a tree root), planning
// spec.nics[].linkType and the SR-IOV limits numVfs needs, and setting them
// for the next boot (disruption reboot: apply exits 3). Registered at order
// 5 (after pci); its changes run first (kPhaseFirmware, see change.h).
#ifndef PROVISIONER_MODULES_FIRMWARE_FIRMWARE_MODULE_H_
#define PROVISIONER_MODULES_FIRMWARE_FIRMWARE_MODULE_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/module/module.h"
#include "modules/firmware/firmware_tool.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {

struct FirmwareModuleOptions {
  // The tool for a root: by default mstconfig on the live root, the captured
  // files under a tree root. Tests inject others.
  BackendForRoot<FirmwareTool> tool = NewFirmwareTool;
};

class FirmwareModule final : public ModuleWithOptions<FirmwareModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "firmware"; }
  // Discover (discover, doctor): every ConnectX card's configuration. For a plan
  // (HostContext::plan_for) only the card list and the running port types;
  // DiscoverForPlan then queries the cards FirmwareCardsToRead names.
  // Check: doctor: firmware_doctor.cc ("ATS off with GPUDirect")
  // RenderFactsJson (discover output): firmware_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, DiscoverForPlan, Plan, Apply, CheckChange, Check,
                               RenderFactsJson, RenderFactsTable);
  // Different cards at once: a tool (one mstconfig process) per call; the
  // answers kept per card under a mutex.
  bool ConcurrentApply() const override { return true; }

 private:
  // Reads the configuration of `cards` (listed in facts.firmware by Discover).
  void ReadCards(FirmwareTool& tool, const std::vector<std::string>& cards, HostContext& ctx,
                 HostFacts& facts);
  // `mstflint -d <card> query` of `cards` (firmware version, PSID); with
  // `sysfs_first` a card whose RDMA device reports fw_ver takes that instead
  // (on a tree only without an mstflint capture).
  void ReadFlint(FirmwareTool& tool, const std::vector<std::string>& cards, bool only_captured,
                 bool sysfs_first, HostContext& ctx, HostFacts& facts);
  // policy update: `mstflint -i <image> query` of each card's images.
  void ReadImages(FirmwareTool& tool, const std::map<std::string, std::set<std::string>>& images,
                  HostContext& ctx, HostFacts& facts);
  // firmware/<card>/burn: `mstflint -d <card> -i <image> -y burn` (the
  // rollback does nothing: a burn cannot be undone); verified by the
  // query's FW Version (the flash) reading the pinned version.
  Status ApplyBurn(const Change& change, HostContext& ctx);
  Status VerifyBurn(const Change& change, HostContext& ctx);
  // The rollback of a burn: deferred to the reboot when the flash holds an
  // image the card does not run.
  Status PendingImageAfterRollback(const Change& change, HostContext& ctx);
  // spec.firmware.activation: reset: `mstfwreset query` of `cards`.
  void ReadResetCapability(FirmwareTool& tool, const std::vector<std::string>& cards,
                           HostContext& ctx, HostFacts& facts);
  // firmware/<card>/activate: VFs to 0, mstfwreset level 3 (a failure defers
  // the card's changes to the reboot); verified by Current == Next Boot.
  Status ApplyActivate(const Change& change, HostContext& ctx);
  Status VerifyActivate(const Change& change, HostContext& ctx);
  // firmware/<card>/nvconfig: mstconfig reset (its rollback sets the values
  // it had back); verified by Next Boot == Default.
  Status ApplyNvConfig(const Change& change, HostContext& ctx);
  Status VerifyNvConfig(const Change& change, HostContext& ctx);
  // A verify's `mstconfig query` of the change's card, parsed; on the live
  // root also kept as the card's answer (what the re-discovery after apply
  // reads).
  StatusOr<MstconfigQuery> QueryForVerify(const Change& change, HostContext& ctx);
  // mstconfig's answer per card, kept for the life of the module (one
  // command: the process): a card is queried once however often discovery
  // runs (apply re-discovers); Apply's set forgets the card, Verify's query
  // is its new answer. Not for a tree's captured files: read as any file.
  std::map<std::string, StatusOr<std::string>> answers_;
  std::mutex answers_mu_;  // Apply and Verify of several cards at once
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_FIRMWARE_FIRMWARE_MODULE_H_
