// discover output of the pci module: the NICs (with their SR-IOV counts and
// VF functions, as one table of PCI functions) and the GPUs.
#include <cstdio>

#include "engine/model/topology.h"
#include "engine/output/facts_output.h"
#include "modules/pci/pci_module.h"

namespace provisioner {

using nlohmann::json;

void PciModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  out.doc()["nics"] = json::array();
  for (const PciFunction* f : facts.Nics()) {
    char class_code[16];
    std::snprintf(class_code, sizeof class_code, "%06x", f->class_code);
    out.AddNic(f->pci_address, {{"pciAddress", f->pci_address},
                                {"vendor", f->vendor},
                                {"deviceID", f->device_id},
                                {"vendorName", f->vendor_name},
                                {"deviceName", f->device_name},
                                {"class", class_code},
                                {"driver", f->driver},
                                {"numaNode", f->numa_node},
                                {"netdevs", StringList(f->netdevs)},
                                {"rdmaDevices", StringList(f->rdma_devices)},
                                {"rdmaDevicePending", f->RdmaDevicePending()}});
  }
  json gpus = json::array();
  for (const auto& f : facts.pci) {
    if (!IsGpuFunction(f)) continue;
    gpus.push_back({{"pciAddress", f.pci_address},
                    {"vendor", f.vendor},
                    {"deviceID", f.device_id},
                    {"numaNode", f.numa_node}});
  }
  out.doc()["gpus"] = gpus;
}

std::string PciModule::RenderFactsTable(const HostFacts& facts) const {
  std::vector<std::vector<std::string>> rows = {
      {"PCI", "ID", "DRIVER", "NUMA", "NETDEVS", "VFS", "RDMA", "NAME"}};
  for (const PciFunction* f : facts.Nics()) {
    std::string vfs = f->sriov ? std::to_string(f->sriov->num_vfs) + "/" +
                                     std::to_string(f->sriov->total_vfs)
                               : "-";
    rows.push_back({f->pci_address, f->vendor + ":" + f->device_id,
                    f->driver.empty() ? "-" : f->driver, std::to_string(f->numa_node),
                    JoinNames(f->netdevs, "-"), vfs,
                    f->RdmaDevicePending() ? "(not yet)" : JoinNames(f->rdma_devices, "-"),
                    f->device_name});
    if (!f->sriov) continue;
    for (const VfInfo& vf : f->sriov->vfs) {
      rows.push_back({"  " + vf.pci_address, "vf " + std::to_string(vf.vf_index),
                      vf.driver.empty() ? "-" : vf.driver, "", JoinNames(vf.netdevs, "-"), "",
                      JoinNames(vf.rdma_devices, "-"), ""});
    }
  }
  std::string out = "NICs (SR-IOV or RDMA capable network functions):\n";
  out += rows.size() == 1 ? "  (none)\n" : TextTable(rows);
  for (const PciFunction* f : facts.Nics()) {
    if (!f->RdmaDevicePending()) continue;
    out += "  " + f->pci_address + ": RDMA capable (" + (f->driver.empty() ? "no driver" : f->driver) +
           "), no RDMA device yet: its RDMA driver (e.g. mlx5_ib) is not loaded\n";
  }
  std::vector<std::vector<std::string>> gpus = {{"PCI", "ID", "NUMA"}};
  for (const auto& f : facts.pci) {
    if (IsGpuFunction(f)) {
      gpus.push_back({f.pci_address, f.vendor + ":" + f.device_id, std::to_string(f.numa_node)});
    }
  }
  if (gpus.size() > 1) out += "\nGPUs:\n" + TextTable(gpus);
  return out;
}

}  // namespace provisioner
