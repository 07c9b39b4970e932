#include "modules/sriov/planner.h"

#include <map>
#include <set>
#include <string>
#include <utility>

#include "engine/model/selector.h"

namespace provisioner {
namespace {

// The settings of `pf`'s VFs now (kVfSettingsAtCount), or an empty object
// when none is known.
nlohmann::json VfSettingsRecord(const PciFunction& pf, const HostFacts& facts) {
  nlohmann::json vfs = nlohmann::json::array();
  const bool ib = !pf.sriov->ib_node_guid.empty();
  for (const VfInfo& vf : pf.sriov->vfs) {
    nlohmann::json v = {{"index", vf.vf_index}};
    for (const std::string& nd : vf.netdevs) {
      auto l = facts.links.find(nd);
      if (l != facts.links.end() && l->second.mtu > 0) v["mtu"] = l->second.mtu;
      break;
    }
    if (vf.mac) v["mac"] = *vf.mac;
    if (vf.trust) v["trust"] = *vf.trust;
    if (vf.spoof_chk) v["spoofChk"] = *vf.spoof_chk;
    if (vf.link_state) v["linkState"] = *vf.link_state;
    if (vf.min_tx_rate && vf.max_tx_rate) {
      v["rate"] = {{"min", *vf.min_tx_rate}, {"max", *vf.max_tx_rate}};
    }
    if (vf.vlan_id && vf.vlan_qos && vf.vlan_proto) {
      v["vlan"] = {{"id", *vf.vlan_id}, {"qos", *vf.vlan_qos}, {"proto", *vf.vlan_proto}};
    }
    if (ib && !vf.ib_node_guid.empty()) v["guid"] = vf.ib_node_guid;
    if (v.size() > 1) vfs.push_back(std::move(v));
  }
  if (vfs.empty()) return nlohmann::json::object();
  nlohmann::json record = {{"numVfs", pf.sriov->num_vfs}, {"vfs", std::move(vfs)}};
  if (!pf.netdevs.empty()) record["pfNetdev"] = pf.netdevs.front();
  return record;
}

// PCI vendor ID of Mellanox/NVIDIA networking: firmware hints (mstconfig) only for it.
constexpr char kMellanoxVendor[] = "15b3";

std::string Reason(const NicSpec& nic, int n) {
  if (n == 0) return "nic " + nic.name + " wants SR-IOV off";
  return "nic " + nic.name + " wants " + std::to_string(n) + (n == 1 ? " VF" : " VFs");
}

// "" when every VF function of the count exists; else "4/12 VFs present" (as
// apply's wait says it). The kernel creates them all before its write of
// sriov_numvfs returns, so fewer means an apply (or a simulator) is still at
// it. A VF without a netdev is not counted: once a pod has it, its netdev
// lives in the pod's network namespace, out of this one's sysfs.
std::string Unsettled(const SriovInfo& s) {
  const int present = static_cast<int>(s.vfs.size());
  if (present >= s.num_vfs) return "";
  return std::to_string(present) + "/" + std::to_string(s.num_vfs) + " VFs present";
}

// Who asked first for a PF's VF count.
struct Claim {
  size_t nic_index;
  int num_vfs;
};

// True when the firmware module can read this PF's card configuration and
// so plans SRIOV_EN / NUM_OF_VFS for numVfs above the firmware's limit (it
// takes effect at the next boot; numVfs is planned once it has).
bool FirmwareRaisesLimit(const HostFacts& facts, const std::string& bdf) {
  auto it = facts.firmware.find(FirmwareDevice(bdf));
  return it != facts.firmware.end() && it->second.error.empty() &&
         it->second.params.count("NUM_OF_VFS") > 0;
}

}  // namespace

std::string NumVfsChangeId(const std::string& pf) {
  return std::string(kSriovModule) + "/" + pf + "/" + kNumVfsAttribute;
}

const nlohmann::json* RecordAtCount(const Change& change, const char* key, const char* list,
                                    int target) {
  if (!change.detail.is_object()) return nullptr;
  auto it = change.detail.find(key);
  if (it == change.detail.end() || !it->is_object()) return nullptr;
  auto n = it->find("numVfs");
  auto items = it->find(list);
  if (n == it->end() || !n->is_number_integer() || n->get<long long>() != target ||
      items == it->end() || !items->is_array()) {
    return nullptr;
  }
  return &*it;
}

int CountUnmanagedPfsWithVfs(const DesiredState& desired, const HostFacts& facts) {
  std::set<std::string> selected;
  for (const NicSpec& nic : desired.nics) {
    for (const PciFunction* pf : SelectPfs(nic, facts)) selected.insert(pf->pci_address);
  }
  int n = 0;
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || !f.sriov || f.sriov->num_vfs <= 0) continue;
    n += selected.count(f.pci_address) == 0;
  }
  return n;
}

void PlanNumVfs(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  std::map<std::string, Claim> claims;  // PF address -> first nic that set it
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.num_vfs) continue;  // unspecified: unmanaged
    const int want = *nic.num_vfs;
    const std::string path = DesiredState::NicPath(i);
    const std::string num_path = path + ".numVfs";
    if (want < 0) {
      sink.Error(num_path, std::to_string(want) + " is negative");
      continue;
    }
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    // A selector matching nothing: the pci module reports it, once for every
    // nic (CheckUnmatchedSelectors); nearGpu: the topology module says why.
    if (pfs.empty()) continue;
    for (const PciFunction* pf : pfs) {
      const std::string& bdf = pf->pci_address;
      if (!pf->sriov) {
        // Nothing to turn off on a PF that cannot have VFs.
        if (want == 0) continue;
        if (FirmwareRaisesLimit(facts, bdf)) {
          sink.Warning(num_path, bdf + " has no SR-IOV until the firmware change (SRIOV_EN, " +
                                     "NUM_OF_VFS) takes effect at the next boot; apply again "
                                     "after the reboot to create the VFs");
          continue;
        }
        // SRIOV_EN is a Mellanox/NVIDIA firmware setting (mstconfig): the
        // hint only for that vendor's cards.
        sink.Error(num_path, bdf + " (" + pf->vendor + ":" + pf->device_id +
                                 ") has no SR-IOV capability: no sriov_totalvfs" +
                                 (pf->vendor == kMellanoxVendor
                                      ? " (firmware SRIOV_EN=0? nics[].firmware sets it)"
                                      : ""));
        continue;
      }
      if (want > pf->sriov->total_vfs && FirmwareRaisesLimit(facts, bdf)) {
        sink.Warning(num_path, std::to_string(want) + " exceeds sriov_totalvfs " +
                                   std::to_string(pf->sriov->total_vfs) + " of " + bdf +
                                   " until the firmware's NUM_OF_VFS takes effect at the next "
                                   "boot; apply again after the reboot to create the VFs");
        continue;
      }
      if (want > pf->sriov->total_vfs) {
        sink.Error(num_path, std::to_string(want) + " exceeds sriov_totalvfs " +
                                 std::to_string(pf->sriov->total_vfs) + " of " + bdf);
        continue;
      }
      auto [it, inserted] = claims.emplace(bdf, Claim{i, want});
      if (!inserted) {
        const Claim& first = it->second;
        if (first.num_vfs != want) {
          sink.Error(num_path, "wants " + std::to_string(want) + " VFs on " + bdf + ", but " +
                                   DesiredState::NicPath(first.nic_index) + " (" +
                                   desired.nics[first.nic_index].name + ") wants " +
                                   std::to_string(first.num_vfs));
        }
        continue;  // planned once, by the first nic
      }
      const int current = pf->sriov->num_vfs;
      std::string settling;
      if (current == want) {
        settling = Unsettled(*pf->sriov);
        if (settling.empty()) continue;
      }
      Change c;
      c.id = NumVfsChangeId(bdf);
      c.module = kSriovModule;
      c.target = bdf;
      c.attribute = kNumVfsAttribute;
      c.before = current;
      c.after = want;
      c.disruption = Disruption::kLive;
      c.reason = Reason(nic, want);
      if (!settling.empty()) {
        // The count is right but the VFs are still coming (an apply
        // interrupted during its wait, a boot still probing): apply writes
        // nothing and waits for them, so that the VF drivers and links
        // planned after it see every VF.
        c.reason += "; the count is set but " + settling + ": wait for them";
      }
      c.phase = kPhaseNumVfs;
      c.field_path = num_path;
      c.detail = nlohmann::json::object();
      c.detail["nic"] = nic.name;
      if (current != 0 && want != 0) c.detail["resetFirst"] = true;
      // The VFs this change removes come back down when it is undone (the
      // kernel registers a new netdev administratively down): the ones up
      // now, for the rollback to bring up again and verify.
      if (current != want) {
        nlohmann::json up = nlohmann::json::array();
        for (const VfInfo& vf : pf->sriov->vfs) {
          for (const std::string& nd : vf.netdevs) {
            auto l = facts.links.find(nd);
            if (l != facts.links.end() && l->second.admin_up) {
              up.push_back(vf.vf_index);
              break;
            }
          }
        }
        if (!up.empty()) c.detail[kVfsUpAtCount] = {{"numVfs", current}, {"vfIndexes", up}};
        if (current > 0) {
          nlohmann::json record = VfSettingsRecord(*pf, facts);
          if (!record.empty()) c.detail[kVfSettingsAtCount] = std::move(record);
        }
      }
      sink.AddChange(std::move(c));
    }
  }
}

}  // namespace provisioner
