// discover output of the sriov module: each NIC's `sriov` (null without
// SR-IOV) with its VFs.
#include "engine/output/facts_output.h"
#include "modules/sriov/sriov_module.h"

namespace provisioner {

using nlohmann::json;

void SriovModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  for (const PciFunction* f : facts.Nics()) {
    json* nic = out.Nic(f->pci_address);
    if (nic == nullptr) continue;
    if (!f->sriov) {
      (*nic)["sriov"] = nullptr;
      continue;
    }
    json s;
    s["totalVfs"] = f->sriov->total_vfs;
    s["numVfs"] = f->sriov->num_vfs;
    if (f->sriov->offset) s["offset"] = *f->sriov->offset;
    if (f->sriov->stride) s["stride"] = *f->sriov->stride;
    s["vfDevice"] = f->sriov->vf_device;
    json vfs = json::array();
    for (const VfInfo& vf : f->sriov->vfs) {
      vfs.push_back({{"pciAddress", vf.pci_address},
                     {"vfIndex", vf.vf_index},
                     {"driver", vf.driver},
                     {"netdevs", StringList(vf.netdevs)},
                     {"rdmaDevices", StringList(vf.rdma_devices)}});
    }
    s["vfs"] = vfs;
    (*nic)["sriov"] = s;
  }
}

}  // namespace provisioner
