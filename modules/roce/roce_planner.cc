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
    Change c = MakeChange(
        kRoceModule, ifname, attribute, std::move(before), std::move(after), Disruption::kLive,
        kPhaseRoce, "nic " + nic.name + " wants " + what + " on " + ifname + "; " + kRoceLiveReason,
        field);
    c.detail["nic"] = nic.name;
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
  if (!want.ecn) return;
  const std::string field = path + ".roce.ecn";
  if (!f.ecn_error.empty()) {
    sink.Error(field, f.ecn_error);
    return;
  }
  if (!f.ecn_dir) {
    sink.Error(field, ifname + " has no ECN settings (/sys/class/net/" + ifname +
                          "/ecn: only mlx5 netdevs have them)");
    return;
  }
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
    if (n.roce && (n.roce->trust || n.roce->pfc || n.roce->ecn)) return true;
  }
  return false;
}

void PlanRoce(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  Changes changes(sink);
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.roce || !(nic.roce->trust || nic.roce->pfc || nic.roce->ecn)) continue;
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
