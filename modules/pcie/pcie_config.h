// PCI configuration space, parsed from the bytes of a function's `config`
// file (sysfs: 64 bytes unprivileged, 256 for conventional PCI, 4096 for
// PCIe functions, as lspci/setpci read it). Pure: bytes in, facts out.
//
// Layout (PCI Local Bus 3.0 §6.1, §6.7; PCI Express Base 5.0 §7.5, §7.7.8):
//   0x06  Status; bit 4 = Capabilities List
//   0x34  Capabilities Pointer (type 0 and type 1 headers)
//   standard capability: +0 ID, +1 next pointer. PCI Express (ID 0x10):
//     +0x02 PCI Express Capabilities (bits 7:4 Device/Port Type)
//     +0x08 Device Control (bits 14:12 Max_Read_Request_Size, 0=128 .. 5=4096)
//   0x100 extended capabilities: dword header, bits 15:0 ID, 19:16 version,
//     31:20 next offset (0 = last). ACS (ID 0x000D):
//     +0x04 ACS Capability (16 bits), +0x06 ACS Control (16 bits)
#ifndef PROVISIONER_MODULES_PCIE_PCIE_CONFIG_H_
#define PROVISIONER_MODULES_PCIE_PCIE_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/base/status.h"
#include "engine/model/iommu_mode.h"
#include "engine/model/pcie_facts.h"

namespace provisioner {

inline constexpr uint16_t kPciStatus = 0x06;
inline constexpr uint16_t kPciStatusCapList = 0x10;
inline constexpr uint16_t kPciCapabilityPointer = 0x34;
inline constexpr uint8_t kPciCapIdExpress = 0x10;
inline constexpr uint16_t kPciExpFlags = 0x02;          // PCI Express Capabilities
inline constexpr uint16_t kPciExpDeviceControl = 0x08;  // Device Control
inline constexpr uint16_t kPciExpDevCtlReadRequest = 0x7000;
inline constexpr uint16_t kPciExtCapStart = 0x100;
inline constexpr uint16_t kPciExtCapIdAcs = 0x000d;
inline constexpr uint16_t kPciAcsCapability = 0x04;
inline constexpr uint16_t kPciAcsControl = 0x06;
// ACS Capability / Control bits (PCI Express Base 5.0 §7.7.8.2, .3; the
// kernel's PCI_ACS_*).
inline constexpr uint16_t kPciAcsSourceValidation = 0x01;     // SV
inline constexpr uint16_t kPciAcsTranslationBlocking = 0x02;  // TB
inline constexpr uint16_t kPciAcsRequestRedirect = 0x04;      // RR
inline constexpr uint16_t kPciAcsCompletionRedirect = 0x08;   // CR
inline constexpr uint16_t kPciAcsUpstreamForwarding = 0x10;   // UF
inline constexpr uint16_t kPciAcsEgressControl = 0x20;        // EC
inline constexpr uint16_t kPciAcsDirectTranslated = 0x40;     // DT
// PCIe Device/Port Type values (PCI Express Capabilities bits 7:4).
inline constexpr int kPciExpTypeEndpoint = 0;
inline constexpr int kPciExpTypeRootPort = 4;
inline constexpr int kPciExpTypeUpstream = 5;
inline constexpr int kPciExpTypeDownstream = 6;
// Full PCIe configuration space.
inline constexpr size_t kPcieConfigSize = 4096;

// The PCI Express and ACS capabilities of `config`. Capability lists are
// walked with loop and bounds guards: a malformed list (a loop, a pointer
// into the header or past the end) ends the walk. Fails only when the
// header itself is missing (fewer than 64 bytes). Extended capabilities need
// the full 4096 bytes (an unprivileged read gives 64).
StatusOr<PcieFunctionFacts> ParsePcieConfig(std::string_view config);

// The ACS Control a GPU<->NIC path's port should hold, given the IOMMU
// mode (engine/model/iommu_mode.h) and the port's ACS Capability and
// Control now. IOMMU off or passthrough: 0 (every redirect off: what NCCL's
// guide does; peer requests turn at the switch). Translating, or unknown
// (the safe choice): SV, RR, CR and UF kept as they are (the kernel's
// pci_std_enable_acs sets them: untranslated requests go up to the IOMMU),
// Translation Blocking and Egress Control cleared (they would block or
// redirect the translated peer requests), and Direct Translated P2P set
// where the capability advertises it (ATS-translated requests go direct).
uint16_t AcsControlFor(IommuMode mode, uint16_t capability, uint16_t control);

// Device Control with Max_Read_Request_Size set to `bytes` (128..4096, a
// power of two; other values return nullopt), every other bit kept.
std::optional<uint16_t> WithMaxReadRequest(uint16_t device_control, int bytes);

// Little-endian 16-bit value as two bytes, as config space holds it.
std::string Le16(uint16_t v);

// "0x001d"
std::string Hex16(uint16_t v);
// Parses "0x001d" (or "001d"); nullopt unless 1..4 hex digits.
std::optional<uint16_t> ParseHex16(std::string_view s);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_PCIE_PCIE_CONFIG_H_
