// GPU <-> NIC PCIe topology facts (module `topology`): the GPUs of the host
// and, for every GPU x NIC pair, the level `nvidia-smi topo -m` prints.
// Contract keys of `discover -o json`: "gpus" and "topology".
#ifndef PROVISIONER_ENGINE_MODEL_TOPOLOGY_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_TOPOLOGY_FACTS_H_

#include <string>
#include <vector>

namespace provisioner {

// Closest first: PIX < PXB < PHB < NODE < SYS (the order of the enum).
enum class PcieLevel {
  kPix = 0,   // at most one PCIe switch between the two (same switch)
  kPxb = 1,   // several PCIe switches, without the host bridge
  kPhb = 2,   // through one PCIe host bridge (same root complex)
  kNode = 3,  // through the interconnect between host bridges of one NUMA node
  kSys = 4,   // across NUMA nodes (QPI/UPI/xGMI)
};

const char* PcieLevelName(PcieLevel level);  // "PIX" ... "SYS"

struct GpuInfo {
  std::string pci_address;  // "0000:19:00.0"
  std::string vendor;       // "10de"
  std::string device_id;    // "2330"
  int numa_node = -1;
};

struct GpuNicLink {
  std::string gpu;  // GPU BDF
  std::string nic;  // PF BDF
  PcieLevel level = PcieLevel::kSys;
};

struct TopologyFacts {
  bool discovered = false;        // the topology module ran
  std::vector<GpuInfo> gpus;      // ordered by PCI address: index i = nearGpu i
  std::vector<GpuNicLink> links;  // every GPU x NIC (facts.Nics()) pair, GPU-major
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_TOPOLOGY_FACTS_H_
