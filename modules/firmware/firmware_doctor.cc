// doctor checks of the firmware module (FirmwareModule::Check).
//
// firmware.ats-gpudirect: on a host with NVIDIA GPUs and RDMA NICs, a
// ConnectX card's ATS_ENABLED against the IOMMU mode of its PF
// (engine/model/iommu_mode.h). mlx5 uses ATS only for memory registered
// through dma-buf (GPU memory under a translating IOMMU: the NIC caches the
// translation and sends translated requests, which ACS Direct Translated
// P2P lets go straight to the GPU); nic-configuration-operator's
// gpuDirectOptimized sets ATS_ENABLED=false on bare metal (IOMMU off or
// passthrough: nothing to translate). So ATS is recommended only together
// with the translating-IOMMU ACS setting of spec.pcie.disableAcs (redirects
// kept, DT set), and off everywhere else.
#include <string>
#include <vector>

#include "engine/model/iommu_mode.h"
#include "modules/firmware/firmware_module.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner {
namespace {

constexpr char kAtsParam[] = "ATS_ENABLED";

bool IsNvidiaGpu(const PciFunction& f) {
  return (f.class_code >> 16) == 0x03 && f.vendor == "10de";
}

// The query's line for `param`, as printed (leading blanks and '*' kept out).
std::string QueryLine(const std::string& raw, const std::string& param) {
  size_t start = 0;
  while (start < raw.size()) {
    size_t nl = raw.find('\n', start);
    if (nl == std::string::npos) nl = raw.size();
    std::string line = raw.substr(start, nl - start);
    size_t at = line.find_first_not_of(" *\t");
    if (at != std::string::npos && line.compare(at, param.size(), param) == 0 &&
        (line.size() == at + param.size() || line[at + param.size()] == ' ')) {
      while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
      return line;
    }
    start = nl + 1;
  }
  return param;
}

}  // namespace

void FirmwareModule::Check(const DesiredState* desired, const HostFacts& facts,
                           CheckSink& sink) const {
  bool gpus = false;
  for (const PciFunction& f : facts.pci) gpus = gpus || IsNvidiaGpu(f);
  if (!gpus || facts.rdma.devices.empty()) return;  // no GPUDirect RDMA here
  const bool acs_managed =
      desired != nullptr && desired->pcie && desired->pcie->disable_acs.value_or("none") != "none";
  for (const auto& [dev, fw] : facts.firmware) {
    auto p = fw.params.find(kAtsParam);
    if (!fw.error.empty() || p == fw.params.end()) continue;  // nothing known to check
    const FirmwareParam& ats = p->second;
    const bool off_next = MstconfigValueMatches(ats.next_boot, "false");
    const bool off_now = ats.current && MstconfigValueMatches(*ats.current, "false");
    const PciFunction* pf = facts.FindPci(dev);
    std::vector<std::string> groups;
    if (pf != nullptr && !pf->iommu_group.empty()) groups.push_back(pf->iommu_group);
    IommuDecision iommu;
    if (pf != nullptr && pf->iommu_group.empty()) {
      iommu.mode = IommuMode::kOff;  // no group: the PF's DMA is not translated
      iommu.why = "no iommu_group";
    } else {
      iommu = DecideIommuMode(facts.pcie, groups);
    }
    CheckResult r;
    r.module = "firmware";
    r.id = "firmware.ats-gpudirect";
    r.target = dev;
    r.evidence = {{fw.source, QueryLine(fw.raw_query, kAtsParam)}};
    if (pf != nullptr) {
      r.evidence.push_back({"/sys/bus/pci/devices/" + dev + "/iommu_group",
                            pf->iommu_group.empty() ? "(none: no IOMMU)" : pf->iommu_group});
    }
    r.evidence.push_back({"IOMMU", std::string(IommuModeName(iommu.mode)) + ": " + iommu.why});
    const bool on_next = !off_next;
    if (iommu.mode == IommuMode::kTranslating) {
      if (!off_next && !off_now) {
        r.verdict = Verdict::kOk;
        r.summary = dev + " has ATS enabled under a translating IOMMU (" + iommu.why +
                    "): translated GPUDirect RDMA requests can go peer to peer";
        if (!acs_managed) {
          r.summary +=
              "; ACS must allow them (spec.pcie.disableAcs: gpuNicPaths keeps the "
              "redirects and sets Direct Translated P2P)";
        }
      } else {
        r.verdict = Verdict::kWarn;
        r.summary = dev + " has ATS off (" + std::string(off_next ? "next boot" : "") +
                    (off_next && off_now ? " and " : "") + (off_now ? "now" : "") +
                    ") under a translating IOMMU (" + iommu.why +
                    "): GPUDirect RDMA reads and writes of GPU memory (dma-buf) are translated "
                    "in the root complex instead of going peer to peer";
        r.fix =
            "together with spec.pcie.disableAcs: gpuNicPaths (under this IOMMU it keeps "
            "Request/Completion Redirect and sets Direct Translated P2P), set ATS for the "
            "next boot and reboot: on this card's nic `firmware: { ATS_ENABLED: true }` "
            "(provisioner apply), or `mstconfig -d " +
            dev +
            " -y set ATS_ENABLED=1`; or boot with iommu=pt and leave ATS off (what "
            "nic-configuration-operator's gpuDirectOptimized does on bare metal)";
      }
    } else if (iommu.mode == IommuMode::kUnknown) {
      r.verdict = Verdict::kWarn;
      r.summary = dev + " ATS " + (on_next ? "on" : "off") + ", IOMMU mode not captured (" +
                  iommu.why + "): ATS helps only under a translating IOMMU";
      r.fix = "run doctor on the host, or snapshot /proc/cmdline and /sys/kernel/iommu_groups";
    } else if (off_next && (off_now || !ats.current)) {
      r.verdict = Verdict::kOk;
      r.summary = dev + " has ATS off and the IOMMU does not translate its DMA (" +
                  std::string(IommuModeName(iommu.mode)) + ": " + iommu.why +
                  "): the bare-metal setting (nic-configuration-operator's gpuDirectOptimized "
                  "sets ATS_ENABLED=0; mlx5 uses ATS only for dma-buf memory)";
    } else {
      r.verdict = Verdict::kWarn;
      r.summary = dev + " has ATS on (" + std::string(on_next ? "next boot" : "now") +
                  ") while the IOMMU does not translate its DMA (" + IommuModeName(iommu.mode) +
                  ": " + iommu.why +
                  "): nothing for ATS to cache; nic-configuration-operator's gpuDirectOptimized "
                  "sets ATS_ENABLED=0 on bare metal";
      r.fix =
          "on this card's nic `firmware: { ATS_ENABLED: false }` (provisioner apply), or "
          "`mstconfig -d " +
          dev + " -y set ATS_ENABLED=0`, then reboot";
    }
    sink.Add(std::move(r));
  }
}

}  // namespace provisioner
