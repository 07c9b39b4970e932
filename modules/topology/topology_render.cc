// discover output of the topology module: every GPU x NIC pair with its
// nvidia-smi topo level (`topology`), and the matrix of `nvidia-smi topo -m`.
#include <algorithm>
#include <sstream>

#include "engine/model/topology.h"
#include "engine/output/facts_output.h"
#include "modules/topology/topology_module.h"

namespace provisioner {

using nlohmann::json;

void TopologyModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  json topology = json::array();
  for (const GpuNicLink& l : facts.topology.links) {
    topology.push_back({{"gpu", l.gpu}, {"nic", l.nic}, {"level", PcieLevelName(l.level)}});
  }
  out.doc()["topology"] = topology;
}

// The GPU x NIC matrix of `nvidia-smi topo -m`, with legends.
std::string TopologyModule::RenderFactsTable(const HostFacts& facts) const {
  const TopologyFacts& t = facts.topology;
  if (t.gpus.empty()) return "";
  std::vector<std::string> nics;
  for (const GpuNicLink& l : t.links) {
    if (std::find(nics.begin(), nics.end(), l.nic) == nics.end()) nics.push_back(l.nic);
  }
  std::ostringstream out;
  out << "\nGPU x NIC PCIe topology (levels of nvidia-smi topo -m):\n";
  if (nics.empty()) return out.str() + "  (no NICs)\n";
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>{""});
  for (size_t n = 0; n < nics.size(); ++n) rows[0].push_back("NIC" + std::to_string(n));
  for (size_t g = 0; g < t.gpus.size(); ++g) {
    std::vector<std::string> row = {"GPU" + std::to_string(g)};
    for (const auto& nic : nics) {
      std::string level = "-";
      for (const GpuNicLink& l : t.links) {
        if (l.gpu == t.gpus[g].pci_address && l.nic == nic) level = PcieLevelName(l.level);
      }
      row.push_back(level);
    }
    rows.push_back(row);
  }
  out << TextTable(rows) << "\n";
  for (size_t g = 0; g < t.gpus.size(); ++g) {
    out << "  GPU" << g << ": " << t.gpus[g].pci_address << " (" << t.gpus[g].vendor << ":"
        << t.gpus[g].device_id << ", NUMA " << t.gpus[g].numa_node << ")\n";
  }
  for (size_t n = 0; n < nics.size(); ++n) {
    out << "  NIC" << n << ": " << nics[n];
    if (const PciFunction* f = facts.FindPci(nics[n])) {
      std::vector<std::string> all = f->netdevs;
      all.insert(all.end(), f->rdma_devices.begin(), f->rdma_devices.end());
      const std::string names = JoinNames(all);
      out << " (" << f->vendor << ":" << f->device_id << (names.empty() ? "" : " " + names) << ")";
    }
    out << "\n";
  }
  out << "  PIX = at most one PCIe switch; PXB = several switches, no host bridge; PHB = through "
         "a\n"
         "  PCIe host bridge; NODE = between host bridges of one NUMA node; SYS = across NUMA "
         "nodes\n";
  return out.str();
}

}  // namespace provisioner
