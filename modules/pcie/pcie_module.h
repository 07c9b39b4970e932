// Module "pcie": PCIe config-space settings for GPUDirect RDMA.
//   spec.pcie.disableAcs          ACS Control of root/downstream ports cleared
//   spec.nics[].pcie.maxReadRequest  Device Control Max_Read_Request_Size of PFs
// Both are live register writes, lost at reboot: the systemd unit's apply at
// every boot puts them back. Plus the doctor checks of pcie_checks.h.
//
// Config space is read and written as the function's sysfs `config` file
// through the host layer (HostFs::ReadFile / HostFs::WriteAt: a pwrite at
// the register's offset, what setpci and libpci's sysfs method do), not
// through libpci: libpci opens `<sysfs.path>/devices/<bdf>/config` with
// plain open(2), so a captured tree's absolute or escaping link would lead
// it to the real host's config space, and its writes would bypass the host
// layer's root confinement, fault injection and write accounting. The
// capability lists are parsed here (pcie_config.h), as lspci does.
#ifndef PROVISIONER_MODULES_PCIE_PCIE_MODULE_H_
#define PROVISIONER_MODULES_PCIE_PCIE_MODULE_H_

#include <string>
#include <string_view>

#include "engine/module/module.h"

namespace provisioner {

class PcieModule final : public Module {
 public:
  std::string_view name() const override { return "pcie"; }
  // Discover reads `config` of every bridge and network PF, the IOMMU groups and the
  // kernel command line. While planning a host.yaml without PCIe settings it
  // reads nothing.
  // Apply re-reads the register and writes it only when it differs.
  // RenderFactsJson, RenderFactsTable: pcie_render.cc.
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange, Check, RenderFactsJson,
                               RenderFactsTable);
  // Different functions at once: a positioned write to each one's own config file.
  bool ConcurrentApply() const override { return true; }
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_PCIE_PCIE_MODULE_H_
