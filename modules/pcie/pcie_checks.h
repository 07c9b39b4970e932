// Doctor checks of the pcie module (pure, over the facts):
//   pcie.acs-gpu-nic-path    ACS enabled on a port between a GPU and its NIC
//   pcie.max-read-request    Max_Read_Request_Size below 4096 on a RoCE/IB NIC
//   pcie.iommu-passthrough   the IOMMU translating DMA while GPUs and RDMA NICs
//                            are present (GPUDirect RDMA wants passthrough): warn
#ifndef PROVISIONER_MODULES_PCIE_PCIE_CHECKS_H_
#define PROVISIONER_MODULES_PCIE_PCIE_CHECKS_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"

namespace provisioner {

void CheckPcie(const DesiredState* desired, const HostFacts& facts, CheckSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_PCIE_PCIE_CHECKS_H_
