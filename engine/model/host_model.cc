#include "engine/model/host_model.h"

namespace provisioner {

bool IsUserspaceDriver(const std::string& driver) {
  return driver == "vfio-pci" || driver == "pci-stub" || driver == "uio_pci_generic" ||
         driver == "igb_uio";
}

const PciFunction* HostFacts::FindPci(const std::string& address) const {
  for (const auto& f : pci) {
    if (f.pci_address == address) return &f;
  }
  return nullptr;
}

PciFunction* HostFacts::FindPci(const std::string& address) {
  for (auto& f : pci) {
    if (f.pci_address == address) return &f;
  }
  return nullptr;
}

std::vector<const PciFunction*> HostFacts::Nics() const {
  std::vector<const PciFunction*> out;
  for (const auto& f : pci) {
    if (!f.IsNetwork() || f.IsVf()) continue;
    if (f.sriov.has_value() || !f.rdma_devices.empty()) out.push_back(&f);
  }
  return out;
}

}  // namespace provisioner
