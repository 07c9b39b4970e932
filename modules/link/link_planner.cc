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
  bool groups = false;
  for (const VfGroupSpec& g : nic.vf_groups) {
    groups = groups || g.vf_mtu || g.device_type == std::optional<std::string>("netdevice");
  }
  return groups || nic.mtu || nic.vf_mtu || (nic.num_vfs && *nic.num_vfs > 0) ||
         nic.device_type == std::optional<std::string>("netdevice");
}

// The runs of VFs whose deviceType (their group's, else the nic's) is
// netdevice: the VFs whose netdevs vfsUp brings up. A vfio-pci group has no
// netdevs; a netdevice group of a nic without (or with another) deviceType
// has them.
// `field` is the deviceType that asks (of the run's first group that sets
// its own, else the nic's).
struct NetdeviceRun {
  VfIndexRange range;
  std::string field;
};
std::vector<NetdeviceRun> NetdeviceRuns(const NicSpec& nic, int count, const std::string& path) {
  std::vector<NetdeviceRun> out;
  for (const VfSegment& seg : VfSegments(nic, count)) {
    if (seg.spec.device_type != std::optional<std::string>("netdevice")) continue;
    if (!out.empty() && out.back().range.last + 1 == seg.first) {
      out.back().range.last = seg.last;
      continue;
    }
    const bool own = seg.group >= 0 && nic.vf_groups[static_cast<size_t>(seg.group)].device_type;
    out.push_back(
        {{seg.first, seg.last},
         (own ? path + ".vfGroups[" + std::to_string(seg.group) + "]" : path) + ".deviceType"});
  }
  return out;
}

std::string RangeText(const VfIndexRange& r) {
  return std::to_string(r.first) + "-" + std::to_string(r.last);
}

}  // namespace

void PlanVfMtu(const PciFunction& pf, const VfMtuRequest& req, const HostFacts& facts,
               PlanSink& sink) {
  if (!pf.sriov || req.count <= 0) return;
  const SriovInfo& s = *pf.sriov;
  if (req.range.first < 0 || req.range.last < req.range.first || req.range.last >= req.count) {
    sink.Error(req.field_path, "VFs " + RangeText(req.range) + " are not VFs of " + pf.pci_address +
                                   " (it will have " + std::to_string(req.count) + ")");
    return;
  }
  const std::string pf_netdev = pf.netdevs.empty() ? "" : pf.netdevs.front();
  const LinkFacts* pf_link = nullptr;
  if (auto it = facts.links.find(pf_netdev); !pf_netdev.empty() && it != facts.links.end()) {
    pf_link = &it->second;
  }
  if (!req.pf_mtu && pf_link != nullptr && req.mtu > pf_link->mtu) {
    sink.Error(req.field_path,
               std::to_string(req.mtu) + " is above the MTU of the PF " + pf_netdev + " (" +
                   pf.pci_address + "), " + std::to_string(pf_link->mtu) +
                   ": a VF cannot carry frames its PF's port does not; set the nic's mtu to " +
                   std::to_string(req.mtu) + " or more");
    return;
  }
  const bool recreated = req.count != s.num_vfs || static_cast<int>(s.vfs.size()) != req.count;
  const std::string want_driver = req.device_type == std::optional<std::string>("netdevice")
                                      ? VfNetdeviceDriver(pf.driver)
                                      : std::string();
  nlohmann::json before = nullptr;
  bool same = !recreated;
  if (!recreated) {
    before = nlohmann::json::array();
    for (int n = req.range.first; n <= req.range.last; ++n) {
      const VfInfo& vf = s.vfs[static_cast<size_t>(n)];
      const LinkFacts* l = nullptr;
      if (!vf.netdevs.empty()) {
        if (auto it = facts.links.find(vf.netdevs.front()); it != facts.links.end()) {
          l = &it->second;
        }
      }
      if (l != nullptr && l->max_mtu && *l->max_mtu > 0 && req.mtu > *l->max_mtu) {
        sink.Error(req.field_path, std::to_string(req.mtu) + " is above the largest MTU of " +
                                       vf.netdevs.front() + " (VF " + std::to_string(n) + " of " +
                                       pf.pci_address + "), " + std::to_string(*l->max_mtu));
        return;
      }
      before.push_back(l != nullptr ? nlohmann::json(l->mtu) : nlohmann::json(nullptr));
      // Rebound to the network driver by phase binding: a new netdev.
      const bool rebound = !want_driver.empty() && vf.driver != want_driver;
      same = same && l != nullptr && l->mtu == req.mtu && !rebound;
    }
  }
  if (same) return;
  const bool whole = req.range.first == 0 && req.range.last == req.count - 1;
  Change c = MakeChange(kLinkModule, pf.pci_address, kVfMtuAttribute, std::move(before), req.mtu,
                        Disruption::kLive, kPhaseLinks,
                        "nic " + req.nic + " wants mtu " + std::to_string(req.mtu) + " on " +
                            (whole ? "its VF netdevs" : "VFs " + RangeText(req.range)),
                        req.field_path);
  if (!whole) c.id += "#" + RangeText(req.range);
  c.detail["nic"] = req.nic;
  c.detail["first"] = req.range.first;
  c.detail["last"] = req.range.last;
  sink.AddChange(std::move(c));
}

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
      if (!pf->sriov) continue;
      // The VFs there after numVfs: desired count, else the current one.
      const int vfs = nic.num_vfs ? *nic.num_vfs : pf->sriov->num_vfs;
      if (vfs <= 0) continue;
      // vfMtu per range: a group's (its own, else the nic's), the nic's for
      // VFs in no group. A vfio-pci group has no netdev to carry the nic's
      // vfMtu: not planned there (its own vfMtu is the loader's error).
      for (const VfSegment& seg : VfSegments(nic, vfs)) {
        const VfGroupSpec& e = seg.spec;
        if (!e.vf_mtu) continue;
        const bool own = seg.group >= 0 && nic.vf_groups[static_cast<size_t>(seg.group)].vf_mtu;
        if (!own && e.device_type == std::optional<std::string>("vfio-pci")) continue;
        VfMtuRequest req;
        req.mtu = *e.vf_mtu;
        req.count = vfs;
        req.range = {seg.first, seg.last};
        req.pf_mtu = nic.mtu;
        req.device_type = e.device_type;
        req.nic = nic.name;
        req.field_path =
            (own ? path + ".vfGroups[" + std::to_string(seg.group) + "]" : path) + ".vfMtu";
        PlanVfMtu(*pf, req, facts, sink);
      }
      const bool recreated =
          vfs != pf->sriov->num_vfs || static_cast<int>(pf->sriov->vfs.size()) != vfs;
      for (const NetdeviceRun& r : NetdeviceRuns(nic, vfs, path)) {
        const VfIndexRange& run = r.range;
        nlohmann::json before = true;
        if (recreated) {
          before = nullptr;  // VFs created (or re-created) by this plan
        } else {
          for (int n = run.first; n <= run.last; ++n) {
            for (const std::string& name : pf->sriov->vfs[static_cast<size_t>(n)].netdevs) {
              auto it = facts.links.find(name);
              if (it != facts.links.end() && !it->second.admin_up) before = false;
            }
          }
        }
        if (before == true) continue;
        const bool whole = run.first == 0 && run.last == vfs - 1;
        Change c = LinkChange(pf->pci_address, kVfsUpAttribute, before, true,
                              "nic " + nic.name + " has deviceType netdevice" +
                                  (whole ? std::string(": its VF netdevs up")
                                         : " on VFs " + RangeText(run) + ": their netdevs up"),
                              r.field, nic);
        if (!whole) {
          c.id += "#" + RangeText(run);
          c.detail["first"] = run.first;
          c.detail["last"] = run.last;
        }
        add(std::move(c));
      }
    }
  }
}

}  // namespace provisioner
