#include "modules/pcie/pcie_checks.h"

#include <cstdio>
#include <string>
#include <vector>

#include "engine/model/iommu_mode.h"
#include "engine/model/selector.h"
#include "engine/model/topology.h"
#include "modules/pcie/pcie_config.h"
#include "modules/pcie/pcie_planner.h"

namespace provisioner {
namespace {

constexpr char kModule[] = "pcie";

std::string ConfigPath(const std::string& bdf) { return "/sys/bus/pci/devices/" + bdf + "/config"; }

// The NICs doctor looks at: the PFs host.yaml selects, else every NIC.
std::vector<const PciFunction*> NicsOf(const DesiredState* desired, const HostFacts& facts) {
  if (desired != nullptr && !desired->nics.empty()) {
    std::vector<const PciFunction*> selected = SelectedPfs(*desired, facts);
    if (!selected.empty()) return selected;
  }
  return facts.Nics();
}

bool RdmaNic(const PciFunction& f) { return !f.IsVf() && f.IsNetwork() && !f.rdma_devices.empty(); }

// The IOMMU groups of a path's GPU and NIC.
std::vector<std::string> GroupsOf(const HostFacts& facts, const GpuNicPath& p) {
  std::vector<std::string> out;
  for (const std::string& end : {p.gpu, p.nic}) {
    const PciFunction* f = facts.FindPci(end);
    if (f != nullptr && !f->iommu_group.empty()) out.push_back(f->iommu_group);
  }
  return out;
}

void CheckAcs(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  const bool wanted =
      desired != nullptr && desired->pcie && desired->pcie->disable_acs.value_or("none") != "none";
  for (const GpuNicPath& p : GpuNicPaths(facts, NicsOf(desired, facts))) {
    CheckResult r;
    r.module = kModule;
    r.id = "pcie.acs-gpu-nic-path";
    r.target = "GPU " + p.gpu + " <-> NIC " + p.nic;
    // What the ports should hold depends on whether the IOMMU translates.
    const IommuDecision iommu = DecideIommuMode(facts.pcie, GroupsOf(facts, p));
    const bool keep_redirect =
        iommu.mode == IommuMode::kTranslating || iommu.mode == IommuMode::kUnknown;
    std::vector<std::string> off_value, unknown;
    std::string setpci;
    for (const std::string& bdf : p.bridges) {
      auto bad = facts.pcie.unreadable.find(bdf);
      auto it = facts.pcie.functions.find(bdf);
      if (bad != facts.pcie.unreadable.end() || it == facts.pcie.functions.end()) {
        r.evidence.push_back({ConfigPath(bdf), bad != facts.pcie.unreadable.end()
                                                   ? bad->second
                                                   : std::string("not read")});
        unknown.push_back(bdf);
        continue;
      }
      const PcieFunctionFacts& f = it->second;
      if (!f.express_offset && f.express_not_captured) {
        r.evidence.push_back({ConfigPath(bdf), "PCI Express capability not captured (" +
                                                   std::to_string(f.config_size) + " bytes)"});
        unknown.push_back(bdf);
        continue;
      }
      if (!f.IsDownstreamPort()) continue;
      if (!f.acs_offset) {
        r.evidence.push_back({ConfigPath(bdf), f.config_size < kPcieConfigSize
                                                   ? "extended config space not readable"
                                                   : "no ACS capability"});
        if (f.config_size < kPcieConfigSize) unknown.push_back(bdf);
        continue;
      }
      const uint16_t want = AcsControlFor(iommu.mode, f.acs_capability, f.acs_control);
      r.evidence.push_back(
          {ConfigPath(bdf) + " ECAP_ACS+0x6 (offset " +
               Hex16(static_cast<uint16_t>(*f.acs_offset + kPciAcsControl)) + ")",
           "ACS Control " + Hex16(f.acs_control) + ", Capability " + Hex16(f.acs_capability)});
      if (f.acs_control != want) {
        off_value.push_back(bdf + " " + Hex16(f.acs_control) + " (want " + Hex16(want) + ")");
        char value[8];
        std::snprintf(value, sizeof value, "%04x", want);
        setpci += (setpci.empty() ? "" : "; ") + std::string("setpci -s ") + bdf +
                  " ECAP_ACS+0x6.w=" + value;
      }
    }
    r.evidence.push_back({"IOMMU", std::string(IommuModeName(iommu.mode)) + ": " + iommu.why});
    if (!off_value.empty()) {
      r.verdict = wanted ? Verdict::kFail : Verdict::kWarn;
      std::string list;
      for (const auto& b : off_value) list += (list.empty() ? "" : ", ") + b;
      r.summary = "ACS Control on " + list + " (" + PcieLevelName(p.level) + " path, IOMMU " +
                  IommuModeName(iommu.mode) +
                  "): GPUDirect RDMA traffic is redirected through "
                  "the root complex";
      r.fix =
          "set spec.pcie.disableAcs: gpuNicPaths and run provisioner apply at every boot "
          "(or: " +
          setpci + ")";
      if (keep_redirect) {
        r.fix +=
            "; under a translating IOMMU Request/Completion Redirect stay on and only "
            "ATS-translated requests go direct (Direct Translated P2P): the NIC needs "
            "ATS_ENABLED=1 (firmware.ats-gpudirect); or boot with iommu=pt and clear "
            "ACS entirely";
      }
    } else if (!unknown.empty()) {
      r.verdict = Verdict::kWarn;
      r.summary =
          "ACS state not captured for " + std::to_string(unknown.size()) + " port(s) on the path";
      r.fix =
          "run doctor as root on the host (config space beyond 64 bytes needs root), or "
          "snapshot the host with its config files";
    } else {
      r.verdict = Verdict::kOk;
      r.summary = "ACS Control fits the " + std::string(PcieLevelName(p.level)) +
                  " path under IOMMU " + IommuModeName(iommu.mode) +
                  (keep_redirect ? " (redirects kept, Direct Translated P2P where advertised)"
                                 : " (no redirect)");
    }
    sink.Add(std::move(r));
  }
}

void CheckMaxReadRequest(const HostFacts& facts, CheckSink& sink) {
  for (const PciFunction& pf : facts.pci) {
    if (!RdmaNic(pf)) continue;
    CheckResult r;
    r.module = kModule;
    r.id = "pcie.max-read-request";
    r.target = pf.pci_address + " (" + (pf.rdma_devices.empty() ? "" : pf.rdma_devices[0]) + ")";
    auto bad = facts.pcie.unreadable.find(pf.pci_address);
    auto it = facts.pcie.functions.find(pf.pci_address);
    if (bad != facts.pcie.unreadable.end() || it == facts.pcie.functions.end() ||
        !it->second.express_offset) {
      r.verdict = Verdict::kWarn;
      r.summary = "Max_Read_Request_Size not captured";
      r.evidence.push_back({ConfigPath(pf.pci_address), bad != facts.pcie.unreadable.end()
                                                            ? bad->second
                                                            : "no PCI Express capability read"});
      r.fix = "run doctor as root on the host, or snapshot it with its config files";
      sink.Add(std::move(r));
      continue;
    }
    const PcieFunctionFacts& f = it->second;
    r.evidence.push_back(
        {ConfigPath(pf.pci_address) + " CAP_EXP+0x8 (offset " +
             Hex16(static_cast<uint16_t>(*f.express_offset + kPciExpDeviceControl)) + ")",
         "Device Control " + Hex16(f.device_control) + ": MaxReadReq " +
             std::to_string(f.MaxReadRequest()) + " bytes"});
    if (f.MaxReadRequest() < 4096) {
      r.verdict = Verdict::kWarn;
      r.summary = "MaxReadReq " + std::to_string(f.MaxReadRequest()) +
                  " bytes caps the NIC's DMA reads (the nic-configuration-operator sets 4096)";
      r.fix = "set spec.nics[].pcie.maxReadRequest: 4096 for this NIC (re-applied at every boot)";
    } else {
      r.verdict = Verdict::kOk;
      r.summary = "MaxReadReq 4096 bytes";
    }
    sink.Add(std::move(r));
  }
}

bool HasWord(const std::string& cmdline, const std::string& word) {
  size_t pos = 0;
  while ((pos = cmdline.find(word, pos)) != std::string::npos) {
    const bool start = pos == 0 || cmdline[pos - 1] == ' ';
    const size_t end = pos + word.size();
    if (start && (end == cmdline.size() || cmdline[end] == ' ' || cmdline[end] == '\n')) {
      return true;
    }
    pos = end;
  }
  return false;
}

void CheckIommu(const HostFacts& facts, CheckSink& sink) {
  bool gpu = false, rdma = false;
  for (const PciFunction& f : facts.pci) {
    gpu = gpu || IsGpuFunction(f);
    rdma = rdma || RdmaNic(f);
  }
  if (!gpu || !rdma) return;
  CheckResult r;
  r.module = kModule;
  r.id = "pcie.iommu-passthrough";
  r.target = "IOMMU";
  const auto& pc = facts.pcie;
  r.evidence.push_back(
      {"/sys/kernel/iommu_groups",
       pc.iommu_groups ? std::to_string(*pc.iommu_groups) + " groups" : std::string("absent")});
  r.evidence.push_back({"/proc/cmdline", pc.cmdline ? *pc.cmdline : std::string("not captured")});
  std::vector<std::string> translated;
  for (const auto& [group, type] : pc.iommu_group_types) {
    r.evidence.push_back({"/sys/kernel/iommu_groups/" + group + "/type", type});
    if (type != "identity") translated.push_back(group);
  }
  const std::string fix =
      "boot with iommu=pt so that GPU and NIC DMA is not translated: spec.kernel.cmdline: "
      "[intel_iommu=on, iommu=pt] (AMD: amd_iommu=on, iommu=pt), then reboot; and disable ACS "
      "on the GPU-NIC paths (spec.pcie.disableAcs)";
  // A warning, not a failure: GPUDirect RDMA can work through a translating
  // IOMMU (with ATS), but NVIDIA's GPUDirect and NCCL guides ask for
  // passthrough, and every GPU host would otherwise fail doctor.
  if (!translated.empty()) {
    r.verdict = Verdict::kWarn;
    r.summary = "the IOMMU translates DMA of " + std::to_string(translated.size()) +
                " GPU/NIC group(s): GPUDirect RDMA peer traffic goes through the IOMMU";
    r.fix = fix;
  } else if (!pc.iommu_group_types.empty()) {
    r.verdict = Verdict::kOk;
    r.summary = "the GPUs' and NICs' IOMMU groups are in passthrough (identity)";
  } else if (pc.cmdline && HasWord(*pc.cmdline, "iommu=pt")) {
    r.verdict = Verdict::kOk;
    r.summary = "IOMMU in passthrough (iommu=pt)";
  } else if (!pc.iommu_groups && pc.cmdline) {
    r.verdict = Verdict::kOk;
    r.summary = "no IOMMU groups: the IOMMU is off, DMA is not translated";
  } else if (pc.iommu_groups && pc.cmdline) {
    const bool on = HasWord(*pc.cmdline, "intel_iommu=on") || HasWord(*pc.cmdline, "amd_iommu=on");
    r.verdict = Verdict::kWarn;
    r.summary = on ? "the IOMMU is on without iommu=pt: DMA of GPUs and NICs is translated"
                   : "IOMMU groups exist and the kernel command line has no iommu=pt: the "
                     "default domain type is not captured (no iommu_groups/<n>/type)";
    r.fix = fix;
  } else {
    r.verdict = Verdict::kWarn;
    r.summary = "IOMMU mode not captured (no /proc/cmdline under the root)";
    r.fix = "run doctor on the host, or snapshot /proc/cmdline and /sys/kernel/iommu_groups";
  }
  sink.Add(std::move(r));
}

}  // namespace

void CheckPcie(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  CheckAcs(desired, facts, sink);
  CheckMaxReadRequest(facts, sink);
  CheckIommu(facts, sink);
}

}  // namespace provisioner
