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
  Status Discover(HostContext& ctx, HostFacts& facts) override;
  void Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const override;
  // discover output: pci_render.cc
  void RenderFactsJson(const HostFacts& facts, FactsJson& out) const override;
  std::string RenderFactsTable(const HostFacts& facts) const override;
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_PCI_PCI_MODULE_H_
