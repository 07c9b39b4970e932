#include "engine/plan/resource.h"

#include <algorithm>

namespace provisioner {
namespace {

bool Has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string OfFunction(const HostFacts& facts, const PciFunction& f) {
  if (f.IsVf()) return "pf:" + f.physfn;
  if (f.sriov || !f.netdevs.empty() || f.IsNetwork()) return "pf:" + f.pci_address;
  (void)facts;
  return "pci:" + f.pci_address;
}

std::string OfNetdev(const HostFacts& facts, const std::string& ifname) {
  for (const PciFunction& f : facts.pci) {
    if (Has(f.netdevs, ifname)) return OfFunction(facts, f);
    if (!f.sriov) continue;
    for (const VfInfo& vf : f.sriov->vfs) {
      if (Has(vf.netdevs, ifname)) return "pf:" + f.pci_address;
    }
  }
  return "";
}

}  // namespace

std::string PciResourceOf(const HostFacts& facts, const std::string& target) {
  if (const PciFunction* f = facts.FindPci(target)) return OfFunction(facts, *f);
  if (std::string r = OfNetdev(facts, target); !r.empty()) return r;
  // An IPoIB child (<parent>.<pkey>) that this plan creates.
  if (size_t dot = target.rfind('.'); dot != std::string::npos && dot > 0) {
    return OfNetdev(facts, target.substr(0, dot));
  }
  return "";
}

void DeclarePciResources(const HostFacts& facts, PlanSink& sink, size_t from) {
  auto& changes = sink.changes();
  for (size_t i = from; i < changes.size(); ++i) {
    if (changes[i].resource.empty()) changes[i].resource = PciResourceOf(facts, changes[i].target);
  }
}

void PlanByPciResource(PurePlanner plan, const DesiredState& desired, const HostFacts& facts,
                       PlanSink& sink) {
  const size_t from = sink.changes().size();
  plan(desired, facts, sink);
  DeclarePciResources(facts, sink, from);
}

}  // namespace provisioner
