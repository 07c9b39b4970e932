// Which resource a planned change acts on (Change::resource), from the
// discovered facts: a module's Plan declares its changes' resources with
// these, so the engine can apply independent PFs at once (BuildPlanGraph).
#ifndef PROVISIONER_ENGINE_PLAN_RESOURCE_H_
#define PROVISIONER_ENGINE_PLAN_RESOURCE_H_

#include <cstddef>
#include <string>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner {

// The resource of a change whose target is a PCI function or a netdev:
// "pf:<PF>" for a PF, one of its VFs, or a netdev of either (an IPoIB child
// "ib0.8001" by its parent); "pci:<bdf>" for another PCI function (a bridge,
// whose config space is its own). "" (the whole host, a barrier) when the
// facts do not say whose it is: never wrongly concurrent.
std::string PciResourceOf(const HostFacts& facts, const std::string& target);

// Sets the resource of the changes sink.changes()[from...] that have none,
// by PciResourceOf their target.
void DeclarePciResources(const HostFacts& facts, PlanSink& sink, size_t from);

// The Plan of a module whose changes act on PCI functions and their netdevs:
// its pure planner `plan`, then DeclarePciResources on the changes it added
// (a PF's changes in order, PFs at once).
using PurePlanner = void (*)(const DesiredState&, const HostFacts&, PlanSink&);
void PlanByPciResource(PurePlanner plan, const DesiredState& desired, const HostFacts& facts,
                       PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_PLAN_RESOURCE_H_
