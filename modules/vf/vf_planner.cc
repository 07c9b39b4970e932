#include "modules/vf/vf_planner.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "engine/model/selector.h"

namespace provisioner {
namespace {

using nlohmann::json;

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// What the plan knows about one PF's VFs once numVfs has run.
struct PfView {
  const PciFunction* pf;
  int count;         // VFs after the numVfs phase
  bool recreated;    // the numVfs phase destroys and re-creates every VF
  std::string nic;   // the nic that claimed it
  std::string path;  // that nic's field path
};

bool HasModule(const std::vector<std::string>& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

json BoolList(const SriovInfo& s, std::optional<bool> VfInfo::*field) {
  json out = json::array();
  for (const VfInfo& vf : s.vfs) {
    const auto& v = vf.*field;
    out.push_back(v ? json(*v) : json(nullptr));
  }
  return out;
}

Change NewChange(const PfView& v, const char* attribute, int phase, std::string field_path,
                 std::string reason) {
  Change c;
  c.id = VfChangeId(v.pf->pci_address, attribute);
  c.module = kVfModule;
  c.target = v.pf->pci_address;
  c.attribute = attribute;
  c.disruption = Disruption::kLive;
  c.phase = phase;
  c.field_path = std::move(field_path);
  c.reason = std::move(reason);
  c.detail = json::object();
  c.detail["nic"] = v.nic;
  c.detail["count"] = v.count;
  if (!v.pf->netdevs.empty()) c.detail["netdev"] = v.pf->netdevs.front();
  if (!v.pf->rdma_devices.empty()) c.detail["rdma"] = v.pf->rdma_devices.front();
  return c;
}

// One PF flag (trust, spoof check): a change unless every VF that will exist
// already has the value.
void PlanFlag(const PfView& v, bool want, std::optional<bool> VfInfo::*field, const char* attribute,
              const char* yaml_name, PlanSink& sink) {
  const SriovInfo& s = *v.pf->sriov;
  bool same = !v.recreated && static_cast<int>(s.vfs.size()) == v.count;
  for (const VfInfo& vf : s.vfs) same = same && (vf.*field) == want;
  if (same) return;
  if (v.pf->netdevs.empty()) {
    sink.Error(v.path + "." + yaml_name, v.pf->pci_address + " has no netdev: VF " + attribute +
                                             " is set over netlink on it");
    return;
  }
  Change c =
      NewChange(v, attribute, kPhaseVfSettings, v.path + "." + yaml_name,
                "nic " + v.nic + " wants VF " +
                    (std::string(attribute) == kTrustAttribute ? "trust" : "spoof checking") +
                    (want ? " on" : " off"));
  c.before = BoolList(s, field);
  c.after = want;
  sink.AddChange(std::move(c));
}

// The deviceType each VF of the nic wants: its group's (with the nic's as
// default), else the nic's; nullopt for a VF in no group of a nic without
// deviceType (unmanaged). The field that asks, for messages.
struct VfTypeWant {
  std::optional<std::string> type;
  std::string field_path;
};
std::vector<VfTypeWant> WantedTypes(const NicSpec& nic, const std::string& path, int count) {
  std::vector<VfTypeWant> out(static_cast<size_t>(count));
  for (int n = 0; n < count; ++n) {
    VfTypeWant& w = out[static_cast<size_t>(n)];
    w.type = nic.device_type;
    w.field_path = path + ".deviceType";
    for (size_t k = 0; k < nic.vf_groups.size(); ++k) {
      const VfGroupSpec& g = nic.vf_groups[k];
      if (!g.Contains(n)) continue;
      if (g.device_type) {
        w.type = g.device_type;
        w.field_path = path + ".vfGroups[" + std::to_string(k) + "].deviceType";
      }
      break;
    }
  }
  return out;
}

// deviceType, per PF: one change binding every VF whose driver differs from
// what its nic (or its vfGroup) asks. With one driver for every VF `after`
// is that driver's name; with groups it is a list (one driver per VF, null
// for a VF no group and no deviceType manages) and detail.vfIndexes lists
// the VFs the change manages (apply, verify and the inverse touch only those).
void PlanDriver(const DesiredState& desired, const HostFacts& facts, const NicSpec& nic,
                const PfView& v, PlanSink& sink) {
  const PciFunction* pf = v.pf;
  const SriovInfo& s = *pf->sriov;
  const int count = v.count;
  const std::vector<VfTypeWant> want = WantedTypes(nic, v.path, count);
  // The driver per VF ("" unmanaged), and the first field asking for each type.
  std::vector<std::string> target(static_cast<size_t>(count));
  std::map<std::string, std::string> type_path;  // deviceType -> field path
  bool any_vfio = false, any = false;
  for (int n = 0; n < count; ++n) {
    const VfTypeWant& w = want[static_cast<size_t>(n)];
    if (!w.type) continue;
    any = true;
    type_path.emplace(*w.type, w.field_path);
    const bool vfio = *w.type == "vfio-pci";
    any_vfio = any_vfio || vfio;
    if (!vfio && pf->driver.empty()) {
      sink.Error(w.field_path, pf->pci_address + " has no driver: cannot tell its VFs' driver");
      return;
    }
    target[static_cast<size_t>(n)] = vfio ? kVfioPci : VfNetdeviceDriver(pf->driver);
  }
  if (!any) return;
  // What the VFs will be bound to once numVfs has run.
  std::vector<std::string> predicted;
  if (v.recreated) {
    const bool autoprobe = s.drivers_autoprobe.value_or(true);
    predicted.assign(static_cast<size_t>(count),
                     autoprobe ? VfNetdeviceDriver(pf->driver) : std::string());
  } else {
    for (const VfInfo& vf : s.vfs) predicted.push_back(vf.driver);
  }
  // The field of the first VF that moves: the change's field.
  std::string first_path;
  for (int n = 0; n < count && first_path.empty(); ++n) {
    const size_t i = static_cast<size_t>(n);
    if (want[i].type && (i >= predicted.size() || predicted[i] != target[i])) {
      first_path = want[i].field_path;
    }
  }
  if (first_path.empty()) return;
  if (any_vfio) {
    const std::string& vfio_path = type_path[kVfioPci];
    // vfio-pci refuses a device without an IOMMU group (EINVAL).
    std::string no_group;
    if (v.recreated && pf->iommu_group.empty()) no_group = pf->pci_address + " (PF)";
    for (size_t i = 0; i < s.vfs.size(); ++i) {
      if (v.recreated || !no_group.empty()) break;
      if (i >= target.size() || target[i] != kVfioPci) continue;
      const PciFunction* f = facts.FindPci(s.vfs[i].pci_address);
      if (f != nullptr && f->iommu_group.empty()) no_group = s.vfs[i].pci_address;
    }
    if (!no_group.empty()) {
      sink.Error(vfio_path, "vfio-pci needs an IOMMU, but " + no_group +
                                " has no iommu_group (boot with intel_iommu=on or "
                                "amd_iommu=on: spec.kernel.cmdline: [intel_iommu=on, "
                                "iommu=pt])");
      return;
    }
    bool module_known =
        HasModule(facts.pci_drivers, kVfioPci) || HasModule(facts.loaded_modules, "vfio_pci");
    for (const KernelModuleSpec& k : desired.kernel_modules) {
      module_known = module_known || k.name == "vfio_pci" || k.name == "vfio-pci";
    }
    if (!module_known) {
      sink.Warning(vfio_path,
                   "vfio-pci: the vfio_pci kernel module is not loaded and not in "
                   "spec.kernelModules; add it there, or binding will fail");
    }
  }
  // One driver for every VF: the plain form.
  bool uniform = true;
  for (size_t i = 0; i < target.size(); ++i) {
    uniform = uniform && want[i].type && target[i] == target.front();
  }
  std::string reason;
  json after;
  json managed;  // null: every VF
  if (uniform) {
    reason = "nic " + nic.name + " wants its VFs on " + target.front() + " (deviceType " +
             *want.front().type + ")";
    after = target.front();
  } else {
    // "VFs 0-3 on mlx5_core (netdevice), 4-7 on vfio-pci (vfio-pci)", by runs.
    std::string runs;
    for (int n = 0; n < count;) {
      const size_t i = static_cast<size_t>(n);
      int m = n;
      while (m + 1 < count && want[static_cast<size_t>(m + 1)].type == want[i].type) ++m;
      if (want[i].type) {
        if (!runs.empty()) runs += ", ";
        runs += (m == n ? std::to_string(n) : std::to_string(n) + "-" + std::to_string(m)) +
                " on " + target[i] + " (" + *want[i].type + ")";
      }
      n = m + 1;
    }
    reason = "nic " + nic.name + " wants VFs " + runs;
    after = json::array();
    managed = json::array();
    for (int n = 0; n < count; ++n) {
      const size_t i = static_cast<size_t>(n);
      after.push_back(want[i].type ? json(target[i]) : json(nullptr));
      if (want[i].type) managed.push_back(n);
    }
  }
  Change c = NewChange(v, kDriverAttribute, kPhaseVfBinding, first_path, reason);
  if (!managed.is_null()) c.detail["vfIndexes"] = std::move(managed);
  json before = json::array();
  for (const VfInfo& vf : s.vfs) {
    before.push_back(vf.driver.empty() ? json(nullptr) : json(vf.driver));
  }
  c.before = std::move(before);
  c.after = std::move(after);
  sink.AddChange(std::move(c));
}

}  // namespace

namespace {

// A per-VF setting over a VF range: `now(vf)` its value now (null unknown),
// `want` the value asked.
// `converged(vf)`, when given, says whether a VF needs no change (else: its
// value now equals `want`); `want_text`, when given, names `want` in the
// reason.
void PlanVfRangeSetting(const PciFunction& pf, const VfRangeRef& r, const char* attribute,
                        const json& want, const std::function<json(const VfInfo&)>& now,
                        const std::string& what, PlanSink& sink,
                        const std::function<bool(const VfInfo&)>& converged = nullptr,
                        const std::string& want_text = "") {
  if (!pf.sriov || r.count <= 0) return;
  const SriovInfo& s = *pf.sriov;
  const std::string range_text = std::to_string(r.first) + "-" + std::to_string(r.last);
  if (r.first < 0 || r.last < r.first || r.last >= r.count) {
    sink.Error(r.field_path, "VFs " + range_text + " are not VFs of " + pf.pci_address +
                                 " (it will have " + std::to_string(r.count) + ")");
    return;
  }
  const bool recreated = r.count != s.num_vfs || static_cast<int>(s.vfs.size()) != r.count;
  json before = nullptr;
  bool same = !recreated;
  if (!recreated) {
    before = json::array();
    for (int n = r.first; n <= r.last; ++n) {
      const VfInfo& vf = s.vfs[static_cast<size_t>(n)];
      json v = now(vf);
      same = same && (converged ? converged(vf) : v == want);
      before.push_back(std::move(v));
    }
  }
  if (same) return;
  if (pf.netdevs.empty()) {
    sink.Error(r.field_path, pf.pci_address + " has no netdev: a VF's " + what +
                                 " is set over netlink on its PF's netdev");
    return;
  }
  const bool whole = r.first == 0 && r.last == r.count - 1;
  PfView v{&pf, r.count, recreated, r.nic, r.field_path};
  Change c = NewChange(v, attribute, kPhaseVfSettings, r.field_path,
                       "nic " + r.nic + " wants " + (whole ? "its VFs'" : "VFs " + range_text) +
                           " " + what + " " +
                           (!want_text.empty() ? want_text
                            : want.is_string() ? want.get<std::string>()
                                               : want.dump()));
  if (!whole) c.id += "#" + range_text;
  c.detail["first"] = r.first;
  c.detail["last"] = r.last;
  c.before = std::move(before);
  c.after = want;
  sink.AddChange(std::move(c));
}

}  // namespace

void PlanVfLinkState(const PciFunction& pf, const std::string& want, const VfRangeRef& r,
                     PlanSink& sink) {
  PlanVfRangeSetting(
      pf, r, kLinkStateAttribute, json(want),
      [](const VfInfo& vf) { return vf.link_state ? json(*vf.link_state) : json(nullptr); },
      "link state", sink);
}

namespace {
json VfRateJson(int64_t min, int64_t max) { return json{{"min", min}, {"max", max}}; }
}  // namespace

void PlanVfRate(const PciFunction& pf, const VfRateSpec& want, const VfRangeRef& r,
                PlanSink& sink) {
  PlanVfRangeSetting(
      pf, r, kRateAttribute, VfRateJson(want.min, want.max),
      [](const VfInfo& vf) {
        return vf.min_tx_rate && vf.max_tx_rate ? VfRateJson(*vf.min_tx_rate, *vf.max_tx_rate)
                                                : json(nullptr);
      },
      "tx rate (Mbps)", sink);
}

namespace {
json VfVlanJson(int id, int qos, const std::string& proto) {
  return json{{"id", id}, {"qos", qos}, {"proto", proto}};
}
}  // namespace

void PlanVfVlan(const PciFunction& pf, const VfVlanSpec& want, const VfRangeRef& r,
                PlanSink& sink) {
  PlanVfRangeSetting(
      pf, r, kVlanAttribute, VfVlanJson(want.id, want.qos, want.proto),
      [](const VfInfo& vf) {
        return vf.vlan_id && vf.vlan_qos && vf.vlan_proto
                   ? VfVlanJson(*vf.vlan_id, *vf.vlan_qos, *vf.vlan_proto)
                   : json(nullptr);
      },
      "VLAN", sink);
}

std::optional<std::array<uint8_t, 6>> ParseMacAddress(const std::string& text) {
  std::array<uint8_t, 6> out{};
  if (text.size() != 17) return std::nullopt;
  for (size_t i = 0; i < 6; ++i) {
    int v = 0;
    for (size_t k = 0; k < 2; ++k) {
      const char c = text[3 * i + k];
      int d = -1;
      if (c >= '0' && c <= '9') d = c - '0';
      if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      if (d < 0) return std::nullopt;
      v = v * 16 + d;
    }
    if (i < 5 && text[3 * i + 2] != ':') return std::nullopt;
    out[i] = static_cast<uint8_t>(v);
  }
  return out;
}

std::string FormatMacAddress(const uint8_t* mac) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                mac[4], mac[5]);
  return buf;
}

std::string DeriveVfMac(const std::string& pf_mac, int vf_index) {
  const std::optional<std::array<uint8_t, 6>> pf = ParseMacAddress(pf_mac);
  if (!pf || vf_index < 0 || vf_index >= 0xffff) return "";
  std::array<uint8_t, 6> m = *pf;
  m[0] = static_cast<uint8_t>((m[0] & ~0x01) | 0x02);  // unicast, locally administered
  const unsigned id = static_cast<unsigned>(vf_index) + 1;
  m[1] = static_cast<uint8_t>(id >> 8);
  m[2] = static_cast<uint8_t>(id & 0xff);
  return FormatMacAddress(m.data());
}

namespace {

bool ZeroMac(const std::string& mac) { return mac == "00:00:00:00:00:00"; }

}  // namespace

void PlanVfMac(const PciFunction& pf, const std::string& want, const VfRangeRef& r,
               PlanSink& sink) {
  if (!pf.sriov || r.count <= 0) return;
  const SriovInfo& s = *pf.sriov;
  if (!s.ib_node_guid.empty()) {
    sink.Error(r.field_path, pf.pci_address +
                                 "'s port is InfiniBand: its VFs have GUIDs, not MACs (a "
                                 "linkType change waits for a reboot; until then vfMac cannot "
                                 "be planned)");
    return;
  }
  json after = want;
  std::string want_text = "kept: each VF netdev's own MAC into the PF's table";
  std::vector<std::string> derived;
  if (want == kVfMacDerived) {
    const std::string netdev = pf.netdevs.empty() ? "its netdev" : pf.netdevs.front();
    if (!ParseMacAddress(s.pf_mac)) {
      sink.Error(r.field_path, pf.pci_address + ": the MAC of " + netdev +
                                   " is unknown: derived VF MACs are computed from it");
      return;
    }
    if (s.pf_addr_assign_type.value_or(0) != 0) {
      sink.Error(r.field_path,
                 pf.pci_address + ": " + netdev + "'s address " + s.pf_mac +
                     " is not its burnt-in MAC (addr_assign_type " +
                     std::to_string(*s.pf_addr_assign_type) +
                     ": set by a bond or `ip link set address`), so MACs derived from it would "
                     "change with it; use vfMac: keep");
      return;
    }
    json macs = json::array();
    for (int n = r.first; n <= r.last && n < r.count; ++n) {
      derived.push_back(DeriveVfMac(s.pf_mac, n));
      macs.push_back(derived.back());
    }
    want_text = "derived from " + s.pf_mac + " (" + derived.front() +
                (derived.size() > 1 ? " .. " + derived.back() : "") + ")";
    after = json{{"mode", want}, {"macs", std::move(macs)}};
  } else {
    // keep copies the netdev's MAC: a VF on vfio-pci (no netdev) that has
    // none in the table has nothing to copy (the operator copies it before
    // it binds vfio-pci; so do we when the VFs are made by this plan).
    const bool recreated = r.count != s.num_vfs || static_cast<int>(s.vfs.size()) != r.count;
    if (recreated && !s.drivers_autoprobe.value_or(true)) {
      sink.Error(r.field_path, pf.pci_address +
                                   " has sriov_drivers_autoprobe 0: the VFs this plan makes have "
                                   "no netdev whose MAC keep could copy; use vfMac: derived");
      return;
    }
    for (int n = r.first; !recreated && n <= r.last && n < r.count; ++n) {
      const VfInfo& vf = s.vfs[static_cast<size_t>(n)];
      const bool has_mac = vf.mac && !ZeroMac(*vf.mac);
      if (!has_mac && vf.netdev_mac.empty() && IsUserspaceDriver(vf.driver)) {
        sink.Error(r.field_path, "VF " + std::to_string(n) + " (" + vf.pci_address + ") is on " +
                                     vf.driver +
                                     ": it has no netdev whose MAC keep could copy, and no MAC "
                                     "in the PF's table; use vfMac: derived");
        return;
      }
    }
  }
  const int first = r.first;
  PlanVfRangeSetting(
      pf, r, kMacAttribute, after,
      [](const VfInfo& vf) { return vf.mac ? json(*vf.mac) : json(nullptr); }, "MAC", sink,
      [&](const VfInfo& vf) {
        if (!vf.mac || ZeroMac(*vf.mac)) return false;
        if (!vf.netdev_mac.empty() && vf.netdev_mac != *vf.mac) return false;  // not rebound
        if (want != kVfMacDerived) return true;
        const size_t k = static_cast<size_t>(vf.vf_index - first);
        return k < derived.size() && *vf.mac == derived[k];
      },
      want_text);
}

std::string VfChangeId(const std::string& pf, const std::string& attribute) {
  return std::string(kVfModule) + "/" + pf + "/" + attribute;
}

std::optional<uint64_t> ParseGuid(const std::string& text) {
  uint64_t v = 0;
  int digits = 0;
  // Either 4 groups of 4 or 8 groups of 2 hex digits, ':'-separated.
  size_t group = 0;
  int group_len = -1;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ':') {
      if (group == 0) return std::nullopt;
      if (group_len < 0) group_len = static_cast<int>(group);
      if (static_cast<int>(group) != group_len) return std::nullopt;
      group = 0;
      continue;
    }
    int d = HexDigit(text[i]);
    if (d < 0) return std::nullopt;
    v = v << 4 | static_cast<uint64_t>(d);
    ++digits;
    ++group;
  }
  if (digits != 16 || (group_len != 4 && group_len != 2)) return std::nullopt;
  return v;
}

std::string FormatGuid(uint64_t g) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48 & 0xffff),
                static_cast<unsigned>(g >> 32 & 0xffff), static_cast<unsigned>(g >> 16 & 0xffff),
                static_cast<unsigned>(g & 0xffff));
  return buf;
}

std::string FormatGuidBytes(uint64_t g) {
  std::string out;
  for (int i = 7; i >= 0; --i) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(g >> (8 * i) & 0xff));
    out += buf;
    if (i) out += ':';
  }
  return out;
}

uint64_t DeriveVfGuid(uint64_t pf_guid, int vf_index) {
  uint64_t g = pf_guid;
  g |= 0x02ULL << 56;     // locally administered
  g &= ~(0x01ULL << 56);  // unicast
  g &= ~(0xffffULL << 24);
  g |= (static_cast<uint64_t>(vf_index + 1) & 0xffff) << 24;
  return g;
}

void PlanVf(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  // Which nics an ib-sriov multus config uses (first config's path for messages).
  std::map<std::string, std::string> ib_sriov;
  for (size_t k = 0; k < desired.multus_configs.size(); ++k) {
    const MultusConfigSpec& m = desired.multus_configs[k];
    if (m.cni_type == "ib-sriov") {
      ib_sriov.emplace(m.nic, "spec.multusConfigs[" + std::to_string(k) + "]");
    }
  }
  // GUIDs in use on the host: PF GUIDs, and VF GUIDs planned so far.
  std::map<uint64_t, std::string> guid_owner;
  for (const PciFunction& f : facts.pci) {
    if (f.sriov && !f.sriov->ib_node_guid.empty()) {
      if (auto g = ParseGuid(f.sriov->ib_node_guid)) guid_owner.emplace(*g, "PF " + f.pci_address);
    }
  }
  std::set<std::string> claimed;  // PFs planned (first nic wins; sriov reports conflicts)
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    const std::string path = DesiredState::NicPath(i);
    const bool wants_guids = ib_sriov.count(nic.name) > 0;
    if (!wants_guids && !nic.vf_trust && !nic.vf_spoof_chk && !nic.device_type &&
        nic.vf_groups.empty() && !nic.vf_link_state && !nic.vf_rate && !nic.vf_vlan &&
        !nic.vf_mac) {
      continue;
    }
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      if (!pf->sriov) continue;  // the sriov module reports numVfs on a PF without SR-IOV
      const SriovInfo& s = *pf->sriov;
      const int count = nic.num_vfs ? *nic.num_vfs : s.num_vfs;
      if (count <= 0 || count > s.total_vfs) continue;  // nothing to set, or sriov's error
      if (!claimed.insert(pf->pci_address).second) continue;
      PfView v{pf, count, count != s.num_vfs, nic.name, path};

      if (wants_guids) {
        const std::string& mpath = ib_sriov[nic.name];
        auto pf_guid = ParseGuid(s.ib_node_guid);
        if (!pf_guid) {
          sink.Warning(mpath + ".cniType",
                       "ib-sriov: " + pf->pci_address +
                           " has no InfiniBand port now (linkType change pending a reboot?): "
                           "VF GUIDs are not planned");
        } else {
          json after = json::array();
          bool same = !v.recreated && static_cast<int>(s.vfs.size()) == count;
          bool collision = false;
          for (int n = 0; n < count; ++n) {
            uint64_t g = DeriveVfGuid(*pf_guid, n);
            const std::string who = "VF " + std::to_string(n) + " of " + pf->pci_address;
            auto [it, fresh] = guid_owner.emplace(g, who);
            if (!fresh) {
              sink.Error(path, "the GUID derived for " + who + " (" + FormatGuid(g) + ") is also " +
                                   it->second + "'s");
              collision = true;
              break;
            }
            after.push_back(FormatGuid(g));
            if (same) {
              const VfInfo& vf = s.vfs[static_cast<size_t>(n)];
              same = ParseGuid(vf.ib_node_guid) == g && ParseGuid(vf.ib_port_guid) == g;
            }
          }
          if (!collision && !same) {
            Change c = NewChange(v, kIbGuidsAttribute, kPhaseVfSettings, mpath + ".cniType",
                                 "nic " + nic.name +
                                     " is used by ib-sriov: VF node/port GUIDs "
                                     "derived from PF GUID " +
                                     FormatGuid(*pf_guid));
            json before = json::array();
            for (const VfInfo& vf : s.vfs) {
              before.push_back(vf.ib_node_guid.empty() ? json(nullptr) : json(vf.ib_node_guid));
            }
            c.before = std::move(before);
            c.after = std::move(after);
            sink.AddChange(std::move(c));
          }
        }
      }
      if (nic.vf_trust)
        PlanFlag(v, *nic.vf_trust, &VfInfo::trust, kTrustAttribute, "vfTrust", sink);
      if (nic.vf_spoof_chk) {
        PlanFlag(v, *nic.vf_spoof_chk, &VfInfo::spoof_chk, kSpoofChkAttribute, "vfSpoofChk", sink);
      }
      // Per range: each vfGroup's VFs get the group's value (its own, else
      // the nic's), the VFs in no group the nic's; one change per range.
      for (const VfSegment& seg : VfSegments(nic, count)) {
        const VfGroupSpec& e = seg.spec;
        auto ref = [&](const char* field, bool own) {
          const std::string where =
              own ? path + ".vfGroups[" + std::to_string(seg.group) + "]" : path;
          return VfRangeRef{seg.first, seg.last, count, nic.name, where + "." + field};
        };
        const VfGroupSpec* g =
            seg.group < 0 ? nullptr : &nic.vf_groups[static_cast<size_t>(seg.group)];
        if (e.vf_link_state) {
          PlanVfLinkState(*pf, *e.vf_link_state,
                          ref("vfLinkState", g != nullptr && g->vf_link_state), sink);
        }
        if (e.vf_rate) PlanVfRate(*pf, *e.vf_rate, ref("vfRate", g != nullptr && g->vf_rate), sink);
        if (e.vf_vlan) PlanVfVlan(*pf, *e.vf_vlan, ref("vfVlan", g != nullptr && g->vf_vlan), sink);
        if (e.vf_mac) PlanVfMac(*pf, *e.vf_mac, ref("vfMac", g != nullptr && g->vf_mac), sink);
      }

      PlanDriver(desired, facts, nic, v, sink);
    }
  }
}

}  // namespace provisioner
