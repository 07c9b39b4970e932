// The host trees this repository checks in (test/hosts/*.ttar), as specs, and
// a parametric generator for big trees (benchmarks). Regenerate the checked-in
// files with scripts in test/hosts/README.md; //test/hosts:trees_test fails
// when a checked-in tree differs from what these specs produce.
#ifndef PROVISIONER_TEST_SUPPORT_HOST_PRESETS_H_
#define PROVISIONER_TEST_SUPPORT_HOST_PRESETS_H_

#include <string>
#include <vector>

#include "test/support/host_tree.h"

namespace provisioner::testing {

// ConnectX-5 dual-port 100GbE (15b3:1017, mlx5_core) in RoCE mode at
// 0000:af:00.0/.1 behind root port 0000:ae:00.0 on NUMA node 1; netdevs
// ens6f0np0/ens6f1np1, RDMA mlx5_0/mlx5_1 with RoCE v1/v2 GIDs (IPv4-mapped
// 172.81.0.119 / 172.82.0.119); SR-IOV 127 VFs (offset 2 / 128, stride 1, VF
// device 1018), none enabled. Plus an Intel I210 (eno1, igb, no SR-IOV) and an
// NVIDIA H100 (10de:2330) at 0000:18:00.0 on NUMA node 0.
HostSpec Cx5RoceHost();

// ConnectX-5 single-port EDR InfiniBand (15b3:1017, class 0x020700) at
// 0000:86:00.0, IPoIB netdev ibs5f0 (type 32), RDMA mlx5_0 (InfiniBand, lid
// 0x5, sm_lid 0x1), SR-IOV 16 VFs (offset 1, stride 1), none enabled; eno1.
HostSpec Cx5IbHost();

// `pfs` single-port ConnectX-5 PFs in RoCE mode, each behind its own root
// port (0000:<2i+0x10>:00.0 -> PF 0000:<2i+0x11>:00.0), alternating NUMA nodes,
// sriov_totalvfs max(vfs, 8). VFs are enabled afterwards by the simulator.
// pfs <= 118.
HostSpec ScaledRoceHost(int pfs);

// Names accepted by PresetByName: "cx5-roce", "cx5-ib", "scaled-<P>".
std::vector<std::string> PresetNames();
bool PresetByName(const std::string& name, HostSpec* out);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_HOST_PRESETS_H_
