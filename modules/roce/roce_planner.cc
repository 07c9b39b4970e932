#include "modules/roce/roce_planner.h"

#include <map>
#include <utility>
#include <vector>

#include "engine/model/selector.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

using nlohmann::json;

constexpr const char* kPoints[] = {"roce_np", "roce_rp"};

// Collects the changes once per id; two nics asking one netdev for different
// values is an error naming both.
class Changes {
 public:
  explicit Changes(PlanSink& sink) : sink_(sink) {}

  void Add(const NicSpec& nic, const std::string& ifname, const std::string& attribute, json before,
           json after, const std::string& what, const std::string& field) {
    const std::string id = std::string(kRoceModule) + "/" + ifname + "/" + attribute;
    auto [it, fresh] = seen_.emplace(id, std::make_pair(after, nic.name));
    if (!fresh) {
      if (it->second.first != after) {
        sink_.Error(field, "nic " + nic.name + " wants " + attribute + " " + after.dump() + " on " +
                               ifname + ", nic " + it->second.second + " wants " +
                               it->second.first.dump());
      }
      return;
    }
    if (before == after) return;
    const bool pfc = attribute == kPfcAttribute;
    Change c = MakeChange(kRoceModule, ifname, attribute, std::move(before), std::move(after),
                          Disruption::kLive, kPhaseRoce,
                          "nic " + nic.name + " wants " + what + " on " + ifname + "; " +
                              (pfc ? "the driver takes the link down and up to set it; " : "") +
                              kRoceLiveReason,
                          field);
    c.detail["nic"] = nic.name;
    // mlx5 sets PFC with the port toggled down and up
    // (mlx5e_dcbnl_ieee_setpfc -> mlx5_toggle_port_link).
    c.link_flap = pfc;
    sink_.AddChange(std::move(c));
  }

 private:
  PlanSink& sink_;
  std::map<std::string, std::pair<json, std::string>> seen_;
};

void PlanNetdev(const NicSpec& nic, const std::string& path, const std::string& ifname,
                const RoceNetdevFacts& f, Changes& changes, PlanSink& sink) {
  const NicRoceSpec& want = *nic.roce;
  if (want.trust) {
    if (!f.trust) {
      sink.Error(path + ".roce.trust",
                 "the DCB trust state of " + ifname + " could not be read: " + f.dcb_error);
    } else {
      changes.Add(nic, ifname, kTrustAttribute, *f.trust, *want.trust, "trust " + *want.trust,
                  path + ".roce.trust");
    }
  }
  if (want.pfc) {
    if (!f.pfc) {
      sink.Error(path + ".roce.pfc",
                 "the PFC state of " + ifname + " could not be read: " + f.dcb_error);
    } else {
      changes.Add(nic, ifname, kPfcAttribute, *f.pfc, *want.pfc,
                  "PFC on priorities " + PriorityList(*want.pfc), path + ".roce.pfc");
    }
  }
  if (!want.ecn && !want.cnp) return;
  if (!f.ecn_error.empty()) {
    sink.Error(path + (want.ecn ? ".roce.ecn" : ".roce.cnp"), f.ecn_error);
    return;
  }
  if (want.cnp) {
    // Live where NVIDIA's out-of-tree driver has the files; else the
    // firmware planner sets CNP_DSCP_P<n> / CNP_802P_PRIO_P<n>.
    if (want.cnp->dscp && f.cnp_dscp) {
      changes.Add(nic, ifname, kCnpDscpAttribute, *f.cnp_dscp, *want.cnp->dscp,
                  "CNP DSCP " + std::to_string(*want.cnp->dscp), path + ".roce.cnp.dscp");
    }
    if (want.cnp->priority && f.cnp_802p_prio) {
      changes.Add(nic, ifname, kCnpPriorityAttribute, *f.cnp_802p_prio, *want.cnp->priority,
                  "CNP 802.1p priority " + std::to_string(*want.cnp->priority),
                  path + ".roce.cnp.priority");
    }
  }
  // Without ecn/ (the upstream mlx5 driver has none) the firmware planner
  // sets ROCE_CC_PRIO_MASK_P<n> instead.
  if (!want.ecn || !f.ecn_dir) return;
  const std::string field = path + ".roce.ecn";
  for (const char* point : kPoints) {
    const std::map<int, bool>& now = std::string(point) == "roce_np" ? f.ecn_np : f.ecn_rp;
    for (int p : *want.ecn) {
      auto it = now.find(p);
      if (it == now.end()) {
        sink.Error(field, ifname + " has no ECN " + point + " enable for priority " +
                              std::to_string(p) + " (/sys/class/net/" + ifname + "/ecn/" + point +
                              "/enable/" + std::to_string(p) + ")");
        continue;
      }
      changes.Add(nic, ifname, EcnAttribute(point, p), it->second, true,
                  std::string("ECN ") + point + " on for priority " + std::to_string(p), field);
    }
  }
}

}  // namespace

std::string PriorityList(const std::vector<int>& priorities) {
  return nlohmann::json(priorities).dump();
}

std::string EcnAttribute(const std::string& point, int prio) {
  return "ecn." + point + "." + std::to_string(prio);
}

std::optional<EcnTarget> ParseEcnAttribute(const std::string& attribute) {
  for (const char* point : kPoints) {
    const std::string prefix = std::string("ecn.") + point + ".";
    if (attribute.size() == prefix.size() + 1 && attribute.compare(0, prefix.size(), prefix) == 0 &&
        attribute.back() >= '0' && attribute.back() <= '7') {
      return EcnTarget{point, attribute.back() - '0'};
    }
  }
  return std::nullopt;
}

bool WantsRoce(const DesiredState& desired) {
  for (const NicSpec& n : desired.nics) {
    if (n.roce && (n.roce->trust || n.roce->pfc || n.roce->ecn || n.roce->cnp)) return true;
  }
  return false;
}

void PlanRoce(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  Changes changes(sink);
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.roce || !(nic.roce->trust || nic.roce->pfc || nic.roce->ecn || nic.roce->cnp)) {
      continue;
    }
    const std::string path = DesiredState::NicPath(i);
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    // A selector matching nothing: reported once, by the pci module.
    if (pfs.empty()) continue;
    for (const PciFunction* pf : pfs) {
      if (pf->netdevs.empty()) {
        sink.Error(path + ".roce", pf->pci_address +
                                       " has no network interface (no net/ in its sysfs "
                                       "directory): its RoCE QoS cannot be set or checked");
        continue;
      }
      for (const std::string& ifname : pf->netdevs) {
        auto it = facts.roce.netdevs.find(ifname);
        if (it == facts.roce.netdevs.end()) {
          sink.Error(path + ".roce",
                     "the RoCE QoS state of " + ifname + " (" + pf->pci_address + ") was not read");
          continue;
        }
        PlanNetdev(nic, path, ifname, it->second, changes, sink);
      }
    }
  }
}

}  // namespace provisioner
