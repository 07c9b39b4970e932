// The vf planner's per-range settings: vfLinkState, vfRate and vfVlan (and
// the range change vfMac builds on), one change per VF range of a PF.
#include <utility>

#include "modules/vf/vf_plan_parts.h"

namespace provisioner {

using nlohmann::json;

namespace vf_plan {

void PlanVfRangeSetting(const PciFunction& pf, const VfRangeRef& r, const char* attribute,
                        const json& want, const std::function<json(const VfInfo&)>& now,
                        const std::string& what, PlanSink& sink,
                        const std::function<bool(const VfInfo&)>& converged,
                        const std::string& want_text) {
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

}  // namespace vf_plan

using vf_plan::PlanVfRangeSetting;

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
  // mlx5e_set_vf_vlan answers EPROTONOSUPPORT to anything but 802.1Q (a
  // QinQ patch for it was not taken upstream); other drivers (ice, i40e)
  // take 802.1ad.
  if (want.proto == "802.1ad" && pf.driver == "mlx5_core") {
    sink.Error(r.field_path, pf.pci_address +
                                 " is driven by mlx5_core, which refuses an 802.1ad VF VLAN "
                                 "(EPROTONOSUPPORT from mlx5e_set_vf_vlan: 802.1Q only); use "
                                 "proto 802.1Q");
    return;
  }
  PlanVfRangeSetting(
      pf, r, kVlanAttribute, VfVlanJson(want.id, want.qos, want.proto),
      [](const VfInfo& vf) {
        return vf.vlan_id && vf.vlan_qos && vf.vlan_proto
                   ? VfVlanJson(*vf.vlan_id, *vf.vlan_qos, *vf.vlan_proto)
                   : json(nullptr);
      },
      "VLAN", sink);
}

}  // namespace provisioner
