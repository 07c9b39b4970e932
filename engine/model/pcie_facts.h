// PCIe configuration-space facts (module `pcie`): what the pcie module read
// from each function's `config` file (sysfs, as lspci/setpci read it) and the
// IOMMU evidence doctor needs. Offsets are config-space byte offsets.
#ifndef PROVISIONER_ENGINE_MODEL_PCIE_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_PCIE_FACTS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace provisioner {

// One function's PCI Express and ACS capabilities, as found in its config space.
struct PcieFunctionFacts {
  // Bytes of config space readable (64 unprivileged, 256 conventional PCI,
  // 4096 PCIe): extended capabilities need 4096.
  size_t config_size = 0;
  // PCI Express Capability (cap ID 0x10): its offset, the Device/Port Type
  // (PCIe Capabilities register bits 7:4: 0 endpoint, 4 root port, 5 switch
  // upstream port, 6 switch downstream port, ...) and Device Control (+0x08).
  std::optional<uint16_t> express_offset;
  // The capability list points past the bytes read (a non-root read of
  // sysfs `config` gives 64): whether the function has a PCI Express (or
  // ACS) capability is not captured, which is not "none".
  bool express_not_captured = false;
  int port_type = -1;
  uint16_t device_control = 0;
  // ACS Extended Capability (ID 0x000D): its offset, ACS Capability (+0x04)
  // and ACS Control (+0x06).
  std::optional<uint16_t> acs_offset;
  uint16_t acs_capability = 0;
  uint16_t acs_control = 0;
  // The link as the kernel reports it (sysfs current_link_speed, e.g.
  // "32.0 GT/s PCIe", and current_link_width); "" / 0 when not read.
  std::string link_speed;
  int link_width = 0;
  // Max_Read_Request_Size in bytes (Device Control bits 14:12); 0 without
  // the PCI Express capability.
  int MaxReadRequest() const { return express_offset ? 128 << ((device_control >> 12) & 0x7) : 0; }
  // A root port (4) or a switch downstream port (6): where ACS redirects
  // peer-to-peer requests upstream.
  bool IsDownstreamPort() const { return port_type == 4 || port_type == 6; }
  // The ACS Control is not in the bytes read: the PCI Express capability is
  // past them, or a root/downstream port's extended space is (256 of 4096).
  bool AcsNotCaptured() const {
    return !acs_offset &&
           (express_not_captured || (IsDownstreamPort() && config_size < size_t{4096}));
  }
};

struct PcieFacts {
  bool discovered = false;  // the pcie module ran
  // By BDF: the functions whose `config` was read (bridges and network PFs).
  std::map<std::string, PcieFunctionFacts> functions;
  // BDF -> why its config space could not be used ("not captured",
  // "<path>: <errno>", "truncated: 64 bytes").
  std::map<std::string, std::string> unreadable;
  // /sys/kernel/iommu_groups: number of groups; nullopt when the directory
  // is absent (no IOMMU, or not captured).
  std::optional<int> iommu_groups;
  // The directory is missing and the host layer says that is real (the live
  // root, or a tree that captured /sys/kernel): no IOMMU.
  bool iommu_groups_absent = false;
  // /sys/kernel/iommu_groups/<group>/type ("identity" = passthrough, "DMA",
  // "DMA-FQ" = translated) of the GPUs' and NIC PFs' groups, where present.
  std::map<std::string, std::string> iommu_group_types;
  // /proc/cmdline as read; nullopt when absent (not captured).
  std::optional<std::string> cmdline;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_PCIE_FACTS_H_
