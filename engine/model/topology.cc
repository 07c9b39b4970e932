#include "engine/model/topology.h"

#include <algorithm>
#include <map>
#include <utility>

#include "engine/base/enum_names.h"
#include "engine/model/pci_address.h"
#include "engine/model/selector.h"

namespace provisioner {
namespace {

// A device's place: the host bridge directory and the BDF components below
// it, root port first, the device itself last.
struct PciChain {
  std::string host_bridge;        // "/sys/devices/pci0000:ae"
  std::vector<std::string> bdfs;  // {"0000:ae:00.0", "0000:af:00.0"}
};

std::optional<PciChain> ParseChain(const std::string& path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  // Devices are the trailing components named by address ("0000:af:00.0",
  // "10000:e1:00.0" in a VMD domain); the one above them is the host bridge.
  size_t first_bdf = parts.size();
  while (first_bdf > 0 && PciAddress::ParseSysfsName(parts[first_bdf - 1])) --first_bdf;
  if (first_bdf == parts.size() || first_bdf == 0) return std::nullopt;
  PciChain c;
  for (size_t i = 0; i < first_bdf; ++i) c.host_bridge += "/" + parts[i];
  c.bdfs.assign(parts.begin() + static_cast<long>(first_bdf), parts.end());
  return c;
}

// Broadcom PEX switch generation from "vendor:device" (0 = not one).
int BcmGen(const std::string& id) {
  if (id == "1000:c010") return 4;
  if (id == "1000:c030") return 5;
  return 0;
}

// NCCL's PCI switch nodes above the device, nearest first, each keyed by the
// depth of its upstream port in the chain (1 = root port). Empty: the device
// hangs off the CPU (host bridge) directly.
std::vector<size_t> SwitchNodes(const PciChain& c, const BridgeIdLookup& bridge_id) {
  std::vector<size_t> nodes;
  size_t depth = c.bdfs.size();
  while (depth > 2) {  // two components up must still be a BDF
    depth -= 2;
    nodes.push_back(depth);
  }
  if (!bridge_id) return nodes;
  std::vector<size_t> flat;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i + 1 < nodes.size()) {
      int gen = BcmGen(bridge_id(c.bdfs[nodes[i] - 1]));
      if (gen != 0 && gen == BcmGen(bridge_id(c.bdfs[nodes[i + 1] - 1]))) continue;  // merged up
    }
    flat.push_back(nodes[i]);
  }
  return flat;
}

std::string GpuName(int index, const GpuInfo& g) {
  return "GPU " + std::to_string(index) + " (" + g.pci_address + ")";
}

// The identity of a switch node: the path down to its upstream port.
std::string NodeKey(const PciChain& c, size_t depth) {
  std::string k = c.host_bridge;
  for (size_t i = 0; i < depth; ++i) k += "/" + c.bdfs[i];
  return k;
}

}  // namespace

const char* PcieLevelName(PcieLevel level) {
  static constexpr EnumName<PcieLevel> kNames[] = {
      {PcieLevel::kPix, "PIX"},   {PcieLevel::kPxb, "PXB"}, {PcieLevel::kPhb, "PHB"},
      {PcieLevel::kNode, "NODE"}, {PcieLevel::kSys, "SYS"},
  };
  return NameOf(kNames, level, "SYS");
}

bool IsGpuFunction(const PciFunction& f) {
  if (f.IsVf()) return false;
  const uint32_t base = f.class_code >> 16;
  const uint32_t sub = (f.class_code >> 8) & 0xff;
  if (base != 0x03 || (sub != 0x00 && sub != 0x02 && sub != 0x80)) return false;
  return f.vendor == "10de" || f.vendor == "1002" || f.vendor == "8086" || f.vendor == "1d94";
}

std::optional<PcieLevel> ComputePcieLevel(const std::string& path_a, int numa_a,
                                          const std::string& path_b, int numa_b,
                                          const BridgeIdLookup& bridge_id) {
  auto a = ParseChain(path_a);
  auto b = ParseChain(path_b);
  if (!a || !b) return std::nullopt;
  std::vector<size_t> na = SwitchNodes(*a, bridge_id);
  std::vector<size_t> nb = SwitchNodes(*b, bridge_id);
  for (size_t i = 0; i < na.size(); ++i) {
    const std::string key = NodeKey(*a, na[i]);
    for (size_t j = 0; j < nb.size(); ++j) {
      if (NodeKey(*b, nb[j]) != key) continue;
      // Both hang off the same switch: one bridge on the way. Otherwise a
      // switch-to-switch link is on the path.
      return i == 0 && j == 0 ? PcieLevel::kPix : PcieLevel::kPxb;
    }
  }
  if (a->host_bridge == b->host_bridge) return PcieLevel::kPhb;
  if (std::max(numa_a, 0) == std::max(numa_b, 0)) return PcieLevel::kNode;
  return PcieLevel::kSys;
}

TopologyFacts ComputeTopology(const HostFacts& facts) {
  TopologyFacts t;
  t.discovered = true;
  std::vector<const PciFunction*> gpus;
  for (const auto& f : facts.pci) {
    if (IsGpuFunction(f)) gpus.push_back(&f);
  }
  std::sort(gpus.begin(), gpus.end(), [](const PciFunction* x, const PciFunction* y) {
    return x->pci_address < y->pci_address;
  });
  BridgeIdLookup lookup = [&facts](const std::string& bdf) {
    const PciFunction* f = facts.FindPci(bdf);
    return f == nullptr ? std::string() : f->vendor + ":" + f->device_id;
  };
  const std::vector<const PciFunction*> nics = facts.Nics();
  for (const PciFunction* g : gpus) {
    t.gpus.push_back({g->pci_address, g->vendor, g->device_id, g->numa_node});
    for (const PciFunction* n : nics) {
      // A path that is not a PCI device path (never on a real host) counts
      // as the farthest level rather than dropping the pair.
      PcieLevel level =
          ComputePcieLevel(g->sysfs_path, g->numa_node, n->sysfs_path, n->numa_node, lookup)
              .value_or(PcieLevel::kSys);
      t.links.push_back({g->pci_address, n->pci_address, level});
    }
  }
  return t;
}

NearGpuChoice ChooseNearGpu(const NicSelector& sel, const HostFacts& facts) {
  NearGpuChoice choice;
  if (!sel.near_gpu || *sel.near_gpu < 0) return choice;
  // Facts from the topology module when it ran, else computed here (pure).
  TopologyFacts computed;
  const TopologyFacts* topo = &facts.topology;
  if (!topo->discovered) {
    computed = ComputeTopology(facts);
    topo = &computed;
  }
  const size_t index = static_cast<size_t>(*sel.near_gpu);
  if (index >= topo->gpus.size()) return choice;
  const GpuInfo& gpu = topo->gpus[index];
  choice.gpu = gpu;
  for (const GpuNicLink& l : topo->links) {
    if (l.gpu != gpu.pci_address) continue;
    const PciFunction* pf = facts.FindPci(l.nic);
    if (pf == nullptr || !SelectorMatches(sel, *pf)) continue;
    if (choice.pf == nullptr || l.level < choice.level ||
        (l.level == choice.level && l.nic < choice.pf->pci_address)) {
      choice.pf = pf;
      choice.level = l.level;
    }
  }
  return choice;
}

std::vector<std::pair<std::string, std::string>> CheckNearGpu(const DesiredState& desired,
                                                              const HostFacts& facts) {
  std::vector<std::pair<std::string, std::string>> out;
  TopologyFacts computed;
  const TopologyFacts* topo = &facts.topology;
  if (!topo->discovered) {
    computed = ComputeTopology(facts);
    topo = &computed;
  }
  std::map<int, size_t> gpu_claims;                         // GPU index -> nic
  std::map<std::string, std::pair<size_t, int>> pf_claims;  // PF -> (nic, GPU index)
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSelector& sel = desired.nics[i].selector;
    if (!sel.near_gpu) continue;
    const int index = *sel.near_gpu;
    const std::string path = DesiredState::NicPath(i) + ".nicSelector.nearGpu";
    const std::string nic_ref = DesiredState::NicPath(i) + " (" + desired.nics[i].name + ")";
    const size_t count = topo->gpus.size();
    if (index < 0 || static_cast<size_t>(index) >= count) {
      out.emplace_back(
          path,
          "GPU " + std::to_string(index) + " does not exist: this host has " +
              std::to_string(count) + " GPU" + (count == 1 ? "" : "s") +
              (count == 0 ? "" : " (0-" + std::to_string(count - 1) + ", in PCI address order)"));
      continue;
    }
    auto [git, gnew] = gpu_claims.emplace(index, i);
    if (!gnew) {
      const size_t first = git->second;
      out.emplace_back(path, GpuName(index, topo->gpus[index]) + " is already claimed by " +
                                 DesiredState::NicPath(first) + " (" + desired.nics[first].name +
                                 "): two NICs cannot claim the same GPU");
      continue;
    }
    NearGpuChoice c = ChooseNearGpu(sel, facts);
    if (c.pf == nullptr) {
      out.emplace_back(path, "no NIC matching the selector's other fields is connected to " +
                                 GpuName(index, topo->gpus[index]));
      continue;
    }
    if (c.remote() && !sel.allow_remote) {
      out.emplace_back(path, "the nearest NIC to " + GpuName(index, topo->gpus[index]) + " is " +
                                 c.pf->pci_address + " at level " + PcieLevelName(c.level) +
                                 (c.level == PcieLevel::kSys ? " (across NUMA nodes)"
                                                             : " (another host bridge)") +
                                 ": no NIC shares its PCIe switch or host bridge; set "
                                 "nicSelector.allowRemote: true to accept it");
      continue;
    }
    auto [pit, pnew] = pf_claims.emplace(c.pf->pci_address, std::make_pair(i, index));
    if (!pnew) {
      const auto [first, first_gpu] = pit->second;
      out.emplace_back(path, "the nearest NIC to " + GpuName(index, topo->gpus[index]) + ", " +
                                 c.pf->pci_address + " (" + PcieLevelName(c.level) +
                                 "), is also the nearest to " +
                                 GpuName(first_gpu, topo->gpus[first_gpu]) + ", claimed by " +
                                 DesiredState::NicPath(first) + " (" + desired.nics[first].name +
                                 "): two GPUs share one NIC, so one NIC per GPU (rails) is not "
                                 "possible on this host");
    }
  }
  return out;
}

}  // namespace provisioner
