// firmware/<card>/activate: the firmware reset that runs a card's new
// configuration (and burned image) without a reboot.
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
#include "modules/firmware/firmware_module.h"
#include "modules/firmware/firmware_planner.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"
#include "spdlog/spdlog.h"

namespace provisioner {

namespace {

// Every PF of the card to 0 VFs (as sriov-network-operator's MlxResetFW),
// waiting until the kernel removed them: the reset reloads the driver, which
// must not hold VFs that pods may use.
Status RemoveVfs(const Change& change, HostContext& ctx) {
  Clock& clock = ctx.clock != nullptr ? *ctx.clock : RealClock();
  if (!change.detail.is_object() || !change.detail.contains("pfs") ||
      !change.detail["pfs"].is_array()) {
    return InvalidArgumentError(change.id + ": detail.pfs (the card's PFs) missing");
  }
  for (const auto& j : change.detail["pfs"]) {
    if (!j.is_string() || !PciAddress::ParseFull(j.get<std::string>())) {
      return InvalidArgumentError(change.id + ": detail.pfs holds " + j.dump() +
                                  ", not a PCI address");
    }
    const std::string dir = "/sys/bus/pci/devices/" + j.get<std::string>();
    auto n = ctx.fs->ReadAttr(dir + "/sriov_numvfs");
    if (!n.ok() || *n == "0") continue;  // no SR-IOV, or none
    if (ctx.progress) ctx.progress->Step("0 VFs on " + j.get<std::string>() + " (had " + *n + ")");
    RETURN_IF_ERROR(ctx.fs->WriteAttr(dir + "/sriov_numvfs", "0")
                        .WithContext("remove the VFs of " + j.get<std::string>() +
                                     " before the firmware reset"));
    const auto deadline = clock.Now() + ctx.settle_timeout;
    for (;;) {
      bool any = false;
      for (const std::string& e : ListDirIfPresent(*ctx.fs, dir)) {
        any = any || e.rfind("virtfn", 0) == 0;
      }
      if (!any) break;
      if (clock.Now() >= deadline) {
        return DeadlineExceededError(j.get<std::string>() +
                                     ": VFs still present after writing 0 to sriov_numvfs");
      }
      clock.SleepFor(std::chrono::milliseconds(20));
    }
  }
  return OkStatus();
}

bool DriverName(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

// The reset method the plan chose (detail.method, sync, unbind), checked:
// the plan may come from a file, and the names go into argv and sysfs paths.
StatusOr<FirmwareResetMethod> ResetMethodOf(const Change& change) {
  const nlohmann::json& d = change.detail;
  if (!d.is_object() || !d.contains("method") || !d["method"].is_string()) {
    return InvalidArgumentError(change.id +
                                ": detail.method (how the card is reset) missing: " + "plan again");
  }
  FirmwareResetMethod m;
  const std::string name = d["method"].get<std::string>();
  for (auto k : {FirmwareResetMethod::kDriverSync, FirmwareResetMethod::kToolStopsDriver,
                 FirmwareResetMethod::kUnbindFirst}) {
    if (name == FirmwareResetMethodName(k)) m.kind = k;
  }
  if (m.kind == FirmwareResetMethod::kNone) {
    return InvalidArgumentError(change.id + ": detail.method " + d["method"].dump() +
                                " is no reset method");
  }
  if (d.contains("sync")) {
    if (!d["sync"].is_number_integer() ||
        (d["sync"] != kResetSyncTool && d["sync"] != kResetSyncDriver)) {
      return InvalidArgumentError(change.id + ": detail.sync " + d["sync"].dump() +
                                  " is not 0 or 1");
    }
    m.sync = d["sync"].get<int>();
  }
  if (m.kind == FirmwareResetMethod::kDriverSync && m.sync != kResetSyncDriver) {
    return InvalidArgumentError(change.id + ": detail.method driver-sync without sync 1");
  }
  if (d.contains("unbind")) {
    if (m.kind != FirmwareResetMethod::kUnbindFirst || !d["unbind"].is_object()) {
      return InvalidArgumentError(change.id + ": detail.unbind " + d["unbind"].dump() +
                                  " does not go with method " + name);
    }
    for (const auto& [pf, driver] : d["unbind"].items()) {
      bool of_card = false;
      if (d.contains("pfs") && d["pfs"].is_array()) {
        for (const auto& p : d["pfs"]) of_card = of_card || p == pf;
      }
      if (!of_card || !PciAddress::ParseFull(pf) || !driver.is_string() ||
          !DriverName(driver.get<std::string>())) {
        return InvalidArgumentError(change.id + ": detail.unbind holds " + pf + ": " +
                                    driver.dump() + ", not a PF of the card and its driver");
      }
      m.unbind[pf] = driver.get<std::string>();
    }
  }
  if (m.kind == FirmwareResetMethod::kUnbindFirst && m.unbind.empty()) {
    return InvalidArgumentError(change.id + ": detail.method unbind-first without detail.unbind");
  }
  return m;
}

// kUnbindFirst: each PF off its driver before `--skip_driver`, and back on
// it after the reset (also after a failed one), as mstfwreset would for the
// drivers it knows (mlxfwreset_mlnxdriver.py driverStop/driverStart).
Status UnbindPfs(const FirmwareResetMethod& m, HostContext& ctx) {
  for (const auto& [pf, driver] : m.unbind) {
    if (ctx.progress) ctx.progress->Step("unbind " + pf + " from " + driver);
    Status s = ctx.fs->WriteAttr("/sys/bus/pci/drivers/" + driver + "/unbind", pf);
    if (!s.ok()) {
      return s.WithContext("unbind " + pf + " from " + driver + " before the firmware reset");
    }
  }
  return OkStatus();
}

Status BindPfs(const FirmwareResetMethod& m, HostContext& ctx) {
  Status first;
  for (const auto& [pf, driver] : m.unbind) {
    if (ctx.progress) ctx.progress->Step("bind " + pf + " to " + driver);
    Status s = ctx.fs->WriteAttr("/sys/bus/pci/drivers/" + driver + "/bind", pf);
    if (!s.ok() && first.ok()) {
      first = s.WithContext("bind " + pf + " to " + driver + " after the firmware reset");
    }
  }
  return first;
}

}  // namespace

Status FirmwareModule::ApplyActivate(const Change& change, HostContext& ctx) {
  // The inverse (a rollback): a reset cannot be undone; the sets' own
  // rollbacks put the previous values back for the next boot.
  if (!change.after.is_object()) {
    spdlog::warn(
        "{}: a firmware reset cannot be undone; the previous values are set for the "
        "next boot by the rollback of the sets (reboot to run them)",
        change.target);
    return OkStatus();
  }
  ASSIGN_OR_RETURN(FirmwareResetMethod method, ResetMethodOf(change));
  std::unique_ptr<FirmwareTool> tool = options_.tool(*ctx.fs);
  // Checked again on the card now: the plan may come from a file.
  auto text = tool->Query(change.target);
  if (text.ok()) {
    auto q = ParseMstconfigQuery(*text);
    FirmwareFacts fw;
    if (q.ok()) fw.params = q->params;
    if (std::string dpu = BlueFieldDpuMode(fw); !dpu.empty()) {
      return FailedPreconditionError("no firmware reset of " + change.target + ": " + dpu);
    }
  }
  if (!tool->ResetAvailable()) {
    ctx.deferred_to_reboot =
        "no firmware reset of " + change.target + ": " + MstfwresetInstallHint();
    return OkStatus();
  }
  RETURN_IF_ERROR(RemoveVfs(change, ctx));
  std::string cmd;
  for (const std::string& a : FirmwareResetArgv("mstfwreset", change.target, method)) {
    cmd += (cmd.empty() ? "" : " ") + a;
  }
  RETURN_IF_ERROR(UnbindPfs(method, ctx));
  if (ctx.progress) {
    ctx.progress->Step(!tool->FromCapture() ? cmd
                                            : cmd + " (" + tool->ResetSource(change.target) + ")");
  }
  {
    std::lock_guard<std::mutex> lock(answers_mu_);
    answers_.erase(change.target);
  }
  Status reset = tool->Reset(change.target, method);
  Status bound = BindPfs(method, ctx);
  if (!bound.ok()) {
    // The PFs stay off their driver: an error the rollback cannot fix either.
    return reset.ok() ? bound : bound.WithContext(reset.message());
  }
  if (!reset.ok()) {
    // Refused or failed: the sets stay for the next boot, which runs them.
    ctx.deferred_to_reboot = "the firmware reset of " + change.target + " failed (" +
                             reset.message() + "): its changes take effect after a reboot";
    spdlog::warn("{}", ctx.deferred_to_reboot);
  }
  return OkStatus();
}

Status FirmwareModule::VerifyActivate(const Change& change, HostContext& ctx) {
  if (!change.after.is_object()) return OkStatus();  // the rollback did nothing
  ASSIGN_OR_RETURN(MstconfigQuery q, QueryForVerify(change, ctx));
  std::string differ;  // nothing to compare without a Current column (a query without -e)
  for (const auto& [name, p] : q.params) {
    if (q.has_current && p.current && !SamePrintedValue(*p.current, p.next_boot)) {
      differ += (differ.empty() ? "" : ", ") + name + " current " + *p.current + ", next boot " +
                p.next_boot;
    }
  }
  if (change.after.contains(kBurnAttribute)) {
    // A burned image: the card runs what its flash holds now.
    ASSIGN_OR_RETURN(std::string flint, options_.tool(*ctx.fs)->FlintQuery(change.target));
    ASSIGN_OR_RETURN(FlintQuery f, ParseFlintQuery(flint));
    if (!f.running.empty() && f.running != f.fw_version) {
      differ += (differ.empty() ? "" : ", ") + std::string("firmware running ") + f.running +
                ", on the flash " + f.fw_version;
    }
  }
  if (!differ.empty()) {
    return FailedPreconditionError(change.target + ": after the firmware reset the card does not " +
                                   "run its Next Boot configuration: " + differ);
  }
  return OkStatus();
}

}  // namespace provisioner
