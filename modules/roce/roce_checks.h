// Doctor check of the roce module, pure over the facts:
//   roce.nccl-priority  PFC and ECN (roce_np and roce_rp) enabled on the
//                       priority NCCL's RoCE traffic uses, with DSCP trust.
// The priority: NCCL_IB_TC is the IP ToS byte of NCCL's RoCE v2 packets
// (DSCP = TC >> 2); under DSCP trust with the default map (priority =
// DSCP >> 3, what mlnx_qos --trust dscp shows) the priority is TC >> 5.
// NCCL_IB_TC comes from doctor's environment, else /etc/nccl.conf (NCCL
// reads both, the environment winning); unset, 106 is assumed (DSCP 26,
// priority 3: NVIDIA's lossless RoCE guides), and the evidence says so.
// Where the RDMA device forces a traffic class (mlx5_ib's tc/<port>/
// traffic_class, roce.tos) every QP uses it, NCCL_IB_TC or not: that one
// counts. The priority is the netdev's DSCP map entry (roce.dscpMap) where
// the table has one, else DSCP >> 3.
//   roce.dcbx           who owns PFC: the host (DCBX host-managed, not
//                       willing), or the NIC's firmware, which takes the
//                       switch's DCBX/LLDP settings (warn: PFC can change
//                       under the host), or an LLDP agent (lldpad).
#ifndef PROVISIONER_MODULES_ROCE_ROCE_CHECKS_H_
#define PROVISIONER_MODULES_ROCE_ROCE_CHECKS_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"

namespace provisioner {

// The traffic class assumed when NCCL_IB_TC is set nowhere.
inline constexpr int kGuideTrafficClass = 106;

// The 802.1p priority of RoCE packets with traffic class `tc` under DSCP trust
// and the default DSCP map.
inline int PriorityOfTrafficClass(int tc) { return (tc >> 5) & 0x7; }

void CheckRoce(const DesiredState* desired, const HostFacts& facts, CheckSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ROCE_ROCE_CHECKS_H_
