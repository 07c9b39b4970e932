// The IOMMU mode the GPUs' and NICs' DMA runs under, decided from the
// host's evidence (module pcie's facts): the type of their IOMMU groups
// (/sys/kernel/iommu_groups/<n>/type, drivers/iommu/iommu.c:
// "identity", "DMA", "DMA-FQ", "blocked", "unmanaged") and the kernel
// command line (/proc/cmdline: iommu=pt|nopt|off, iommu.passthrough=,
// intel_iommu=, amd_iommu=). Pure: facts in, a decision and its reason out.
//
// Why it matters: with the IOMMU off or in passthrough a bus address is a
// physical address, and clearing ACS Control lets a switch route peer
// requests straight to a peer's BAR (NCCL's troubleshooting guide). With a
// translating IOMMU a device's request carries an IOVA: a switch routing an
// untranslated request by address may hit the wrong BAR (misdirected DMA),
// so Request/Completion Redirect must stay on and only ATS-translated
// requests may go direct (ACS Direct Translated P2P, bit 6).
#ifndef PROVISIONER_ENGINE_MODEL_IOMMU_MODE_H_
#define PROVISIONER_ENGINE_MODEL_IOMMU_MODE_H_

#include <string>
#include <vector>

#include "engine/model/pcie_facts.h"

namespace provisioner {

enum class IommuMode {
  kUnknown,      // not captured: no group types, no /proc/cmdline
  kOff,          // no IOMMU groups: DMA addresses are physical
  kPassthrough,  // identity domains (iommu=pt): not translated
  kTranslating,  // DMA / DMA-FQ (or unmanaged, blocked) domains: IOVAs
};

// "off", "passthrough", "translating", "unknown".
const char* IommuModeName(IommuMode mode);

struct IommuDecision {
  IommuMode mode = IommuMode::kUnknown;
  // The evidence, for a plan reason or doctor: "intel_iommu=on without
  // iommu=pt; iommu_groups 4, 6 of type DMA".
  std::string why;
  // Evidence that disagrees with the decision (a group of type DMA under
  // iommu=pt: switched at runtime, or an inconsistent capture).
  std::vector<std::string> conflicts;
};

// `groups`: the IOMMU groups whose type counts (those of the functions
// concerned); empty means every group whose type was read.
//
// Order of evidence: an explicit passthrough choice on the command line
// (iommu=pt, iommu.passthrough=1; the last of iommu=pt/nopt and
// iommu.passthrough= wins, as the kernel parses them) decides, and a group
// type saying otherwise is a conflict; else the groups' types (any group
// not "identity" translates); else no groups (captured as absent, or an
// empty directory) is off; else groups without types and a command line
// naming no passthrough: the kernel's default domain, DMA on the
// distributions' kernels (CONFIG_IOMMU_DEFAULT_DMA_{STRICT,LAZY}); else
// unknown.
IommuDecision DecideIommuMode(const PcieFacts& facts, const std::vector<std::string>& groups);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_IOMMU_MODE_H_
