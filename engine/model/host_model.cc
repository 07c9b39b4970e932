#include "engine/model/host_model.h"

namespace provisioner {

bool IsUserspaceDriver(const std::string& driver) {
  return driver == "vfio-pci" || driver == "pci-stub" || driver == "uio_pci_generic" ||
         driver == "igb_uio";
}

std::string VfNetdeviceDriver(const std::string& pf_driver) {
  if (pf_driver == "igb") return "igbvf";
  if (pf_driver == "ixgbe") return "ixgbevf";
  if (pf_driver == "i40e" || pf_driver == "ice") return "iavf";
  return pf_driver;
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

bool PciFunction::IsRdmaCapable() const {
  if (!rdma_devices.empty()) return true;
  if (!IsNetwork()) return false;
  const unsigned cls = class_code >> 8;
  if (cls == 0x0207 || cls == 0x0c06 || vendor == "15b3") return true;
  // Core drivers whose RDMA half is another module (loaded later, if at all).
  static const char* const kRdmaCoreDrivers[] = {"mlx4_core", "mlx5_core", "qib", "hfi1",
                                                 "efa", "bnxt_en", "qede"};
  for (const char* d : kRdmaCoreDrivers) {
    if (driver == d) return true;
  }
  return false;
}

std::vector<const PciFunction*> HostFacts::Nics() const {
  std::vector<const PciFunction*> out;
  for (const auto& f : pci) {
    if (!f.IsNetwork() || f.IsVf()) continue;
    if (f.sriov.has_value() || f.IsRdmaCapable()) out.push_back(&f);
  }
  return out;
}

}  // namespace provisioner
