#include "engine/model/selector.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "engine/model/pci_address.h"
#include "engine/model/topology.h"

namespace provisioner {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.rfind("0x", 0) == 0) s.erase(0, 2);
  return s;
}

std::string BracketList(const std::vector<std::string>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "]";
}

}  // namespace

std::string CanonicalPciAddress(const std::string& address) {
  auto a = PciAddress::Parse(address);
  // A PF in a VMD domain, as discovery and the operator's files name it.
  if (!a) a = PciAddress::ParseSysfsName(address);
  return a ? a->ToString() : address;
}

bool SelectorMatches(const NicSelector& sel, const PciFunction& pf) {
  if (sel.vendor && Lower(*sel.vendor) != Lower(pf.vendor)) return false;
  if (sel.device_id && Lower(*sel.device_id) != Lower(pf.device_id)) return false;
  if (!sel.root_devices.empty()) {
    bool any = false;
    for (const auto& r : sel.root_devices) {
      any = any || CanonicalPciAddress(r) == Lower(pf.pci_address);
    }
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

std::string DescribeSelector(const NicSelector& sel) {
  std::vector<std::string> parts;
  if (sel.vendor) parts.push_back("vendor " + *sel.vendor);
  if (sel.device_id) parts.push_back("deviceID " + *sel.device_id);
  if (!sel.root_devices.empty()) parts.push_back("rootDevices " + BracketList(sel.root_devices));
  if (!sel.pf_names.empty()) parts.push_back("pfNames " + BracketList(sel.pf_names));
  if (sel.near_gpu) parts.push_back("nearGpu " + std::to_string(*sel.near_gpu));
  if (parts.empty()) return "no fields";
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  return out;
}

std::vector<std::pair<std::string, std::string>> CheckUnmatchedSelectors(
    const DesiredState& desired, const HostFacts& facts) {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (nic.selector.near_gpu || !SelectPfs(nic, facts).empty()) continue;
    out.emplace_back(
        DesiredState::NicPath(i) + ".nicSelector",
        "selects no PCI function on this host (" + DescribeSelector(nic.selector) + ")");
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> CheckNicOverlaps(const DesiredState& desired,
                                                                  const HostFacts& facts) {
  std::vector<std::pair<std::string, std::string>> out;
  std::map<std::string, size_t> claims;  // PF address -> first nic selecting it
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    std::set<size_t> reported;  // one message per pair of nics
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      auto [it, inserted] = claims.emplace(pf->pci_address, i);
      if (inserted) continue;
      const size_t first = it->second;
      const NicSpec& other = desired.nics[first];
      if (nic.selector.near_gpu && other.selector.near_gpu) continue;  // CheckNearGpu's
      if (!reported.insert(first).second) continue;
      out.emplace_back(DesiredState::NicPath(i) + ".nicSelector",
                       "selects " + pf->pci_address + ", which " + DesiredState::NicPath(first) +
                           " (" + other.name + ") also selects: two nics cannot share a PF " +
                           "(each would set its VFs and publish it as its own resource); " +
                           "narrow one with rootDevices or pfNames");
    }
  }
  return out;
}

}  // namespace provisioner
