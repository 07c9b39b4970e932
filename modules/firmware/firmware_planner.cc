#include "modules/firmware/firmware_planner.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "engine/model/selector.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {
namespace {

// The firmware facts of `pf`'s card, or an error message for `field`.
const FirmwareFacts* Lookup(const HostFacts& facts, const PciFunction& pf, const std::string& field,
                            const std::string& what, PlanSink& sink) {
  const std::string dev = FirmwareDevice(pf.pci_address);
  auto it = facts.firmware.find(dev);
  if (it == facts.firmware.end()) {
    sink.Error(field, pf.pci_address + " (vendor " + pf.vendor +
                          ") is not an NVIDIA/Mellanox ConnectX: no firmware " + what +
                          " to set with mstconfig");
    return nullptr;
  }
  const FirmwareFacts& fw = it->second;
  if (fw.unread) {
    // FirmwareCardsToRead and this planner disagree: a bug, said as one.
    sink.Error(field, "internal error: the firmware configuration of " + dev +
                          " was not read for this plan (FirmwareCardsToRead)");
    return nullptr;
  }
  if (fw.tool_missing) {
    sink.Error(field, "cannot read or set the firmware " + what + " of " + dev + ": " + fw.error);
    return nullptr;
  }
  if (!fw.error.empty()) {
    sink.Error(field, "cannot read the firmware configuration of " + dev + ": " + fw.error);
    return nullptr;
  }
  return &fw;
}

// True when the firmware cannot be read but the port already runs `type`:
// nothing to change, so nothing to fail (the next-boot value stays unchecked).
bool RunningMatches(const HostFacts& facts, const PciFunction& pf, const std::string& type) {
  auto it = facts.firmware.find(FirmwareDevice(pf.pci_address));
  if (it == facts.firmware.end() || it->second.error.empty()) return false;
  auto port = it->second.running_link_types.find(FirmwarePort(pf.pci_address));
  return port != it->second.running_link_types.end() && port->second == type;
}

Change FirmwareChange(const std::string& dev, const std::string& param, nlohmann::json before,
                      nlohmann::json after, std::string reason, const std::string& field,
                      const NicSpec& nic, const std::string& pf) {
  // Reboot: the firmware reads its NVconfig at boot.
  Change c = MakeChange(kFirmwareModule, dev, param, std::move(before), std::move(after),
                        Disruption::kReboot, kPhaseFirmware, std::move(reason), field);
  c.detail["nic"] = nic.name;
  c.detail["pf"] = pf;
  return c;
}

// What one nic asks of one parameter of one card. linkType and
// firmware: { PARAM: value } both come here; they differ in how values
// read (linkType shows "ib"/"eth", raw parameters as written) and in their
// messages.
struct Want {
  std::string param;  // "LINK_TYPE_P1", "ATS_ENABLED"
  std::string text;   // compared with the printed value: "2", "true", "ETH"
  nlohmann::json after;
  std::string field;  // "spec.nics[0].linkType", "spec.nics[0].firmware.ATS_ENABLED"
  std::string reason;
  // The plan's `before` from the printed next-boot value, and how a printed
  // value reads in a warning.
  std::function<nlohmann::json(const std::string&)> before;
  std::function<std::string(const std::string&)> show;
  // The error when the card's query has no such parameter.
  std::string missing;
};

struct Asked {
  std::string text;
  std::string field;
  std::string nic;
  std::string printed;  // next boot when asked, for comparing two asks
};

struct Planned {
  std::set<std::string> ids;
  // Per change id, the first nic that asked for its value.
  std::map<std::string, Asked> asked;
  void Add(PlanSink& sink, Change c) {
    if (ids.insert(c.id).second) sink.AddChange(std::move(c));
  }
};

// Whether two asks of one parameter mean the same value.
bool SameValue(const std::string& param, const std::string& printed, const std::string& a,
               const std::string& b) {
  auto na = ResolveMstconfigValue(param, printed, a);
  auto nb = ResolveMstconfigValue(param, printed, b);
  if (na && nb) return *na == *nb;
  return MstconfigValueMatches(a, b);
}

// One parameter of `fw` (card `dev`) as `w` wants it for the next boot: no
// change when the Next Boot column already reads it (a warning when Current
// does not: the reboot is pending), else a reboot change. Two nics on one
// card asking different values is an error naming both.
void PlanParam(const FirmwareFacts& fw, const std::string& dev, const Want& w, const NicSpec& nic,
               const std::string& pf, Planned& planned, PlanSink& sink) {
  auto it = fw.params.find(w.param);
  if (it == fw.params.end()) {
    sink.Error(w.field, w.missing);
    return;
  }
  const FirmwareParam& p = it->second;
  const std::string id = std::string(kFirmwareModule) + "/" + dev + "/" + w.param;
  auto [first, inserted] = planned.asked.emplace(id, Asked{w.text, w.field, nic.name, p.next_boot});
  if (!inserted) {
    const Asked& a = first->second;
    if (!SameValue(w.param, a.printed, a.text, w.text)) {
      sink.Error(w.field, "nic " + nic.name + " wants " + w.param + "=" + w.text + " on card " +
                              dev + ", but nic " + a.nic + " (" + a.field + ") wants " + w.param +
                              "=" + a.text + ": one card has one value");
    }
    return;
  }
  if (MstconfigValueMatches(p.next_boot, w.text)) {
    if (p.current && !MstconfigValueMatches(*p.current, w.text)) {
      // Set, pending a reboot (or mstfwreset): plan shows it as pending.
      Change c = FirmwareChange(dev, w.param, w.before(*p.current), w.after,
                                w.show(p.next_boot) + " for the next boot, " +
                                    w.show(*p.current) + " now: reboot (or mstfwreset) to apply it",
                                w.field, nic, pf);
      sink.SetForNextBoot(std::move(c));
    }
    return;
  }
  if (p.read_only) {
    sink.Error(w.field, dev + " " + w.param + " is read-only (mstconfig marks it RO): it reads " +
                            w.show(p.next_boot) + " and cannot be set to " + w.text);
    return;
  }
  planned.Add(sink, FirmwareChange(dev, w.param, w.before(p.next_boot), w.after, w.reason, w.field,
                                   nic, pf));
}

std::string DeviceType(const FirmwareFacts& fw) {
  return fw.device_type.empty() ? "unknown type" : fw.device_type;
}

void PlanLinkType(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                  Planned& planned, PlanSink& sink) {
  const std::string field = path + ".linkType";
  auto want = LinkTypeValue(*nic.link_type);
  if (!want) {
    sink.Error(field, "must be eth or ib, not " + *nic.link_type);
    return;
  }
  std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
  // A selector matching nothing: reported once, by the pci module.
  for (const PciFunction* pf : pfs) {
    if (RunningMatches(facts, *pf, *nic.link_type)) continue;
    const FirmwareFacts* fw = Lookup(facts, *pf, field, "link type", sink);
    if (fw == nullptr) continue;
    const std::string dev = FirmwareDevice(pf->pci_address);
    const std::string param = "LINK_TYPE_P" + std::to_string(FirmwarePort(pf->pci_address));
    auto it = fw->params.find(param);
    if (it != fw->params.end() && !MstconfigValueNumber(it->second.next_boot)) {
      sink.Error(field,
                 dev + " " + param + " reads \"" + it->second.next_boot + "\", not a number");
      continue;
    }
    Want w;
    w.param = param;
    w.text = std::to_string(*want);
    w.after = *nic.link_type;
    w.field = field;
    w.reason = "nic " + nic.name + " wants linkType " + *nic.link_type + " (port " +
               param.substr(11) + " of " + dev + "; takes effect after a reboot)";
    w.before = [](const std::string& printed) -> nlohmann::json {
      return LinkTypeName(MstconfigValueNumber(printed).value_or(0));
    };
    w.show = [](const std::string& printed) {
      auto n = MstconfigValueNumber(printed);
      return n ? LinkTypeName(*n) : printed;
    };
    w.missing = "the firmware of " + dev + " (" + DeviceType(*fw) + ") has no " + param +
                ": its port type is fixed (not a VPI card)";
    PlanParam(*fw, dev, w, nic, pf->pci_address, planned, sink);
  }
}

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

// What a nic's roce settings need of the firmware of one PF: the driver
// settings that are missing (NVIDIA's out-of-tree mlx5 has ecn/roce_np/...,
// the upstream driver no ecn/ directory at all). Nothing when the roce facts
// of its netdev were not read or failed: the roce planner says so.
struct RoceFirmwareNeeds {
  std::string ifname;
  bool ecn = false;       // ROCE_CC_PRIO_MASK_P<n>
  bool cnp_dscp = false;  // CNP_DSCP_P<n>
  bool cnp_prio = false;  // CNP_802P_PRIO_P<n>
  bool Any() const { return ecn || cnp_dscp || cnp_prio; }
};

RoceFirmwareNeeds RoceNeeds(const NicSpec& nic, const PciFunction& pf, const HostFacts& facts) {
  RoceFirmwareNeeds n;
  if (!nic.roce || pf.netdevs.empty()) return n;
  auto it = facts.roce.netdevs.find(pf.netdevs.front());
  if (it == facts.roce.netdevs.end() || !it->second.ecn_error.empty()) return n;
  const RoceNetdevFacts& f = it->second;
  n.ifname = it->first;
  n.ecn = nic.roce->ecn && !nic.roce->ecn->empty() && !f.ecn_dir;
  if (nic.roce->cnp) {
    n.cnp_dscp = nic.roce->cnp->dscp && !f.cnp_dscp;
    n.cnp_prio = nic.roce->cnp->priority && !f.cnp_802p_prio;
  }
  return n;
}

// A numeric parameter's Want: before/after numbers.
Want NumberWant(const std::string& param, long value, const std::string& field, std::string reason,
                std::string missing) {
  Want w;
  w.param = param;
  w.text = std::to_string(value);
  w.after = value;
  w.field = field;
  w.reason = std::move(reason);
  w.before = [](const std::string& printed) -> nlohmann::json {
    auto n = MstconfigValueNumber(printed);
    if (n) return *n;
    return printed;
  };
  w.show = [](const std::string& printed) { return printed; };
  w.missing = std::move(missing);
  return w;
}

// roce.ecn / roce.cnp where the driver has no runtime setting for them:
// ROCE_CC_PRIO_MASK_P<n> (a bitmask of the priorities with RoCE congestion
// control; the wanted ones are added, the others kept, as the runtime ECN
// is), CNP_DSCP_P<n> (with CNP_DSCP_MODE_P<n> FIXED_VALUE(1) where the card
// has it: "DSCP is taken from CNP_DSCP") and CNP_802P_PRIO_P<n>. Names and
// widths from mstflint's mlxconfig_host.db (nv_roce_cc, nv_roce_cc_ecn).
void PlanRoceFirmware(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                      Planned& planned, PlanSink& sink) {
  for (const PciFunction* pf : SelectPfs(nic, facts)) {
    const RoceFirmwareNeeds need = RoceNeeds(nic, *pf, facts);
    if (!need.Any()) continue;
    const std::string field = path + (need.ecn ? ".roce.ecn" : ".roce.cnp");
    const std::string dev = FirmwareDevice(pf->pci_address);
    if (auto it = facts.firmware.find(dev); it != facts.firmware.end() && !it->second.unread &&
                                            !it->second.tool_missing && !it->second.error.empty()) {
      sink.Error(field, need.ifname + " has no ECN settings in sysfs (/sys/class/net/" +
                            need.ifname + "/ecn" + (need.ecn ? "" : "/roce_np/cnp_*") +
                            ": NVIDIA's out-of-tree mlx5 has them, the upstream driver not), " +
                            "so they are set in the firmware of " + dev +
                            ", which cannot be read: " + it->second.error);
      continue;
    }
    const FirmwareFacts* fw = Lookup(
        facts, *pf, field,
        "RoCE congestion control (" + need.ifname + " has no ecn/ " + "settings in sysfs)", sink);
    if (fw == nullptr) continue;
    const std::string port = "_P" + std::to_string(FirmwarePort(pf->pci_address));
    const std::string why = " (" + need.ifname + " has no /sys/class/net/" + need.ifname + "/ecn" +
                            (need.ecn ? "" : "/roce_np/cnp_*") +
                            ", as with the upstream mlx5 driver: set in the firmware of " + dev +
                            ", takes effect after a reboot)";
    auto missing = [&](const std::string& param) {
      return "the firmware of " + dev + " (" + DeviceType(*fw) + ") has no " + param + " and " +
             need.ifname + " no runtime setting for it" + why;
    };
    if (need.ecn) {
      const std::string param = "ROCE_CC_PRIO_MASK" + port;
      long mask = 0;
      for (int p : *nic.roce->ecn) mask |= 1L << p;
      auto it = fw->params.find(param);
      if (it != fw->params.end()) {
        auto now = MstconfigValueNumber(it->second.next_boot);
        if (!now) {
          sink.Error(path + ".roce.ecn",
                     dev + " " + param + " reads \"" + it->second.next_boot + "\", not a number");
          continue;
        }
        mask |= *now;
      }
      PlanParam(*fw, dev,
                NumberWant(param, mask, path + ".roce.ecn",
                           "nic " + nic.name + " wants ECN on priorities " +
                               nlohmann::json(*nic.roce->ecn).dump() + why,
                           missing(param)),
                nic, pf->pci_address, planned, sink);
    }
    if (need.cnp_dscp) {
      const std::string field_dscp = path + ".roce.cnp.dscp";
      const std::string mode = "CNP_DSCP_MODE" + port;
      if (fw->params.count(mode) != 0) {
        PlanParam(*fw, dev,
                  NumberWant(mode, 1, field_dscp,
                             "nic " + nic.name + " sets the CNP DSCP: FIXED_VALUE(1) takes it " +
                                 "from CNP_DSCP" + port + why,
                             missing(mode)),
                  nic, pf->pci_address, planned, sink);
      }
      const std::string param = "CNP_DSCP" + port;
      PlanParam(*fw, dev,
                NumberWant(param, *nic.roce->cnp->dscp, field_dscp,
                           "nic " + nic.name + " wants CNP DSCP " +
                               std::to_string(*nic.roce->cnp->dscp) + why,
                           missing(param)),
                nic, pf->pci_address, planned, sink);
    }
    if (need.cnp_prio) {
      const std::string param = "CNP_802P_PRIO" + port;
      PlanParam(*fw, dev,
                NumberWant(param, *nic.roce->cnp->priority, path + ".roce.cnp.priority",
                           "nic " + nic.name + " wants CNP 802.1p priority " +
                               std::to_string(*nic.roce->cnp->priority) + why,
                           missing(param)),
                nic, pf->pci_address, planned, sink);
    }
  }
}

// True, with the error, when `p` would need a change but is read-only.
bool ReadOnly(const FirmwareParam& p, const std::string& dev, const std::string& name,
              const std::string& field, PlanSink& sink) {
  if (!p.read_only) return false;
  sink.Error(field, dev + " " + name + " is read-only (mstconfig marks it RO): it reads " +
                        p.next_boot + " and cannot be raised");
  return true;
}

// numVfs above what the firmware enables: SRIOV_EN=1, NUM_OF_VFS >= numVfs.
// Only for cards whose configuration could be read; otherwise the sriov
// planner's error about sriov_totalvfs stands.
void PlanVfLimit(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                 Planned& planned, PlanSink& sink) {
  const int want = *nic.num_vfs;
  const std::string field = path + ".numVfs";
  for (const PciFunction* pf : SelectPfs(nic, facts)) {
    auto it = facts.firmware.find(FirmwareDevice(pf->pci_address));
    if (it == facts.firmware.end() || !it->second.error.empty()) continue;
    const FirmwareFacts& fw = it->second;
    const std::string dev = it->first;
    if (auto en = fw.params.find("SRIOV_EN"); en != fw.params.end()) {
      auto next = MstconfigValueNumber(en->second.next_boot);
      if (next && *next == 0 && !ReadOnly(en->second, dev, "SRIOV_EN", field, sink)) {
        planned.Add(sink, FirmwareChange(dev, "SRIOV_EN", false, true,
                                         "nic " + nic.name + " wants " + std::to_string(want) +
                                             " VFs: the firmware of " + dev +
                                             " has SR-IOV off (takes effect after a reboot)",
                                         field, nic, pf->pci_address));
      }
    }
    if (auto n = fw.params.find("NUM_OF_VFS"); n != fw.params.end()) {
      auto next = MstconfigValueNumber(n->second.next_boot);
      if (next && *next < want && !ReadOnly(n->second, dev, "NUM_OF_VFS", field, sink)) {
        planned.Add(sink,
                    FirmwareChange(dev, "NUM_OF_VFS", *next, want,
                                   "nic " + nic.name + " wants " + std::to_string(want) +
                                       " VFs: the firmware of " + dev + " enables " +
                                       std::to_string(*next) + " (takes effect after a reboot)",
                                   field, nic, pf->pci_address));
      }
    }
  }
}

void PlanSettings(const DesiredState& desired, const HostFacts& facts, Planned& planned,
                  PlanSink& sink) {
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    const std::string path = DesiredState::NicPath(i);
    // A selector matching nothing is reported by the modules that need PFs
    // (sriov); the firmware planner has nothing to add then.
    if (nic.link_type) PlanLinkType(nic, path, facts, planned, sink);
    if (!nic.firmware.empty()) PlanRawFirmware(nic, path, facts, planned, sink);
    if (nic.num_vfs && *nic.num_vfs > 0) PlanVfLimit(nic, path, facts, planned, sink);
    if (nic.roce) PlanRoceFirmware(nic, path, facts, planned, sink);
  }
}

// A card a nic's firmwareReset asks for, with the first nic's field.
struct NvResetCard {
  std::string field;
  std::string nic;
  std::string pf;
};

// The cards of the nics with firmwareReset: true (readable ones; the others
// are errors).
std::map<std::string, NvResetCard> NvResetCards(const DesiredState& desired, const HostFacts& facts,
                                                PlanSink& sink) {
  std::map<std::string, NvResetCard> cards;
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.firmware_reset) continue;
    const std::string field = DesiredState::NicPath(i) + ".firmwareReset";
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      const FirmwareFacts* fw = Lookup(facts, *pf, field, "configuration", sink);
      if (fw == nullptr) continue;
      cards.emplace(FirmwareDevice(pf->pci_address), NvResetCard{field, nic.name, pf->pci_address});
    }
  }
  return cards;
}

// What a reset to defaults would change on `fw`: the parameters (not
// read-only, with a Default) whose Next Boot is not their Default, except
// those host.yaml asks to be at that Next Boot value. Name -> next boot.
std::map<std::string, std::string> NvResetWouldChange(const FirmwareFacts& fw,
                                                      const std::string& dev,
                                                      const Planned& asked) {
  std::map<std::string, std::string> out;
  for (const auto& [name, p] : fw.params) {
    if (p.read_only || !p.default_value || *p.default_value == "N/A") continue;
    if (SamePrintedValue(*p.default_value, p.next_boot)) continue;
    auto a = asked.asked.find(std::string(kFirmwareModule) + "/" + dev + "/" + name);
    if (a != asked.asked.end() && MstconfigValueMatches(p.next_boot, a->second.text)) continue;
    out[name] = p.next_boot;
  }
  return out;
}

void CopyInto(PlanSink& from, PlanSink& to) {
  for (Change& c : from.changes()) to.AddChange(std::move(c));
  for (Change& c : from.set_for_next_boot()) to.SetForNextBoot(std::move(c));
  for (const Diagnostic& d : from.diagnostics()) {
    if (d.severity == Severity::kError) {
      to.Error(d.path, d.message);
    } else {
      to.Warning(d.path, d.message);
    }
  }
}

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
    nlohmann::json pfs = nlohmann::json::array();
    for (const PciFunction& f : facts.pci) {
      if (!f.IsVf() && f.IsNetwork() && FirmwareDevice(f.pci_address) == dev) {
        pfs.push_back(f.pci_address);
      }
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
                          "spec.firmware.activation: reset: mstfwreset -d " + dev +
                              " -y --skip_driver -l 3 reset activates the firmware changes now " +
                              "(the VFs of " + std::to_string(pfs.size()) +
                              " PF(s) go first and are made anew after it)",
                          field);
    c.detail["pfs"] = pfs;
    c.detail["level"] = kFirmwareResetLevel;
    activations.push_back(std::move(c));
  }
  (void)desired;
  for (Change& c : activations) sink.AddChange(std::move(c));
}

// nics[].firmwareVersion: the running version of each selected card
// (mstflint's FW Version(Running) while a burned image waits, else FW
// Version) must be the pinned one. policy validate: else a plan error naming
// both and the card's PSID (the image to burn must be built for it). policy
// update: a burn of the image, checked first (its PSID the card's, its
// version the pinned one); a card whose flash already holds the pinned
// version (burned, not running) needs its activation only: `pending` gets
// it (a reset, or a warning that the reboot is pending).
void PlanFirmwareVersions(const DesiredState& desired, const HostFacts& facts, PlanSink& sink,
                          std::set<std::string>& pending) {
  const bool by_reset = desired.firmware && desired.firmware->activation == "reset";
  std::map<std::string, std::string> pinned;  // card -> the first nic's version
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.firmware_version) continue;
    const FirmwareVersionSpec& pin = *nic.firmware_version;
    const std::string field = DesiredState::NicPath(i) + ".firmwareVersion.version";
    std::set<std::string> seen;
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      const std::string dev = FirmwareDevice(pf->pci_address);
      if (!seen.insert(dev).second) continue;
      auto it = facts.firmware.find(dev);
      if (it == facts.firmware.end()) {
        sink.Error(field, pf->pci_address + " (vendor " + pf->vendor +
                              ") is not an NVIDIA/Mellanox ConnectX: no firmware version to check");
        continue;
      }
      if (auto [p, fresh] = pinned.emplace(dev, pin.version); !fresh && p->second != pin.version) {
        sink.Error(field, "nic " + nic.name + " pins firmware " + pin.version + " on " + dev +
                              ", which another nic pins to " + p->second);
        continue;
      }
      const FirmwareFacts& fw = it->second;
      if (!fw.flint_error.empty() || !fw.flint_read) {
        sink.Error(field, "cannot read the firmware version of " + dev + " (mstflint -d " + dev +
                              " query): " + (fw.flint_error.empty() ? "not read" : fw.flint_error));
        continue;
      }
      const std::string psid = fw.psid.empty() ? "unknown" : fw.psid;
      const std::string running = fw.fw_running.empty() ? fw.fw_version : fw.fw_running;
      if (running == pin.version) continue;
      const std::string image = pin.image.value_or("<image>");
      const std::string burn = "mstflint -d " + dev + " -i " + image + " -y burn";
      if (pin.policy != "update") {
        std::string msg = dev + " (PSID " + psid + ") runs firmware " + running;
        if (!fw.fw_running.empty()) msg += " (" + fw.fw_version + " burned, not running yet)";
        msg += ", but nic " + nic.name + " pins " + pin.version +
               " (policy validate): burn an image of that version built for PSID " +
               (fw.psid.empty() ? "<psid>" : fw.psid) + " (" + burn +
               "), then reset the firmware or reboot";
        sink.Error(field, msg);
        continue;
      }
      if (fw.fw_version == pin.version) {
        // Burned already (an earlier apply): the activation is what is left.
        if (by_reset) {
          pending.insert(dev);
        } else {
          sink.Warning(field, dev + " has firmware " + pin.version + " on its flash but runs " +
                                  running + ": a reboot is pending (or set spec.firmware." +
                                  "activation: reset)");
        }
        continue;
      }
      const std::string image_field = DesiredState::NicPath(i) + ".firmwareVersion.image";
      if (!pin.image) {
        sink.Error(image_field,
                   dev + " runs firmware " + running + ", nic " + nic.name + " pins " +
                       pin.version +
                       ": policy update needs the image to burn (firmwareVersion.image)");
        continue;
      }
      auto img = fw.images.find(*pin.image);
      if (img == fw.images.end()) {
        sink.Error(image_field, "internal error: the firmware image " + *pin.image +
                                    " was not read for this plan");
        continue;
      }
      if (!img->second.error.empty()) {
        sink.Error(image_field, img->second.error);
        continue;
      }
      if (img->second.psid != fw.psid) {
        sink.Error(image_field, "the firmware image " + *pin.image + " is built for PSID " +
                                    (img->second.psid.empty() ? "<none>" : img->second.psid) +
                                    ", but " + dev + " is " + psid +
                                    " (mstflint refuses another PSID): use the image for " + psid);
        continue;
      }
      if (img->second.fw_version != pin.version) {
        sink.Error(image_field, "the firmware image " + *pin.image + " holds firmware " +
                                    img->second.fw_version + ", but nic " + nic.name + " pins " +
                                    pin.version);
        continue;
      }
      Change c = MakeChange(kFirmwareModule, dev, kBurnAttribute, running, pin.version,
                            Disruption::kReboot, kPhaseFirmware,
                            "nic " + nic.name + " pins firmware " + pin.version +
                                " (policy update): " + burn + " (PSID " + psid +
                                "; not reversible: a rollback leaves the burned image; " +
                                "takes effect after a reboot)",
                            DesiredState::NicPath(i) + ".firmwareVersion");
      c.detail["nic"] = nic.name;
      c.detail["pf"] = pf->pci_address;
      c.detail["image"] = *pin.image;
      c.detail["psid"] = fw.psid;
      c.detail["version"] = pin.version;
      c.detail["inverse"] = "none";
      sink.Warning(c.field_path, c.id + " burns " + *pin.image +
                                     " and cannot be undone: a rollback of this apply leaves " +
                                     pin.version + " on the flash of " + dev);
      sink.AddChange(std::move(c));
    }
  }
}

}  // namespace

void PlanFirmware(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  const size_t from = sink.changes().size();
  // The burns first: the sets after them land in the new firmware's
  // configuration (mstflint keeps the NV configuration across a burn).
  std::set<std::string> pending_burns;
  PlanFirmwareVersions(desired, facts, sink, pending_burns);
  Planned planned;
  PlanSink first;
  PlanSettings(desired, facts, planned, first);
  // firmwareReset: the cards whose reset to defaults changes something are
  // planned again as they will read after it (Next Boot = Default), the
  // reset first.
  std::map<std::string, NvResetCard> nv_cards = NvResetCards(desired, facts, sink);
  std::vector<Change> nv_resets;
  HostFacts reset_facts;
  for (const auto& [dev, card] : nv_cards) {
    const FirmwareFacts& fw = facts.firmware.at(dev);
    if (!fw.params.empty() && fw.params.begin()->second.default_value == std::nullopt) {
      sink.Error(card.field, "the mstconfig query of " + dev +
                                 " has no Default column (query with -e): the defaults a reset " +
                                 "restores are unknown");
      continue;
    }
    std::map<std::string, std::string> would = NvResetWouldChange(fw, dev, planned);
    if (would.empty()) continue;
    nlohmann::json before = nlohmann::json::object();
    for (const auto& [name, next] : would) {
      auto n = MstconfigValueNumber(next);
      before[name] = n ? nlohmann::json(*n) : nlohmann::json(next);
    }
    Change c = MakeChange(kFirmwareModule, dev, kNvConfigAttribute, before, "defaults",
                          Disruption::kReboot, kPhaseFirmware,
                          "nic " + card.nic + " wants the NV configuration of " + dev +
                              " reset to its defaults (mstconfig -d " + dev + " -y reset; " +
                              std::to_string(would.size()) +
                              " parameter(s) differ; takes effect after a reboot)",
                          card.field);
    c.detail["nic"] = card.nic;
    c.detail["pf"] = card.pf;
    nv_resets.push_back(std::move(c));
    if (reset_facts.firmware.empty()) reset_facts = facts;
    for (auto& [name, p] : reset_facts.firmware[dev].params) {
      if (!p.read_only && p.default_value && *p.default_value != "N/A") {
        p.next_boot = *p.default_value;
      }
    }
  }
  if (nv_resets.empty()) {
    CopyInto(first, sink);
  } else {
    planned = Planned();
    PlanSink again;
    PlanSettings(desired, reset_facts, planned, again);
    for (Change& c : nv_resets) sink.AddChange(std::move(c));
    CopyInto(again, sink);
  }
  if (desired.firmware && desired.firmware->activation == "reset") {
    PlanActivation(desired, facts, from, planned, pending_burns, sink);
  }
}

std::set<std::string> FirmwareCardsToRead(const DesiredState& desired, const HostFacts& facts) {
  std::set<std::string> cards;
  for (const NicSpec& nic : desired.nics) {
    // A burn activated by a reset reads the card's configuration too: the
    // reset refuses a BlueField in DPU mode and is verified by it.
    const bool burn_by_reset = nic.firmware_version && nic.firmware_version->policy == "update" &&
                               desired.firmware && desired.firmware->activation == "reset";
    const bool asks = nic.link_type || !nic.firmware.empty() || nic.firmware_reset || burn_by_reset;
    const int vfs = nic.num_vfs.value_or(0);
    if (!asks && vfs <= 0 && !nic.roce) continue;
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      // As PlanVfLimit and the sriov planner's FirmwareRaisesLimit read it.
      const bool above_kernel = vfs > 0 && (!pf->sriov || vfs > pf->sriov->total_vfs);
      if (asks || above_kernel || RoceNeeds(nic, *pf, facts).Any()) {
        cards.insert(FirmwareDevice(pf->pci_address));
      }
    }
  }
  return cards;
}

StatusOr<long> FirmwareValue(const Change& change) {
  const nlohmann::json& a = change.after;
  if (change.attribute.rfind("LINK_TYPE_P", 0) == 0 && a.is_string()) {
    const std::string s = a.get<std::string>();
    if (auto v = LinkTypeValue(s)) return *v;
    if (s == "vpi") return 3;
  } else if (change.attribute == "NUM_OF_VFS") {
    if (a.is_number_integer() && a.get<long long>() >= 0 && a.get<long long>() <= 65535) {
      return static_cast<long>(a.get<long long>());
    }
  } else if (a.is_boolean()) {
    return a.get<bool>() ? 1 : 0;
  } else if (a.is_number_integer() && a.get<long long>() >= 0 &&
             a.get<long long>() <= 0xffffffffLL) {
    return static_cast<long>(a.get<long long>());
  }
  return InvalidArgumentError(change.id + ": firmware parameter " + change.attribute +
                              " cannot be set to " + a.dump());
}

StatusOr<std::string> FirmwareSetText(const Change& change) {
  auto n = FirmwareValue(change);
  if (n.ok()) return std::to_string(*n);
  const nlohmann::json& a = change.after;
  if (!a.is_string() || change.attribute.rfind("LINK_TYPE_P", 0) == 0) return n.status();
  std::string s = a.get<std::string>();
  bool word = !s.empty();
  for (char c : s) {
    word = word && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  }
  if (!word) return n.status();
  return s;  // a value's name ("ETH", "DISABLED"): mstconfig resolves it
}

}  // namespace provisioner
