#include "modules/topology/topology_module.h"

#include "engine/model/topology.h"
#include "engine/module/registry.h"

namespace provisioner {

Status TopologyModule::Discover(HostContext& ctx, HostFacts& facts) {
  (void)ctx;
  facts.topology = ComputeTopology(facts);
  return OkStatus();
}

void TopologyModule::Plan(const DesiredState& desired, const HostFacts& facts,
                          PlanSink& sink) const {
  for (auto& [path, message] : CheckNearGpu(desired, facts)) sink.Error(path, message);
}

// Order 20: after pci (0), rdma (8), sriov (10) and vf (12), whose facts
// decide which functions are NICs (HostFacts::Nics()).
PROVISIONER_REGISTER_MODULE("topology", TopologyModule, "pci", "link")

}  // namespace provisioner
