// Module "topology": discovery only. Finds the GPUs and the PCIe level of
// every GPU x NIC pair (engine/model/topology.h says how, after NCCL and
// nvidia-smi), and checks the nicSelector.nearGpu selectors at plan time. It
// plans no change.
#ifndef PROVISIONER_MODULES_TOPOLOGY_TOPOLOGY_MODULE_H_
#define PROVISIONER_MODULES_TOPOLOGY_TOPOLOGY_MODULE_H_

#include <string_view>

#include "engine/module/module.h"

namespace provisioner {

class TopologyModule final : public DiscoveryModule {
 public:
  std::string_view name() const override { return "topology"; }
  // Discover: pure over the facts already found: sysfs paths and NUMA nodes (pci), and
  // which functions are NICs (SR-IOV PFs from sriov, RDMA devices from rdma).
  // Plan: errors for nearGpu selectors: missing GPU, remote NIC without
  // allowRemote, two nics on one GPU, two GPUs whose nearest NIC is the same.
  // RenderFactsJson (discover output): topology_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, RenderFactsJson, RenderFactsTable);
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_TOPOLOGY_TOPOLOGY_MODULE_H_
