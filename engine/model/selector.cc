#include "engine/model/selector.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "engine/model/topology.h"

namespace provisioner {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.rfind("0x", 0) == 0) s.erase(0, 2);
  return s;
}

std::string FullAddress(const std::string& a) {
  std::string l = Lower(a);
  // "af:00.0" -> "0000:af:00.0"
  if (std::count(l.begin(), l.end(), ':') == 1) l = "0000:" + l;
  return l;
}

}  // namespace

bool SelectorMatches(const NicSelector& sel, const PciFunction& pf) {
  if (sel.vendor && Lower(*sel.vendor) != Lower(pf.vendor)) return false;
  if (sel.device_id && Lower(*sel.device_id) != Lower(pf.device_id)) return false;
  if (!sel.root_devices.empty()) {
    bool any = false;
    for (const auto& r : sel.root_devices) any = any || FullAddress(r) == Lower(pf.pci_address);
    if (!any) return false;
  }
  if (!sel.pf_names.empty()) {
    bool any = false;
    for (const auto& n : sel.pf_names) {
      any = any || std::find(pf.netdevs.begin(), pf.netdevs.end(), n) != pf.netdevs.end();
    }
    if (!any) return false;
  }
  return true;
}

std::vector<const PciFunction*> SelectPfs(const NicSpec& nic, const HostFacts& facts) {
  std::vector<const PciFunction*> out;
  if (nic.selector.near_gpu) {
    // One PF: the nearest to that GPU; none when it is remote and that is not
    // allowed (CheckNearGpu says why, with the conflicts between nics).
    NearGpuChoice c = ChooseNearGpu(nic.selector, facts);
    if (c.pf != nullptr && (!c.remote() || nic.selector.allow_remote)) out.push_back(c.pf);
    return out;
  }
  for (const auto& f : facts.pci) {
    if (!f.IsNetwork() || f.IsVf()) continue;
    if (SelectorMatches(nic.selector, f)) out.push_back(&f);
  }
  return out;
}

}  // namespace provisioner
