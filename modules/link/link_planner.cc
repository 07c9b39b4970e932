#include "modules/link/link_planner.h"

#include <set>
#include <utility>

#include "engine/model/selector.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

Change LinkChange(const std::string& target, const std::string& attribute, nlohmann::json before,
                  nlohmann::json after, std::string reason, std::string field, const NicSpec& nic) {
  Change c = MakeChange(kLinkModule, target, attribute, std::move(before), std::move(after),
                        Disruption::kLive, kPhaseLinks, std::move(reason), std::move(field));
  c.detail["nic"] = nic.name;
  return c;
}

bool BringsUp(const NicSpec& nic) {
  return nic.mtu || (nic.num_vfs && *nic.num_vfs > 0) ||
         nic.device_type == std::optional<std::string>("netdevice");
}

}  // namespace

void PlanLinks(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  std::set<std::string> planned;
  auto add = [&](Change c) {
    if (planned.insert(c.id).second) sink.AddChange(std::move(c));
  };
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    const std::string path = DesiredState::NicPath(i);
    if (!BringsUp(nic)) continue;  // unmanaged links stay as they are
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    // A selector matching nothing: reported once, by the pci module.
    if (pfs.empty()) continue;
    if (nic.mtu && *nic.mtu < kMinMtu) {
      sink.Error(path + ".mtu",
                 std::to_string(*nic.mtu) + " is below the minimum MTU " + std::to_string(kMinMtu));
      continue;
    }
    for (const PciFunction* pf : pfs) {
      if (nic.mtu && pf->netdevs.empty()) {
        // Nothing to set or check it on: never "converged".
        sink.Error(path + ".mtu",
                   pf->pci_address + " has no network interface (no net/ in its sysfs directory" +
                       (pf->driver.empty() ? ", no driver bound: load its driver first"
                                           : ", driver " + pf->driver) +
                       "); its mtu cannot be set or checked");
      }
      for (const std::string& ifname : pf->netdevs) {
        auto it = facts.links.find(ifname);
        // Known: the link's state. Not captured (a partial capture, ghw's
        // empty net/<if>/ directories): the steps are planned with an
        // unknown before, and the plan says so. On the live root the kernel
        // always shows a link's state: unread is an error there.
        const LinkFacts* l = it == facts.links.end() ? nullptr : &it->second;
        if (l == nullptr && facts.links_not_captured.count(ifname) == 0) {
          sink.Error(
              path, "the link state of " + ifname + " (" + pf->pci_address + ") could not be read");
          continue;
        }
        if (l == nullptr) {
          sink.Warning(path, "the link state of " + ifname + " (" + pf->pci_address +
                                 ") is not in the tree (a partial capture): its mtu and up "
                                 "steps are planned with an unknown current value");
        }
        if (nic.mtu) {
          const int want = *nic.mtu;
          if (l != nullptr && ((l->min_mtu && want < *l->min_mtu) ||
                               (l->max_mtu && *l->max_mtu > 0 && want > *l->max_mtu))) {
            sink.Error(path + ".mtu", std::to_string(want) + " is outside the MTU range of " +
                                          ifname + " (" +
                                          (l->min_mtu ? std::to_string(*l->min_mtu) : "?") + ".." +
                                          (l->max_mtu ? std::to_string(*l->max_mtu) : "?") + ")");
          } else if (l == nullptr || l->mtu != want) {
            add(LinkChange(
                ifname, kMtuAttribute, l == nullptr ? nlohmann::json() : nlohmann::json(l->mtu),
                want, "nic " + nic.name + " wants mtu " + std::to_string(want) + " on " + ifname,
                path + ".mtu", nic));
          }
        }
        if (l == nullptr || !l->admin_up) {
          add(LinkChange(ifname, kUpAttribute,
                         l == nullptr ? nlohmann::json() : nlohmann::json(false), true,
                         "nic " + nic.name + " is configured: " + ifname + " up", path, nic));
        }
      }
      if (nic.device_type != std::optional<std::string>("netdevice") || !pf->sriov) continue;
      // The VFs there after numVfs: desired count, else the current one.
      const int vfs = nic.num_vfs ? *nic.num_vfs : pf->sriov->num_vfs;
      if (vfs <= 0) continue;
      nlohmann::json before = true;
      if (vfs != pf->sriov->num_vfs || static_cast<int>(pf->sriov->vfs.size()) != vfs) {
        before = nullptr;  // VFs created (or re-created) by this plan
      } else {
        for (const VfInfo& vf : pf->sriov->vfs) {
          for (const std::string& n : vf.netdevs) {
            auto it = facts.links.find(n);
            if (it != facts.links.end() && !it->second.admin_up) before = false;
          }
        }
      }
      if (before == true) continue;
      add(LinkChange(pf->pci_address, kVfsUpAttribute, before, true,
                     "nic " + nic.name + " has deviceType netdevice: its VF netdevs up",
                     path + ".deviceType", nic));
    }
  }
}

}  // namespace provisioner
