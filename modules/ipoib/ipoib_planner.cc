#include "modules/ipoib/ipoib_planner.h"

#include <algorithm>
#include <set>
#include <utility>

#include "engine/config/ip.h"
#include "engine/model/selector.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

std::string Canonical(const std::string& text) {
  auto p = config::ParseCidr(text);
  if (!p) return text;  // the loader reported it
  return config::FormatIp(p->address) + "/" + std::to_string(p->length);
}

// The PF's IPoIB netdev (not a child), or null.
const IpoibInterface* ParentOf(const PciFunction& pf, const HostFacts& facts) {
  for (const std::string& n : pf.netdevs) {
    auto it = facts.ipoib.interfaces.find(n);
    if (it != facts.ipoib.interfaces.end() && it->second.parent.empty()) return &it->second;
  }
  return nullptr;
}

// Why the PF has no IPoIB netdev, for the error.
std::string WhyNoIpoib(const PciFunction& pf, const HostFacts& facts) {
  if (pf.netdevs.empty()) {
    return pf.pci_address + " has no netdev (no net/ in its sysfs directory; is ib_ipoib loaded?)";
  }
  std::string list;
  for (const std::string& n : pf.netdevs) {
    auto t = facts.ipoib.not_ipoib.find(n);
    list += (list.empty() ? "" : ", ") + n +
            (t != facts.ipoib.not_ipoib.end()
                 ? " (type " + std::to_string(t->second) + (t->second == 1 ? ", Ethernet)" : ")")
                 : "");
  }
  return pf.pci_address + " has no IPoIB netdev (type 32): " + list;
}

class Planner {
 public:
  Planner(const HostFacts& facts, PlanSink& sink) : facts_(facts), sink_(sink) {}

  void Nic(const NicSpec& nic, const std::string& path) {
    const IpoibSpec& ib = *nic.ipoib;
    const std::string ib_path = path + ".ipoib";
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts_);
    // A selector matching nothing: reported once, by the pci module.
    if (pfs.empty()) return;
    for (const PciFunction* pf : pfs) {
      const IpoibInterface* parent = ParentOf(*pf, facts_);
      if (parent == nullptr) {
        if (nic.link_type == "ib") {
          sink_.Warning(ib_path, WhyNoIpoib(*pf, facts_) +
                                     "; planned after the reboot that linkType ib needs");
        } else {
          sink_.Error(ib_path, WhyNoIpoib(*pf, facts_) +
                                   ": ipoib needs an InfiniBand port (set linkType: ib, then "
                                   "reboot)");
        }
        continue;
      }
      Interface(nic, ib, path, *parent);
    }
  }

 private:
  void Add(const NicSpec& nic, const std::string& target, const char* attribute,
           nlohmann::json before, nlohmann::json after, std::string reason, std::string field) {
    Change c = MakeChange(kIpoibModule, target, attribute, std::move(before), std::move(after),
                          Disruption::kLive, kPhaseLinks, std::move(reason), std::move(field));
    c.detail["nic"] = nic.name;
    if (planned_.insert(c.id).second) sink_.AddChange(std::move(c));
  }

  static nlohmann::json Or(const std::optional<int>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
  }

  void Interface(const NicSpec& nic, const IpoibSpec& ib, const std::string& path,
                 const IpoibInterface& parent) {
    const std::string ib_path = path + ".ipoib";
    const std::string& pname = parent.name;
    if (ib.mode == "connected" && !parent.cm_supported) {
      sink_.Error(ib_path + ".mode",
                  pname + " cannot run connected mode: its hardware address " +
                      parent.address.substr(0, 11) +
                      " has no RC flag (0x80 in the first byte; mlx5 enhanced IPoIB), so the "
                      "kernel refuses \"connected\" with EINVAL; use datagram, or load ib_ipoib "
                      "with ipoib_enhanced=0");
      return;
    }
    const std::string mode = ib.mode.value_or(parent.mode);
    if (ib.mtu && !ib.mode && mode == "datagram" && *ib.mtu > kIpoibDatagramMaxMtu) {
      sink_.Error(ib_path + ".mtu", std::to_string(*ib.mtu) + " is above datagram mode's largest " +
                                        "MTU " + std::to_string(kIpoibDatagramMaxMtu) + ", and " +
                                        pname + " is in datagram mode: set mode: connected");
      return;
    }
    // Interfaces in apply order: the PF's netdev, then each child.
    struct Target {
      std::string name;
      const IpoibInterface* now;  // null: created by this plan
      bool mode_changes = false;
    };
    std::vector<Target> targets;
    targets.push_back({pname, &parent});
    const std::string nic_label = "nic " + nic.name;

    // 1. mode of the PF's netdev.
    if (ib.mode && parent.mode != *ib.mode) {
      Add(nic, pname, kIpoibMode,
          parent.mode.empty() ? nlohmann::json(nullptr) : nlohmann::json(parent.mode), *ib.mode,
          nic_label + " wants IPoIB " + *ib.mode + " mode on " + pname, ib_path + ".mode");
      targets[0].mode_changes = true;
    }
    // 2. one child per pkey.
    for (size_t k = 0; k < ib.pkeys.size(); ++k) {
      auto pkey = ParsePkey(ib.pkeys[k]);
      if (!pkey || !IsChildPkey(*pkey)) continue;  // the loader reported it
      const std::string child = IpoibChildName(pname, *pkey);
      const std::string field = ib_path + ".pkeys[" + std::to_string(k) + "]";
      auto it = facts_.ipoib.interfaces.find(child);
      if (it != facts_.ipoib.interfaces.end()) {
        if (it->second.parent != pname || it->second.pkey != pkey) {
          sink_.Error(field, child + " exists but is no child of " + pname + " for P_Key " +
                                 PkeyText(*pkey) + " (parent " +
                                 (it->second.parent.empty() ? "none" : it->second.parent) +
                                 ", pkey " + (it->second.pkey ? PkeyText(*it->second.pkey) : "?") +
                                 ")");
          continue;
        }
        targets.push_back({child, &it->second});
        continue;
      }
      Change c =
          MakeChange(kIpoibModule, child, kIpoibChild, false, true, Disruption::kLive, kPhaseLinks,
                     nic_label + " wants P_Key " + PkeyText(*pkey) + ": child " + child + " of " +
                         pname + " (create_child)",
                     field);
      c.detail["nic"] = nic.name;
      c.detail["parent"] = pname;
      c.detail["pkey"] = PkeyText(*pkey);
      if (planned_.insert(c.id).second) sink_.AddChange(std::move(c));
      targets.push_back({child, nullptr});
    }
    // 3. mode of the children.
    for (size_t t = 1; t < targets.size() && ib.mode; ++t) {
      const IpoibInterface* now = targets[t].now;
      if (now != nullptr && now->mode == *ib.mode) continue;
      Add(nic, targets[t].name, kIpoibMode,
          now == nullptr || now->mode.empty() ? nlohmann::json(nullptr) : nlohmann::json(now->mode),
          *ib.mode, nic_label + " wants IPoIB " + *ib.mode + " mode on " + targets[t].name,
          ib_path + ".mode");
      targets[t].mode_changes = true;
    }
    // 4. mtu, after any mode change (which resets it).
    for (const Target& t : targets) {
      if (!ib.mtu) break;
      if (t.now != nullptr && t.now->mtu == ib.mtu && !t.mode_changes) continue;
      Add(nic, t.name, kIpoibMtu, t.now != nullptr ? Or(t.now->mtu) : nlohmann::json(nullptr),
          *ib.mtu,
          nic_label + " wants mtu " + std::to_string(*ib.mtu) + " on " + t.name +
              (t.now != nullptr && t.now->mtu == ib.mtu ? " (set again: the mode change resets it)"
                                                        : ""),
          ib_path + ".mtu");
    }
    // 5. addresses of the PF's netdev.
    if (ib.addresses) {
      std::vector<std::string> want;
      for (const std::string& a : *ib.addresses) want.push_back(Canonical(a));
      std::sort(want.begin(), want.end());
      want.erase(std::unique(want.begin(), want.end()), want.end());
      if (!parent.addresses) {
        sink_.Error(ib_path + ".addresses", "the addresses of " + pname + " could not be read");
      } else if (*parent.addresses != want) {
        Add(nic, pname, kIpoibAddresses, *parent.addresses, want,
            nic_label + " wants " + std::to_string(want.size()) + " address(es) on " + pname,
            ib_path + ".addresses");
      }
    }
    // 6. everything up.
    for (const Target& t : targets) {
      if (t.now != nullptr && t.now->admin_up == true) continue;
      Add(nic, t.name, kIpoibUp,
          t.now != nullptr && t.now->admin_up.has_value() ? nlohmann::json(false)
                                                          : nlohmann::json(nullptr),
          true, nic_label + " configures IPoIB: " + t.name + " up", ib_path);
    }
  }

  const HostFacts& facts_;
  PlanSink& sink_;
  std::set<std::string> planned_;
};

}  // namespace

bool WantsIpoib(const DesiredState& desired) {
  for (const NicSpec& n : desired.nics) {
    if (n.ipoib) return true;
  }
  return false;
}

void PlanIpoib(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  Planner planner(facts, sink);
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    if (desired.nics[i].ipoib) planner.Nic(desired.nics[i], DesiredState::NicPath(i));
  }
}

}  // namespace provisioner
