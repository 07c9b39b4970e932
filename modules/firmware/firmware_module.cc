#include "modules/firmware/firmware_module.h"

#include <cctype>
#include <cerrno>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/host/parallel_reads.h"
#include "engine/model/pci_address.h"
#include "engine/model/selector.h"
#include "engine/module/clock.h"
#include "engine/module/registry.h"
#include "modules/firmware/firmware_planner.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

bool IsParam(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isupper(static_cast<unsigned char>(c)) &&
        !std::isdigit(static_cast<unsigned char>(c)) && c != '_') {
      return false;
    }
  }
  return true;
}

// The target goes into mstconfig's argv and a file name as it is: a PCI
// address in the full form only.
Status CheckChangeShape(const Change& c) {
  const bool special = c.attribute == kNvConfigAttribute || c.attribute == kActivateAttribute ||
                       c.attribute == kBurnAttribute;
  if (c.module != kFirmwareModule || !PciAddress::ParseFull(c.target) ||
      (!special && !IsParam(c.attribute))) {
    return InvalidArgumentError("module firmware cannot apply " + c.id);
  }
  return OkStatus();
}

}  // namespace

void FirmwareModule::Plan(const DesiredState& desired, const HostFacts& facts,
                          PlanSink& sink) const {
  const size_t from = sink.changes().size();
  PlanFirmware(desired, facts, sink);
  // One card's settings in order; cards at once (each `mstconfig set` is
  // about a second, and takes effect at the next boot: nothing live needs it).
  for (size_t i = from; i < sink.changes().size(); ++i) {
    sink.changes()[i].resource = "card:" + sink.changes()[i].target;
  }
}

Status FirmwareModule::ApplyNvConfig(const Change& change, HostContext& ctx) {
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
  if (!tool->Available()) return FailedPreconditionError(MstconfigInstallHint());
  {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.erase(change.target);
  }
  if (change.after.is_object()) {
    // The rollback: the values before the reset back for the next boot.
    std::map<std::string, std::string> params;
    for (const auto& [name, v] : change.after.items()) {
      if (!IsParam(name)) return InvalidArgumentError(change.id + ": no parameter " + name);
      if (v.is_number_integer()) {
        params[name] = std::to_string(v.get<long long>());
      } else if (v.is_string()) {
        auto n = MstconfigValueNumber(v.get<std::string>());
        if (!n)
          return InvalidArgumentError(change.id + ": " + name + " cannot be set to " + v.dump());
        params[name] = std::to_string(*n);
      } else {
        return InvalidArgumentError(change.id + ": " + name + " cannot be set to " + v.dump());
      }
    }
    if (ctx.progress) ctx.progress->Step("mstconfig -d " + change.target + " -y set (rollback)");
    return tool->Set(change.target, params)
        .WithContext("restore the NV configuration of " + change.target);
  }
  if (ctx.progress) {
    ctx.progress->Step(!tool->FromCapture()
                           ? "mstconfig -d " + change.target + " -y reset"
                           : "next boot = defaults in " + tool->Source(change.target));
  }
  return tool->ResetNvConfig(change.target)
      .WithContext("reset the NV configuration of " + change.target);
}

StatusOr<MstconfigQuery> FirmwareModule::QueryForVerify(const Change& change, HostContext& ctx) {
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
  auto answer = tool->Query(change.target);
  if (!tool->FromCapture()) {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.insert_or_assign(change.target, answer);
  }
  ASSIGN_OR_RETURN(std::string text, std::move(answer));
  return ParseMstconfigQuery(text);
}

Status FirmwareModule::VerifyNvConfig(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(MstconfigQuery q, QueryForVerify(change, ctx));
  if (change.after.is_object()) {
    for (const auto& [name, v] : change.after.items()) {
      auto p = q.params.find(name);
      const std::string want = v.is_string() ? v.get<std::string>() : v.dump();
      if (p == q.params.end() || !SamePrintedValue(p->second.next_boot, want)) {
        return FailedPreconditionError(change.target + " " + name + " next boot is not " + want +
                                       " after the rollback");
      }
    }
    return OkStatus();
  }
  for (const auto& [name, p] : q.params) {
    if (p.read_only || !p.default_value || *p.default_value == "N/A") continue;
    if (!SamePrintedValue(*p.default_value, p.next_boot)) {
      return FailedPreconditionError(change.target + " " + name + " next boot " + p.next_boot +
                                     " is not its default " + *p.default_value +
                                     " after mstconfig reset");
    }
  }
  return OkStatus();
}

namespace {

// A burn change's image and pinned version, checked (plans may come from a
// file); `rollback` when it is the inverse (after is not the pinned version).
struct BurnOf {
  std::string image;
  std::string version;
  bool rollback = false;
};
StatusOr<BurnOf> BurnDetail(const Change& change) {
  const nlohmann::json& d = change.detail;
  if (!d.is_object() || !d.contains("image") || !d["image"].is_string() || !d.contains("version") ||
      !d["version"].is_string() || !change.after.is_string()) {
    return InvalidArgumentError(change.id + ": detail.image and detail.version (strings) missing");
  }
  BurnOf b{d["image"].get<std::string>(), d["version"].get<std::string>(), false};
  if (b.image.empty() || b.image[0] != '/' || b.image.find('\0') != std::string::npos) {
    return InvalidArgumentError(change.id + ": detail.image " + d["image"].dump() +
                                " is not an absolute host path");
  }
  b.rollback = change.after.get<std::string>() != b.version;
  return b;
}

// The rollback of a burn leaves the flash as it is: when it holds an image
// the card does not run (the burn completed, its reset or reboot did not
// happen), the change is deferred to the reboot that runs it, naming the
// card and both versions; apply then exits 3 and writes the reboot marker.
// A flash that cannot be read is said as such, and counted as pending: the
// burn may have completed.
Status DeferIfFlashPending(const Change& change, HostContext& ctx, FirmwareTool& tool) {
  auto text = tool.FlintQuery(change.target);
  if (!text.ok()) {
    ctx.deferred_to_reboot = "the flash of " + change.target + " could not be read (" +
                             text.status().message() + "): the image burned before the " +
                             "interruption may run at the next boot";
    return OkStatus();
  }
  ASSIGN_OR_RETURN(FlintQuery q, ParseFlintQuery(*text));
  if (!q.running.empty() && q.running != q.fw_version) {
    ctx.deferred_to_reboot = change.target + " carries firmware " + q.fw_version +
                             " on its flash and runs " + q.running +
                             ": the burned image runs at the next boot (a burn cannot be undone)";
  }
  return OkStatus();
}

}  // namespace

Status FirmwareModule::PendingImageAfterRollback(const Change& change, HostContext& ctx) {
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
  return DeferIfFlashPending(change, ctx, *tool);
}

Status FirmwareModule::ApplyBurn(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(BurnOf b, BurnDetail(change));
  if (b.rollback) {
    spdlog::warn(
        "{}: a firmware burn cannot be undone; {} stays on the flash of {} (burn the "
        "previous image to go back)",
        change.id, b.version, change.target);
    // What the flash holds now decides the exit: an image that is not the
    // running one runs at the next boot (issue 36.5: a kill between the burn
    // and its firmware reset left it there, and the rollback said nothing).
    return PendingImageAfterRollback(change, ctx);
  }
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
  if (!tool->FlintAvailable()) return FailedPreconditionError(MstflintInstallHint());
  // Checked again now: the plan may come from a file, the image may have
  // been replaced since.
  ASSIGN_OR_RETURN(std::string image_text, tool->FlintImageQuery(b.image));
  auto img = ParseFlintQuery(image_text);
  if (!img.ok()) return img.status().WithContext("the firmware image " + b.image);
  ASSIGN_OR_RETURN(std::string card_text, tool->FlintQuery(change.target));
  ASSIGN_OR_RETURN(FlintQuery card, ParseFlintQuery(card_text));
  if (img->psid != card.psid || img->fw_version != b.version) {
    return FailedPreconditionError("the firmware image " + b.image + " (PSID " + img->psid +
                                   ", firmware " + img->fw_version + ") is not firmware " +
                                   b.version + " for " + change.target + " (PSID " + card.psid +
                                   "): not burned");
  }
  if (ctx.progress) {
    ctx.progress->Step("mstflint -d " + change.target + " -i " + b.image + " -y burn" +
                       (tool->FromCapture() ? " (" + tool->FlintSource(change.target) + ")" : ""));
  }
  return tool->Burn(change.target, b.image).WithContext("burn " + b.image + " on " + change.target);
}

Status FirmwareModule::VerifyBurn(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(BurnOf b, BurnDetail(change));
  if (b.rollback) return OkStatus();  // nothing was done
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
  ASSIGN_OR_RETURN(std::string text, tool->FlintQuery(change.target));
  ASSIGN_OR_RETURN(FlintQuery q, ParseFlintQuery(text));
  if (q.fw_version != b.version) {
    return FailedPreconditionError(change.target + ": after the burn the flash holds firmware " +
                                   q.fw_version + ", not " + b.version);
  }
  return OkStatus();
}

Status FirmwareModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  if (change.attribute == kBurnAttribute) return ApplyBurn(change, ctx);
  if (change.attribute == kActivateAttribute) return ApplyActivate(change, ctx);
  if (change.attribute == kNvConfigAttribute) return ApplyNvConfig(change, ctx);
  ASSIGN_OR_RETURN(std::string value, FirmwareSetText(change));
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
  if (!tool->Available()) return FailedPreconditionError(MstconfigInstallHint());
  const std::string set = change.attribute + "=" + value;
  if (ctx.progress) {
    ctx.progress->Step(!tool->FromCapture()
                           ? "mstconfig -d " + change.target + " -y set " + set
                           : "next boot " + set + " in " + tool->Source(change.target));
  }
  // The card changes (or may have): its next query asks it again.
  {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.erase(change.target);
  }
  return tool->Set(change.target, {{change.attribute, value}})
      .WithContext("set firmware " + set + " on " + change.target);
}

Status FirmwareModule::CheckChange(const Change& change) const { return CheckChangeShape(change); }

Status FirmwareModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  if (change.attribute == kBurnAttribute) return VerifyBurn(change, ctx);
  if (change.attribute == kActivateAttribute) return VerifyActivate(change, ctx);
  if (change.attribute == kNvConfigAttribute) return VerifyNvConfig(change, ctx);
  ASSIGN_OR_RETURN(std::string value, FirmwareSetText(change));
  ASSIGN_OR_RETURN(MstconfigQuery q, QueryForVerify(change, ctx));
  auto it = q.params.find(change.attribute);
  if (it == q.params.end()) {
    return FailedPreconditionError(change.target + ": " + change.attribute +
                                   " missing from the query after the set");
  }
  if (!MstconfigValueMatches(it->second.next_boot, value)) {
    return FailedPreconditionError(
        (change.field_path.empty() ? change.id : change.field_path) + ": " + change.target + " " +
        change.attribute + " next boot: desired " + value + ", current " + it->second.next_boot);
  }
  return OkStatus();
}

PROVISIONER_REGISTER_MODULE("firmware", FirmwareModule, "pci")

}  // namespace provisioner
