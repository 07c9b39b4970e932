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
// device 1018), none enabled; their devlink state captured in
// run/provisioner/devlink/<bdf> (E-Switch legacy, flow steering dmfs). Plus an
// Intel I210 (eno1, igb, no SR-IOV) and an NVIDIA H100 (10de:2330) at
// 0000:18:00.0 on NUMA node 0.
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

// Benchmark hosts (bench/): `pfs` single-port ConnectX-5 PFs in RoCE mode,
// each behind its own PCIe switch (root port 0000:<b>:00.0 -> switch
// upstream port <b+1>:00.0 -> downstream ports <b+2>:00.0 / <b+2>:01.0, b =
// 0x10 + 6i) with, for the first `gpus` of them, an H100 (10de:2330) on the
// switch's second downstream port (<b+4>:00.0): the rail layout, GPU i and
// NIC i at level PIX. Every RDMA port has a full 256-slot GID table (the
// mlx5 size; slots past the few RoCE v1/v2 entries read as the zero GID and
// have no gid_attrs files), VFs copy it. sriov_totalvfs 127. pfs <= 16.
HostSpec BenchHost(int pfs, int gpus);

// The HGX H100 8-GPU board of a real capture (leptonai/gpud
// pkg/pci/testdata/lspci-vvv: bus numbers, device IDs, NUMA nodes): per GPU
// one Broadcom PEX890xx switch (root port <r>:01.0 8086:352a -> upstream port
// <r+1>:00.0 1000:c030 -> downstream ports <r+2>:01.0 / :02.0) with the H100
// (10de:2330) and a ConnectX-7 400G (15b3:1021, RoCE, SR-IOV 16 VFs of
// 15b3:101e); GPUs 19/3b/4c/5d on NUMA 0, 9b/bb/cb/db on NUMA 1, NICs
// 1a/3c/4d/5e/9c/bc/cc/dc. Switches 0 and 4 also hold a dual-port
// ConnectX-6 Dx (15b3:101d, 8 VFs) at 1b:00.0/.1 and 9d:00.0/.1 on
// downstream port :03.0. Every GPU has its ConnectX-7 at level PIX.
HostSpec HgxH100Host();

// Two such switches (NUMA 0 and 1), each with two H100 GPUs and one
// ConnectX-7: GPUs 19/1b share NIC 1a, GPUs 9b/9d share NIC 9c. One NIC per
// GPU is impossible here (rails/nearGpu must say so).
HostSpec GpuSharedSwitchHost();

// HgxH100Host with a 4096-byte PCIe `config` in every function: root ports
// (type 4) and the PEX switches' downstream ports (type 6) with an ACS
// capability (0x005f) whose control has the bits Linux enables with an
// IOMMU (SV|RR|CR|UF = 0x001d), upstream ports (type 5) without ACS, GPUs
// and NICs as endpoints with MaxReadReq 512; booted with intel_iommu=on.
// The ConnectX-7 cards' `mstconfig -e query` captured under
// /run/provisioner/mstconfig/ (port ETH, SR-IOV on with 16 VFs, ATS off).
// Bundled as examples/hosts/hgx-h100-pcie.ttar (2.5 MB: ttar spells each NUL
// byte of config space out); examples/hosts/hgx-h100.ttar stays the tree
// without `config` files.
HostSpec HgxH100PcieHost();

// Cx5RoceHost with mlx5's RoCE QoS state: ECN files on both PF netdevs
// (ens6f0np0 all off, as after DCQCN was turned off; ens6f1np1 all on, the
// driver's default) and their DCB state as `snapshot` captures it
// (run/provisioner/dcb/<if>: trust pcp, no PFC, DCBX firmware-managed,
// mlx5's state at boot), global pause (run/provisioner/pause/<if>: on for
// ens6f0np0, off for ens6f1np1) and NVIDIA mlx5_ib's tc/1/traffic_class
// (unset on mlx5_0, "Global tclass=106" on mlx5_1).
HostSpec Cx5RoceQosHost();

// Names accepted by PresetByName: "cx5-roce", "cx5-roce-qos", "cx5-ib", "hgx-h100",
// "gpu-shared-switch", "scaled-<P>", "bench-<P>" (BenchHost(P, min(P, 8))).
std::vector<std::string> PresetNames();
bool PresetByName(const std::string& name, HostSpec* out);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_HOST_PRESETS_H_
