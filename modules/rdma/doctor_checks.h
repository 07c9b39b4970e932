// The rdma module's doctor checks: pure functions of the facts and
// (optionally) host.yaml. Each names the device/port/file, shows the
// evidence read, and says how to fix it.
#ifndef PROVISIONER_MODULES_RDMA_DOCTOR_CHECKS_H_
#define PROVISIONER_MODULES_RDMA_DOCTOR_CHECKS_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"

namespace provisioner::rdma {

// RoCE ports without a netdev in this namespace (no RoCE GID: "ibv_modify_qp
// failed: No such device" / "Failed to modify QP to RTR" in containers).
void CheckPortNetdevs(const HostFacts& facts, CheckSink& sink);
// RoCE v2 GID per IPv4 address of each RoCE netdev (NCCL_IB_GID_INDEX).
void CheckRoceV2Gids(const HostFacts& facts, CheckSink& sink);
// Live netns mode vs host.yaml and vs the persistent setting.
void CheckNetnsMode(const DesiredState* desired, const HostFacts& facts, CheckSink& sink);
// /dev/infiniband: uverbs*, umad*, issm*, rdma_cm.
void CheckDevFiles(const HostFacts& facts, CheckSink& sink);
// InfiniBand ports: ACTIVE, and a subnet manager (sm_lid != 0).
void CheckIbPorts(const HostFacts& facts, CheckSink& sink);
// Device-plugin resources (nics with resourceName, rdmaSharedDevicePlugin)
// that would count 0 devices.
void CheckDevicePluginSelectors(const DesiredState& desired, const HostFacts& facts,
                                CheckSink& sink);
// nics[].linkType vs the link layer of their RDMA ports.
void CheckLinkLayer(const DesiredState& desired, const HostFacts& facts, CheckSink& sink);
// nics with isRdma: every VF has an RDMA device.
void CheckVfRdma(const DesiredState& desired, const HostFacts& facts, CheckSink& sink);
// NVIDIA GPUs present: nvidia_peermem (GPUDirect RDMA) and gdrdrv (GDRCopy) loaded.
void CheckGpuDirect(const HostFacts& facts, CheckSink& sink);

// Each multusConfig's pkey (ib-sriov) against the P_Key table of the ports
// of its nic's PFs: a partition the SM has not configured fails the pods.
void CheckMultusPkeys(const DesiredState& desired, const HostFacts& facts, CheckSink& sink);
// All of the above (host.yaml checks only when `desired` is given).
void RunRdmaChecks(const DesiredState* desired, const HostFacts& facts, CheckSink& sink);

}  // namespace provisioner::rdma

#endif  // PROVISIONER_MODULES_RDMA_DOCTOR_CHECKS_H_
