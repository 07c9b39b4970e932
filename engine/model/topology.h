// GPU <-> NIC PCIe levels computed from sysfs device paths. Pure: reads only
// HostFacts (PciFunction::sysfs_path, numa_node, vendor/device of bridges).
//
// The levels are those of `nvidia-smi topo -m`, computed the way NCCL builds
// its topology (src/graph/xml.cc ncclTopoGetXmlFromSys, src/graph/paths.cc
// ncclTopoSetPaths):
//   * The PCIe tree: going up from a device, NCCL skips two path components
//     per step ("rewind two /"): a PCIe switch appears in sysfs as an
//     upstream port with downstream ports below it, and NCCL keeps one node
//     per switch, keyed by the upstream port. A step that reaches the host
//     bridge directory (pci0000:ae, not a BDF) ends at the CPU; so does a
//     device on a root port (the root port is part of the host bridge).
//   * NCCL flattens Broadcom PEX Gen4/Gen5 switches (1000:c010, 1000:c030)
//     whose internal second level shows up as a switch below a switch of the
//     same kind (ncclTopoFlattenBcmSwitches): so do we (NCCL also compares
//     the subsystem IDs; we compare vendor and device only).
//   * Path type = the worst link on the way: device-switch links are PIX, a
//     switch-switch link makes it PXB, a link to the CPU makes it PHB.
//   * nvidia-smi then tells apart two host bridges of one NUMA node (NODE)
//     from different NUMA nodes (SYS); NCCL folds NODE into PHB. We report
//     NODE. numa_node -1 (no NUMA information) counts as node 0, as on a
//     single-node machine.
#ifndef PROVISIONER_ENGINE_MODEL_TOPOLOGY_H_
#define PROVISIONER_ENGINE_MODEL_TOPOLOGY_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/model/topology_facts.h"

namespace provisioner {

// GPU rule: a physical function of PCI base class 0x03 (display controller:
// 0x0300 VGA, 0x0302 3D, 0x0380 other; AMD Instinct and Hygon DCUs report
// 0x0380) from a GPU vendor: 10de NVIDIA, 1002 AMD, 8086 Intel, 1d94 Hygon
// (Chengdu Haiguang) DCU. The vendor list keeps out the BMC's VGA (ASPEED
// 1a03, Matrox 102b) that every server has. NVSwitches are bridges (0x0680).
bool IsGpuFunction(const PciFunction& f);

// vendor:device ("1000:c030") of the bridge at a BDF; "" when unknown.
using BridgeIdLookup = std::function<std::string(const std::string& bdf)>;

// The level between the devices at two sysfs device paths
// ("/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0"); nullopt when a path
// does not end in a PCI device below a host bridge.
std::optional<PcieLevel> ComputePcieLevel(const std::string& path_a, int numa_a,
                                          const std::string& path_b, int numa_b,
                                          const BridgeIdLookup& bridge_id = nullptr);

// GPUs (by PCI address) and the level of every GPU x facts.Nics() pair.
TopologyFacts ComputeTopology(const HostFacts& facts);

// nicSelector.nearGpu: the PF (facts.Nics(), matching the selector's other
// fields) closest to GPU `*sel.near_gpu`, ties broken by PCI address.
struct NearGpuChoice {
  std::optional<GpuInfo> gpu;       // nullopt: no such GPU
  const PciFunction* pf = nullptr;  // null: no candidate NIC
  PcieLevel level = PcieLevel::kSys;
  bool remote() const { return level >= PcieLevel::kNode; }
};
NearGpuChoice ChooseNearGpu(const NicSelector& sel, const HostFacts& facts);

// Every problem with the nearGpu selectors of `desired`, as (field path,
// message): a GPU index the host lacks, no matching NIC, a nearest NIC only at
// NODE/SYS level without allowRemote, two nics on one GPU, two GPUs whose
// nearest NIC is the same PF.
std::vector<std::pair<std::string, std::string>> CheckNearGpu(const DesiredState& desired,
                                                              const HostFacts& facts);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_TOPOLOGY_H_
