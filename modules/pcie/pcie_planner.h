// Pure planning of the pcie module: spec.pcie.disableAcs and
// spec.nics[].pcie.maxReadRequest against the config-space facts.
#ifndef PROVISIONER_MODULES_PCIE_PCIE_PLANNER_H_
#define PROVISIONER_MODULES_PCIE_PCIE_PLANNER_H_

#include <string>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/model/topology_facts.h"
#include "engine/plan/change.h"

namespace provisioner {

inline constexpr const char kPcieModule[] = "pcie";
inline constexpr const char kAcsControlAttribute[] = "acsControl";
inline constexpr const char kMaxReadRequestAttribute[] = "maxReadRequest";

// Why every change of this module says how it persists.
inline constexpr const char kLiveReason[] =
    "live, not persistent: re-applied at every boot by the systemd unit";

// A GPU and a NIC PF whose peer-to-peer traffic stays below the root
// complex, and the bridges on the way between them.
struct GpuNicPath {
  std::string gpu;
  std::string nic;
  PcieLevel level = PcieLevel::kSys;
  // The bridges of both PCIe paths below their lowest common bridge (the
  // common switch's downstream ports, or the root ports when they meet only
  // at the host bridge), in BDF order. Endpoints are not included.
  std::vector<std::string> bridges;
};

// For each GPU: the NIC PFs of `nics` at its nearest level, when that level
// is PIX, PXB or PHB (farther, the traffic crosses host bridges: no switch
// port of the path can send it straight across). NCCL uses GPUDirect RDMA
// up to PXB by default (NCCL_NET_GDR_LEVEL), PHB when asked.
std::vector<GpuNicPath> GpuNicPaths(const HostFacts& facts,
                                    const std::vector<const PciFunction*>& nics);

// The PFs selected by spec.nics, in address order, once each.
std::vector<const PciFunction*> SelectedPfs(const DesiredState& desired, const HostFacts& facts);

void PlanPcie(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_PCIE_PCIE_PLANNER_H_
