#include "modules/eswitch/eswitch_planner.h"

#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "engine/model/selector.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

using nlohmann::json;

constexpr char kSwitchdev[] = "switchdev";

bool Digits(const std::string& s) {
  return !s.empty() && s.size() <= 5 && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::optional<int> RepresentorVfIndex(const std::string& phys_port_name) {
  if (phys_port_name.rfind("pf", 0) != 0) return std::nullopt;
  const size_t vf = phys_port_name.find("vf", 2);
  if (vf == std::string::npos) return std::nullopt;
  const std::string pf = phys_port_name.substr(2, vf - 2);
  const std::string index = phys_port_name.substr(vf + 2);
  if (!Digits(pf) || !Digits(index)) return std::nullopt;
  return std::atoi(index.c_str());
}

void PlanEswitch(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  // One mode per PF across nics: two nics asking different ones is an error.
  std::map<std::string, std::pair<std::string, std::string>> asked;  // bdf -> (mode, nic)
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.eswitch_mode) continue;
    const std::string field = DesiredState::NicPath(i) + ".eswitchMode";
    const std::string& want = *nic.eswitch_mode;
    // A selector matching nothing: reported once, by the pci module.
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      const std::string& bdf = pf->pci_address;
      auto [it, fresh] = asked.emplace(bdf, std::make_pair(want, nic.name));
      if (!fresh) {
        if (it->second.first != want) {
          sink.Error(field, "nic " + nic.name + " wants E-Switch mode " + want + " on " + bdf +
                                ", nic " + it->second.second + " wants " + it->second.first);
        }
        continue;
      }
      if (!pf->sriov) {
        sink.Error(field, bdf +
                              " has no SR-IOV (no sriov_totalvfs): it has no E-Switch for VFs "
                              "to set (SRIOV_EN in its firmware, spec.nics[].firmware)");
        continue;
      }
      auto f = facts.eswitch.pfs.find(bdf);
      if (f == facts.eswitch.pfs.end() || !f->second.mode) {
        const std::string why = f == facts.eswitch.pfs.end() ? "not read" : f->second.error;
        sink.Error(field, "the devlink E-Switch mode of " + bdf + " could not be read: " + why);
        continue;
      }
      const EswitchPfFacts& e = f->second;
      if (*e.mode == want) continue;
      const bool ice = pf->driver == "ice";
      const bool mlx5 = pf->driver == "mlx5_core";
      const int vfs = pf->sriov->num_vfs;
      if (ice && vfs > 0) {
        sink.Error(field, "ice changes the E-Switch mode of " + bdf +
                              " only while the PF has no VFs (ice_eswitch_mode_set answers "
                              "EOPNOTSUPP), and it has " +
                              std::to_string(vfs) +
                              ": apply numVfs: 0 first, then this mode with the VFs");
        continue;
      }
      std::string reason = "nic " + nic.name + " wants E-Switch mode " + want + " on " + bdf;
      json detail = json::object();
      detail["nic"] = nic.name;
      detail["driver"] = pf->driver;
      std::string pf_netdev;
      for (const std::string& n : pf->netdevs) {
        bool rep = false;
        for (const auto& [index, name] : e.representors) rep = rep || name == n;
        if (!rep) {
          pf_netdev = n;
          break;
        }
      }
      if (!pf_netdev.empty()) detail["pfNetdev"] = pf_netdev;
      if (mlx5) {
        if (want == kSwitchdev && e.flow_steering_mode && *e.flow_steering_mode != "smfs") {
          detail["flowSteeringMode"] = "smfs";
          reason += "; flow_steering_mode " + *e.flow_steering_mode + " -> smfs first";
        }
        if (want == kSwitchdev && !pf_netdev.empty()) {
          detail["hwTcOffload"] = true;
          reason += "; hw-tc-offload on for " + pf_netdev;
        }
        detail["rebindVfs"] = true;
        const int n = nic.num_vfs.value_or(vfs);
        if (n > 0) {
          reason += "; its " + std::to_string(n) +
                    " VFs unbound and bound again around the change (their netdevs come back "
                    "new)";
        }
      }
      if (want == kSwitchdev) {
        reason += "; one representor netdev per VF appears";
      } else {
        reason += "; the VF representors go";
      }
      Change c =
          MakeChange(kEswitchModule, bdf, kEswitchModeAttribute, *e.mode, want, Disruption::kLive,
                     ice ? kPhaseEswitchBeforeVfs : kPhaseEswitch, reason, field);
      for (const auto& [k, v] : detail.items()) c.detail[k] = v;
      c.resource = "pf:" + bdf;
      sink.AddChange(std::move(c));
    }
  }
}

void CheckEswitch(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  std::map<std::string, std::string> wanted;  // bdf -> mode
  if (desired != nullptr) {
    for (const NicSpec& nic : desired->nics) {
      if (!nic.eswitch_mode) continue;
      for (const PciFunction* pf : SelectPfs(nic, facts))
        wanted[pf->pci_address] = *nic.eswitch_mode;
    }
  }
  for (const auto& [bdf, e] : facts.eswitch.pfs) {
    const PciFunction* pf = facts.FindPci(bdf);
    if (pf == nullptr || !pf->sriov || !e.mode) continue;
    const std::string devlink = "devlink pci/" + bdf;
    if (auto w = wanted.find(bdf); w != wanted.end() && w->second != *e.mode) {
      sink.Add(CheckResult{
          kEswitchModule,
          "eswitch.mode",
          bdf,
          Verdict::kFail,
          "E-Switch mode is " + *e.mode + ", host.yaml wants " + w->second,
          {{devlink + " eswitch mode", *e.mode}},
          "provisioner apply (devlink dev eswitch set pci/" + bdf + " mode " + w->second + ")"});
    }
    if (*e.mode != kSwitchdev) continue;
    const int vfs = pf->sriov->num_vfs;
    std::vector<int> missing;
    for (int i = 0; i < vfs; ++i) {
      if (e.representors.count(i) == 0) missing.push_back(i);
    }
    std::string have;
    for (const auto& [i, name] : e.representors) have += (have.empty() ? "" : ", ") + name;
    std::vector<std::pair<std::string, std::string>> evidence = {
        {devlink + " eswitch mode", *e.mode},
        {"/sys/bus/pci/devices/" + bdf + "/sriov_numvfs", std::to_string(vfs)},
        {"representors (net/*/phys_port_name pf<N>vf<M>)", have.empty() ? "none" : have}};
    if (missing.empty()) {
      sink.Add(CheckResult{
          kEswitchModule, "eswitch.representors", bdf, Verdict::kOk,
          "switchdev with a representor for each of its " + std::to_string(vfs) + " VFs", evidence,
          ""});
      continue;
    }
    std::string list;
    for (int i : missing) list += (list.empty() ? "" : ", ") + std::to_string(i);
    sink.Add(CheckResult{
        kEswitchModule, "eswitch.representors", bdf, Verdict::kFail,
        "switchdev, but VF " + list + " of " + std::to_string(vfs) +
            " have no representor netdev: OVS/TC cannot forward to them",
        evidence,
        "set the mode again with the VFs present (provisioner apply with eswitchMode: legacy, "
        "then switchdev; or devlink dev eswitch set pci/" +
            bdf + " mode legacy && devlink dev eswitch set pci/" + bdf +
            " mode switchdev), and check dmesg for the driver's representor errors"});
  }
}

}  // namespace provisioner
