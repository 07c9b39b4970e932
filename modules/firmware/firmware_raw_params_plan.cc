// spec.nics[].firmware: raw mstconfig parameters (arrays refused, the PCI
// parameters hidden behind ADVANCED_PCI_SETTINGS planned after it).
#include "modules/firmware/firmware_plan_steps.h"

#include <cstdio>
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
namespace {

// "Array[0..7]" -> {0, 7}: how mstconfig query prints an array parameter.
std::optional<std::pair<int, int>> ArrayRange(const std::string& printed) {
  int lo = 0, hi = 0;
  char end = 0;
  if (std::sscanf(printed.c_str(), "Array[%d..%d%c", &lo, &hi, &end) != 3 || end != ']') {
    return std::nullopt;
  }
  return std::make_pair(lo, hi);
}

// firmware: { NAME[i]: v } or { NAME[i..j]: v } (the loader checked the
// syntax): mstconfig query prints an array parameter as "Array[0..7]", not
// its elements' values, so the next-boot value cannot be compared and no
// change can be planned. The error says which, naming the card.
void ArrayElementError(const FirmwareFacts& fw, const std::string& dev, const std::string& param,
                       const std::string& field, PlanSink& sink) {
  const size_t open = param.find('[');
  const std::string base = param.substr(0, open);
  int lo = 0, hi = 0;
  const std::string index = param.substr(open);
  if (std::sscanf(index.c_str(), "[%d..%d]", &lo, &hi) != 2) {
    std::sscanf(index.c_str(), "[%d]", &lo);
    hi = lo;
  }
  auto it = fw.params.find(base);
  if (it == fw.params.end()) {
    sink.Error(field, "the firmware of " + dev + " (" + DeviceType(fw) + ") has no parameter " +
                          base + " (not in its mstconfig query: see `mstconfig -d " + dev +
                          " query`)");
    return;
  }
  auto range = ArrayRange(it->second.next_boot);
  if (!range) {
    sink.Error(field, base + " of " + dev + " is not an array parameter (its query reads \"" +
                          it->second.next_boot + "\"): set it as " + base + ", without an index");
    return;
  }
  if (lo < range->first || hi > range->second) {
    sink.Error(field, param + " is outside " + base + "'s elements on " + dev + " (" +
                          it->second.next_boot + ")");
    return;
  }
  sink.Error(field, "the mstconfig query of " + dev + " prints " + base + " as " +
                        it->second.next_boot +
                        ", not its elements' values: provisioner cannot "
                        "compare " +
                        param +
                        " with the next boot and plans no change for it "
                        "(set it by hand: `mstconfig -d " +
                        dev + " -y set " + param + "=<value>`)");
}

// A parameter the query lists only once ADVANCED_PCI_SETTINGS is 1
// (MAX_ACC_OUT_READ, ...): planned after ADVANCED_PCI_SETTINGS when the nic
// asks for that too (the card's Next Boot reads 0 now), its `before` the
// value the card uses while it is hidden; else an error saying what to add.
void PlanHiddenPciParam(const FirmwareFacts& fw, const std::string& dev, const std::string& param,
                        const FirmwareSetting& setting, const NicSpec& nic,
                        const std::string& fw_path, const std::string& pf, Planned& planned,
                        PlanSink& sink) {
  const std::string field = fw_path + "." + param;
  auto adv = fw.params.find(kAdvancedPciSettings);
  if (adv == fw.params.end()) {
    sink.Error(field, "the firmware of " + dev + " (" + DeviceType(fw) + ") has neither " + param +
                          " nor " + kAdvancedPciSettings + ", which would reveal it");
    return;
  }
  auto asked = nic.firmware.find(kAdvancedPciSettings);
  const bool enabling =
      asked != nic.firmware.end() && MstconfigValueMatches("True(1)", asked->second.text);
  if (!enabling) {
    sink.Error(field, "the firmware of " + dev + " lists " + param + " only with " +
                          kAdvancedPciSettings + "=1 (it reads " + adv->second.next_boot +
                          "): add " + kAdvancedPciSettings + ": true to " + fw_path);
    return;
  }
  if (MstconfigValueMatches(adv->second.next_boot, "1")) {
    // Enabled for the next boot, and still not listed: the card lacks it.
    sink.Error(field, "the firmware of " + dev + " (" + DeviceType(fw) + ") has no parameter " +
                          param + ", not even with " + kAdvancedPciSettings + "=1");
    return;
  }
  const std::string hidden = *HiddenPciParamDefault(param);
  if (MstconfigValueMatches(hidden, setting.text)) return;  // what it is while hidden
  nlohmann::json before = hidden;
  if (auto n = MstconfigValueNumber(hidden)) {
    before =
        setting.kind == FirmwareSetting::Kind::kBool ? nlohmann::json(*n == 1) : nlohmann::json(*n);
  }
  nlohmann::json after = setting.text;
  if (setting.kind == FirmwareSetting::Kind::kBool) after = setting.text == "true";
  if (setting.kind == FirmwareSetting::Kind::kInt) after = std::stoll(setting.text);
  const std::string id = std::string(kFirmwareModule) + "/" + dev + "/" + param;
  if (!planned.asked.emplace(id, Asked{setting.text, field, nic.name, hidden}).second) return;
  Change c =
      FirmwareChange(dev, param, before, after,
                     "nic " + nic.name + " wants firmware " + param + "=" + setting.text + " (" +
                         dev + "; listed by the card only once " + kAdvancedPciSettings +
                         " is 1: set right after it; takes " + "effect after a reboot)",
                     field, nic, pf);
  c.detail["revealedBy"] = kAdvancedPciSettings;
  planned.Add(sink, std::move(c));
}

}  // namespace

// spec.nics[].firmware: every parameter on the card of each selected PF,
// compared with the Next Boot column as mstconfig reads a set.
void PlanRawFirmware(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                     Planned& planned, PlanSink& sink) {
  const std::string fw_path = path + ".firmware";
  std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
  for (const PciFunction* pf : pfs) {
    const FirmwareFacts* fw = Lookup(facts, *pf, fw_path, "configuration", sink);
    if (fw == nullptr) continue;
    const std::string dev = FirmwareDevice(pf->pci_address);
    // ADVANCED_PCI_SETTINGS first: the parameters it reveals are set after
    // it in the same apply (set, re-query, set).
    std::vector<std::pair<std::string, FirmwareSetting>> ordered(nic.firmware.begin(),
                                                                 nic.firmware.end());
    std::stable_partition(ordered.begin(), ordered.end(),
                          [](const auto& p) { return p.first == kAdvancedPciSettings; });
    for (const auto& [param, setting] : ordered) {
      if (param.find('[') != std::string::npos) {
        ArrayElementError(*fw, dev, param, fw_path + "." + param, sink);
        continue;
      }
      if (fw->params.count(param) == 0 && HiddenPciParamDefault(param)) {
        PlanHiddenPciParam(*fw, dev, param, setting, nic, fw_path, pf->pci_address, planned, sink);
        continue;
      }
      Want w;
      w.param = param;
      w.text = setting.text;
      w.field = fw_path + "." + param;
      const FirmwareSetting::Kind kind = setting.kind;
      switch (kind) {
        case FirmwareSetting::Kind::kBool:
          w.after = setting.text == "true";
          break;
        case FirmwareSetting::Kind::kInt:
          w.after = std::stoll(setting.text);
          break;
        case FirmwareSetting::Kind::kString:
          w.after = setting.text;
          break;
      }
      w.reason = "nic " + nic.name + " wants firmware " + param + "=" + setting.text + " (" + dev +
                 "; takes effect after a reboot)";
      // Shown in the user's terms when the printed value allows it.
      w.before = [kind](const std::string& printed) -> nlohmann::json {
        auto n = MstconfigValueNumber(printed);
        if (kind == FirmwareSetting::Kind::kBool && n && (*n == 0 || *n == 1)) return *n == 1;
        if (kind == FirmwareSetting::Kind::kInt && n) return *n;
        return printed;
      };
      w.show = [](const std::string& printed) { return printed; };
      w.missing = "the firmware of " + dev + " (" + DeviceType(*fw) + ") has no parameter " +
                  param + " (not in its mstconfig query: see `provisioner discover -o json` or " +
                  "`mstconfig -d " + dev + " query`)";
      PlanParam(*fw, dev, w, nic, pf->pci_address, planned, sink);
    }
  }
}

}  // namespace provisioner::firmware_plan
