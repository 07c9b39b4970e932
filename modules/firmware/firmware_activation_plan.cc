// spec.firmware.activation: reset: one `activate` change per card, after its
// changes, with the mstfwreset command that suits the card and its driver.
#include "modules/firmware/firmware_plan_steps.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/selector.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner::firmware_plan {

// spec.firmware.activation: reset: per card with firmware changes (or
// values set for the next boot and not running yet), one `activate` change
// after them, and the card's changes take effect at that reset; a card that
// cannot be reset keeps the reboot, with a warning saying why. A BlueField
// in DPU mode is an error (neither a host reboot nor a reset from the host
// reloads its firmware).
void PlanActivation(const DesiredState& desired, const HostFacts& facts, size_t from,
                    const Planned& planned, const std::set<std::string>& pending_burns,
                    PlanSink& sink) {
  const std::string field = "spec.firmware.activation";
  std::map<std::string, std::vector<size_t>> by_card;  // card -> its changes
  for (size_t i = from; i < sink.changes().size(); ++i) {
    by_card[sink.changes()[i].target].push_back(i);
  }
  // Cards with values pending (next boot set, not running) that host.yaml asks.
  for (const auto& [id, a] : planned.asked) {
    const std::string dev = id.substr(std::string(kFirmwareModule).size() + 1,
                                      id.rfind('/') - std::string(kFirmwareModule).size() - 1);
    auto it = facts.firmware.find(dev);
    if (it == facts.firmware.end() || !it->second.error.empty()) continue;
    auto p = it->second.params.find(id.substr(id.rfind('/') + 1));
    if (p != it->second.params.end() && p->second.current &&
        !SamePrintedValue(*p->second.current, p->second.next_boot)) {
      by_card[dev];
    }
  }
  for (const std::string& dev : pending_burns) by_card[dev];
  std::vector<Change> activations;
  for (const auto& [dev, indexes] : by_card) {
    auto it = facts.firmware.find(dev);
    if (it == facts.firmware.end()) continue;
    const FirmwareFacts& fw = it->second;
    if (std::string dpu = BlueFieldDpuMode(fw); !dpu.empty()) {
      sink.Error(field, "cannot activate the firmware changes of " + dev + " by a reset: " + dpu);
      continue;
    }
    std::string why = fw.reset_refused;
    if (why.empty() && !fw.reset_read) why = "its mstfwreset query was not read";
    // The card's PFs and their drivers: how the reset runs with them bound.
    nlohmann::json pfs = nlohmann::json::array();
    std::map<std::string, std::string> drivers;
    for (const PciFunction& f : facts.pci) {
      if (!f.IsVf() && f.IsNetwork() && FirmwareDevice(f.pci_address) == dev) {
        pfs.push_back(f.pci_address);
        drivers[f.pci_address] = f.driver;
      }
    }
    FirmwareResetMethod method;
    if (why.empty()) {
      auto q = ParseMstfwresetQuery(fw.reset_query);
      if (!q.ok()) {
        why = q.status().message();
      } else {
        method = ChooseFirmwareReset(*q, drivers);
        why = method.why;
      }
    }
    if (!why.empty()) {
      sink.Warning(field, dev + ": no firmware reset (" + why +
                              "): its firmware changes take effect after a reboot (apply exits 3)");
      continue;
    }
    // The values a reset activates: the planned ones, and those pending.
    nlohmann::json before = nlohmann::json::object(), after = nlohmann::json::object();
    for (const auto& [name, cur_next] : PendingParams(fw)) {
      before[name] = cur_next.first;
      after[name] = cur_next.second;
    }
    if (pending_burns.count(dev) != 0) {  // a burned image waiting to run
      before[kBurnAttribute] = fw.fw_running;
      after[kBurnAttribute] = fw.fw_version;
    }
    for (size_t i : indexes) {
      Change& c = sink.changes()[i];
      c.disruption = Disruption::kFirmwareReset;
      if (c.attribute != kNvConfigAttribute) {
        before[c.attribute] = c.before;
        after[c.attribute] = c.after;
      }
      const std::string tail = "takes effect after a reboot)";
      if (c.reason.size() > tail.size() &&
          c.reason.compare(c.reason.size() - tail.size(), tail.size(), tail) == 0) {
        c.reason = c.reason.substr(0, c.reason.size() - tail.size()) +
                   "takes effect at the firmware reset)";
      }
    }
    Change c = MakeChange(kFirmwareModule, dev, kActivateAttribute, before, after,
                          Disruption::kFirmwareReset, kPhaseFirmware,
                          "spec.firmware.activation: reset: " + FirmwareResetCommand(dev, method) +
                              " activates the firmware changes now (the VFs of " +
                              std::to_string(pfs.size()) +
                              " PF(s) go first and are made anew after it)",
                          field);
    c.detail["pfs"] = pfs;
    c.detail["level"] = kFirmwareResetLevel;
    c.detail["method"] = FirmwareResetMethodName(method.kind);
    if (method.sync) c.detail["sync"] = *method.sync;
    if (!method.unbind.empty()) c.detail["unbind"] = method.unbind;
    c.detail["command"] = FirmwareResetArgv("mstfwreset", dev, method);
    activations.push_back(std::move(c));
  }
  (void)desired;
  for (Change& c : activations) sink.AddChange(std::move(c));
}

}  // namespace provisioner::firmware_plan
