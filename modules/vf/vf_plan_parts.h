// What the pieces of the vf planner share (vf_planner.cc: flags, deviceType
// and PlanVf; vf_range_planner.cc: the per-range settings; vf_mac_planner.cc:
// vfMac; vf_guid_planner.cc: IB VF GUIDs). Not for other modules.
#ifndef PROVISIONER_MODULES_VF_VF_PLAN_PARTS_H_
#define PROVISIONER_MODULES_VF_VF_PLAN_PARTS_H_

#include <functional>
#include <map>
#include <string>

#include "modules/vf/vf_planner.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace vf_plan {

// What the plan knows about one PF's VFs once numVfs has run.
struct PfView {
  const PciFunction* pf;
  int count;         // VFs after the numVfs phase
  bool recreated;    // the numVfs phase destroys and re-creates every VF
  std::string nic;   // the nic that claimed it
  std::string path;  // that nic's field path
};

// A change of the vf module for `v`'s PF, detail nic, count, netdev, rdma.
Change NewChange(const PfView& v, const char* attribute, int phase, std::string field_path,
                 std::string reason);

// A per-VF setting over a VF range: `now(vf)` its value now (null unknown),
// `want` the value asked.
// `converged(vf)`, when given, says whether a VF needs no change (else: its
// value now equals `want`); `want_text`, when given, names `want` in the
// reason.
void PlanVfRangeSetting(const PciFunction& pf, const VfRangeRef& r, const char* attribute,
                        const nlohmann::json& want,
                        const std::function<nlohmann::json(const VfInfo&)>& now,
                        const std::string& what, PlanSink& sink,
                        const std::function<bool(const VfInfo&)>& converged = nullptr,
                        const std::string& want_text = "");

// IB VF GUIDs for a nic used by an ib-sriov multus config (`mpath` its
// field): derived from the PF GUID, checked against `guid_owner` (every GUID
// on the host so far, which it extends).
void PlanIbGuids(const PfView& v, const std::string& mpath,
                 std::map<uint64_t, std::string>& guid_owner, PlanSink& sink);

}  // namespace vf_plan
}  // namespace provisioner

#endif  // PROVISIONER_MODULES_VF_VF_PLAN_PARTS_H_
