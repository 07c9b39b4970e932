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
#include "modules/vf/vf_plan_parts.h"

namespace provisioner {
namespace {

using nlohmann::json;

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
}  // namespace

namespace vf_plan {

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

}  // namespace vf_plan

using vf_plan::NewChange;
using vf_plan::PfView;

namespace {

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

std::string VfChangeId(const std::string& pf, const std::string& attribute) {
  return std::string(kVfModule) + "/" + pf + "/" + attribute;
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
  // MACs on the host: the PFs' own, and VF MACs derived so far.
  std::map<std::string, std::string> mac_owner;
  for (const PciFunction& f : facts.pci) {
    if (f.sriov && !f.sriov->pf_mac.empty())
      mac_owner.emplace(f.sriov->pf_mac, "PF " + f.pci_address);
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

      if (wants_guids) vf_plan::PlanIbGuids(v, ib_sriov[nic.name], guid_owner, sink);
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
        if (e.vf_mac)
          PlanVfMac(*pf, *e.vf_mac, ref("vfMac", g != nullptr && g->vf_mac), sink, &mac_owner);
      }

      PlanDriver(desired, facts, nic, v, sink);
    }
  }
}

}  // namespace provisioner
