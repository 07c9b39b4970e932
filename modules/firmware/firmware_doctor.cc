// doctor checks of the firmware module (FirmwareModule::Check).
//
// firmware.ats-gpudirect: on a host with NVIDIA GPUs and RDMA NICs, a
// ConnectX card whose ATS_ENABLED is False (next boot or now). With an IOMMU
// translating the NIC's DMA, GPUDirect RDMA peer-to-peer needs ATS on the NIC
// (and ACS on the switches allowing translated requests) or it detours
// through the root complex: NVIDIA's ATS/ACS guidance for GPUDirect RDMA
// under an IOMMU. A NIC with no IOMMU group has no translation for ATS to
// cache: ATS off is then what nic-configuration-operator's
// gpuDirectOptimized (bare metal) sets, and the check says ok.
#include <string>
#include <vector>

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
  (void)desired;
  bool gpus = false;
  for (const PciFunction& f : facts.pci) gpus = gpus || IsNvidiaGpu(f);
  if (!gpus || facts.rdma.devices.empty()) return;  // no GPUDirect RDMA here
  for (const auto& [dev, fw] : facts.firmware) {
    auto p = fw.params.find(kAtsParam);
    if (!fw.error.empty() || p == fw.params.end()) continue;  // nothing known to check
    const FirmwareParam& ats = p->second;
    const bool off_next = MstconfigValueMatches(ats.next_boot, "false");
    const bool off_now = ats.current && MstconfigValueMatches(*ats.current, "false");
    const PciFunction* pf = facts.FindPci(dev);
    const bool iommu = pf != nullptr && !pf->iommu_group.empty();
    CheckResult r;
    r.module = "firmware";
    r.id = "firmware.ats-gpudirect";
    r.target = dev;
    r.evidence = {{fw.source, QueryLine(fw.raw_query, kAtsParam)}};
    if (pf != nullptr) {
      r.evidence.push_back({"/sys/bus/pci/devices/" + dev + "/iommu_group",
                            iommu ? pf->iommu_group : "(none: no IOMMU)"});
    }
    if (!off_next && !off_now) {
      r.verdict = Verdict::kOk;
      r.summary = dev + " has ATS enabled for GPUDirect RDMA";
    } else if (!iommu) {
      r.verdict = Verdict::kOk;
      r.summary = dev + " has ATS off and no IOMMU translates its DMA: nothing for ATS to "
                        "cache (nic-configuration-operator's gpuDirectOptimized sets "
                        "ATS_ENABLED=0 on bare metal)";
    } else {
      r.verdict = Verdict::kWarn;
      r.summary = dev + " has ATS off (" + std::string(off_next ? "next boot" : "") +
                  (off_next && off_now ? " and " : "") + (off_now ? "now" : "") +
                  ") on a host with GPUs and RDMA NICs behind an IOMMU: GPUDirect RDMA "
                  "reads and writes of GPU memory are translated in the root complex instead "
                  "of going peer to peer";
      r.fix = "set it for the next boot and reboot: in host.yaml, on this card's nic, "
              "`firmware: { ATS_ENABLED: true }` (provisioner apply), or `mstconfig -d " +
              dev + " -y set ATS_ENABLED=1`; ACS on the switches must then allow "
              "translated requests peer to peer";
    }
    sink.Add(std::move(r));
  }
}

}  // namespace provisioner
