// Module "pci": every PCI function of the host (libpci for IDs, class and
// names; the host layer for driver, NUMA node, netdevs, RDMA devices and the
// VF/PF links), and the kernel release. It applies nothing; its plan step
// reports nics whose selectors share a PF on this host.
#ifndef PROVISIONER_MODULES_PCI_PCI_MODULE_H_
#define PROVISIONER_MODULES_PCI_PCI_MODULE_H_

#include <string_view>

#include "engine/module/module.h"

namespace provisioner {

// Where a kernel-shaped tree keeps PCI functions (links into /sys/devices).
inline constexpr std::string_view kPciDevicesDir = "/sys/bus/pci/devices";
// pci.ids: the tree's own copy when it has one, else the system's.
inline constexpr std::string_view kPciIdsPath = "/usr/share/misc/pci.ids";

class PciModule final : public DiscoveryModule {
 public:
  std::string_view name() const override { return "pci"; }
  // RenderFactsJson (discover output): pci_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, RenderFactsJson, RenderFactsTable);
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_PCI_PCI_MODULE_H_
