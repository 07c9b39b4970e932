#include "modules/roce/roce_checks.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "engine/model/selector.h"
#include "modules/roce/roce_planner.h"

namespace provisioner {
namespace {

bool Has(const std::vector<int>& v, int p) { return std::find(v.begin(), v.end(), p) != v.end(); }

// mlnx_qos's --pfc argument with PFC on `prio` only: "0,0,0,1,0,0,0,0".
std::string MlnxQosPfc(int prio) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += std::string(i ? "," : "") + (i == prio ? "1" : "0");
  return out;
}

// The PF netdevs doctor looks at: RoCE ports' netdevs (an RDMA port with
// link layer Ethernet, not a VF's), those of the PFs host.yaml selects when
// it selects any (and every netdev of a nic that sets roce:), else all.
std::set<std::string> Netdevs(const DesiredState* desired, const HostFacts& facts) {
  std::set<std::string> roce;
  for (const RdmaDevice& d : facts.rdma.devices) {
    if (d.is_vf) continue;
    for (const RdmaPort& p : d.ports) {
      if (p.link_layer == "Ethernet" && !p.netdev.empty()) roce.insert(p.netdev);
    }
  }
  if (desired == nullptr) return roce;
  std::set<std::string> out;
  for (const NicSpec& nic : desired->nics) {
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      for (const std::string& nd : pf->netdevs) {
        if (nic.roce || roce.count(nd) != 0) out.insert(nd);
      }
    }
  }
  return out.empty() ? roce : out;
}

// roce.dcbx: who owns PFC, where the driver says (dcbnl getdcbx).
void CheckDcbx(const std::string& ifname, const RoceNetdevFacts& f, CheckSink& sink) {
  if (!f.dcbx) return;
  CheckResult r;
  r.module = "roce";
  r.id = "roce.dcbx";
  r.target = ifname;
  r.evidence.push_back({"dcbnl DCBX mode (" + ifname + ")", *f.dcbx});
  if (f.pfc)
    r.evidence.push_back({"dcbnl PFC-enabled priorities (" + ifname + ")", PriorityList(*f.pfc)});
  if (*f.dcbx == "host") {
    r.summary =
        "DCBX host-managed (not willing): PFC is the host's, the switch's LLDP cannot change it";
  } else if (*f.dcbx == "lld") {
    r.summary = "an LLDP agent (lldpad) runs DCBX: PFC follows its configuration";
  } else {
    r.verdict = Verdict::kWarn;
    r.summary =
        "DCBX runs in the NIC's firmware, willing: the switch's DCBX/LLDP can change PFC under the "
        "host";
    r.fix = "in host.yaml, the nic of " + ifname + ": roce: { dcbx: host } (by hand: mlnx_qos -i " +
            ifname + " --dcbx os), and the switch's DCBX as the side that advertises";
  }
  sink.Add(std::move(r));
}

}  // namespace

void CheckRoce(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  if (!facts.roce.discovered) return;
  const int nccl_tc = facts.roce.nccl_ib_tc.value_or(kGuideTrafficClass);
  const std::string nccl_tc_text =
      facts.roce.nccl_ib_tc
          ? std::to_string(nccl_tc) + " (" + facts.roce.nccl_ib_tc_source + ")"
          : std::to_string(nccl_tc) +
                " (assumed: NCCL_IB_TC is set neither in the environment nor in /etc/nccl.conf; "
                "106 is NVIDIA's lossless RoCE value, NCCL's own default 0 puts RoCE on "
                "priority 0)";
  for (const std::string& ifname : Netdevs(desired, facts)) {
    auto it = facts.roce.netdevs.find(ifname);
    if (it == facts.roce.netdevs.end()) continue;
    const RoceNetdevFacts& f = it->second;
    CheckDcbx(ifname, f, sink);
    // mlx5_ib's forced traffic class wins over what the application sets.
    const bool forced = f.tos && f.tos_file.find("/traffic_class") != std::string::npos;
    const int tc = forced ? *f.tos : nccl_tc;
    const std::string tc_text = forced ? std::to_string(tc) + " (" + f.tos_file +
                                             ": every QP of the port, NCCL_IB_TC " +
                                             std::to_string(nccl_tc) + " or not)"
                                       : nccl_tc_text;
    const int dscp = tc >> 2;
    auto mapped = f.trust && *f.trust == "dscp" ? f.dscp_map.find(dscp) : f.dscp_map.end();
    const bool custom = mapped != f.dscp_map.end() && mapped->second != PriorityOfTrafficClass(tc);
    const int prio = mapped != f.dscp_map.end() ? mapped->second : PriorityOfTrafficClass(tc);
    const std::string p = std::to_string(prio);
    CheckResult r;
    r.module = "roce";
    r.id = "roce.nccl-priority";
    r.target = ifname;
    r.evidence.push_back({"NCCL_IB_TC", tc_text});
    r.evidence.push_back(
        {"priority", p + (custom ? " = the DSCP map's entry for DSCP " + std::to_string(dscp) +
                                       " (" + std::to_string(tc) + " >> 2; dcbnl APP table)"
                                 : " = NCCL_IB_TC >> 5 (DSCP " + std::to_string(dscp) +
                                       ", default DSCP map priority = DSCP >> 3)")});
    std::vector<std::string> missing;
    bool unknown = false;
    if (f.trust) {
      r.evidence.push_back({"dcbnl trust (" + ifname + ")", *f.trust});
    } else {
      r.evidence.push_back({"dcbnl (" + ifname + ")", f.dcb_error});
      unknown = true;
    }
    if (f.pfc) {
      r.evidence.push_back({"dcbnl PFC-enabled priorities (" + ifname + ")", PriorityList(*f.pfc)});
      if (!Has(*f.pfc, prio)) missing.push_back("PFC");
    }
    // Shown, not judged: the length a link needs is not on the host.
    if (f.cable_length) {
      r.evidence.push_back({"dcbnl cable length (" + ifname + ", ieee_pfc.delay)",
                            std::to_string(*f.cable_length) + " m"});
    }
    if (f.prio2buffer && f.buffer_sizes && prio >= 0 && prio < 8 && f.prio2buffer->size() == 8 &&
        f.buffer_sizes->size() == 8) {
      const int b = (*f.prio2buffer)[static_cast<size_t>(prio)];
      if (b >= 0 && b < 8) {
        r.evidence.push_back({"dcbnl receive buffer of priority " + p + " (" + ifname + ")",
                              "buffer " + std::to_string(b) + ", " +
                                  std::to_string((*f.buffer_sizes)[static_cast<size_t>(b)]) +
                                  " bytes of " + std::to_string(f.buffer_total)});
      }
    }
    for (const auto& [point, map] :
         {std::make_pair("roce_np", &f.ecn_np), std::make_pair("roce_rp", &f.ecn_rp)}) {
      const std::string path = "/sys/class/net/" + ifname + "/ecn/" + point + "/enable/" + p;
      auto e = map->find(prio);
      if (e == map->end()) {
        r.evidence.push_back({path, f.ecn_error.empty() ? "absent" : f.ecn_error});
        unknown = true;
        continue;
      }
      r.evidence.push_back({path, e->second ? "1" : "0"});
      if (!e->second) missing.push_back(std::string("ECN ") + point);
    }
    const std::string fix = "in host.yaml, the nic of " + ifname + ": roce: { trust: dscp, pfc: [" +
                            p + "], ecn: [" + p + "] } (by hand: mlnx_qos -i " + ifname +
                            " --trust dscp --pfc " + MlnxQosPfc(prio) +
                            "; echo 1 > /sys/class/net/" + ifname + "/ecn/roce_{np,rp}/enable/" +
                            p + "), and the switch ports lossless on the same priority";
    if (!missing.empty()) {
      r.verdict = Verdict::kFail;
      std::string what;
      for (size_t i = 0; i < missing.size(); ++i) what += (i ? ", " : "") + missing[i];
      r.summary = what + " not enabled on priority " + p + ", the one NCCL's RoCE traffic uses";
      r.fix = fix;
    } else if (f.trust && *f.trust != "dscp") {
      r.verdict = Verdict::kWarn;
      r.summary = "trust " + *f.trust +
                  ": the DSCP of NCCL_IB_TC does not choose the priority "
                  "(untagged RoCE lands on priority 0)";
      r.fix = fix;
    } else if (unknown) {
      r.verdict = Verdict::kWarn;
      r.summary = "PFC/ECN on priority " + p + " could not all be read";
      r.fix = "run doctor as root on the host (dcbnl), or capture it with provisioner snapshot";
    } else {
      r.summary = "PFC and ECN enabled on priority " + p + " with DSCP trust";
    }
    sink.Add(std::move(r));
  }
}

}  // namespace provisioner
