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
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/iommu_mode.h"
#include "engine/model/selector.h"
#include "modules/firmware/firmware_module.h"
#include "modules/firmware/firmware_reset.h"
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

// firmware.rail-versions: the rail cards of one node run one firmware
// version (NCCL's rails are peers: a card on other firmware behaves
// differently under load, and NVIDIA's guides pin one version per fleet).
// The rail cards: the nics spec.rails made (with host.yaml), else every
// ConnectX card of one PCI device ID (the same model). The version is the
// running one the driver reports, each card's RDMA device `fw_ver`.
void CheckRailVersions(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  // group -> card -> (version, evidence path)
  std::map<std::string, std::map<std::string, std::pair<std::string, std::string>>> groups;
  auto add = [&](const std::string& group, const PciFunction& pf) {
    if (pf.vendor != "15b3" || pf.IsVf()) return;
    for (const RdmaDevice& d : facts.rdma.devices) {
      if (d.pci_address != pf.pci_address || d.fw_ver.empty()) continue;
      groups[group].emplace(
          FirmwareDevice(pf.pci_address),
          std::make_pair(d.fw_ver, "/sys/class/infiniband/" + d.name + "/fw_ver"));
    }
  };
  if (desired != nullptr && !desired->rail_origins.empty()) {
    for (const RailOrigin& o : desired->rail_origins) {
      for (size_t i = 0; i < desired->nics.size(); ++i) {
        if (DesiredState::NicPath(i) != o.path) continue;
        for (const PciFunction* pf : SelectPfs(desired->nics[i], facts)) add("spec.rails", *pf);
      }
    }
  } else {
    for (const PciFunction& f : facts.pci) {
      if (f.IsNetwork()) add("ConnectX " + f.vendor + ":" + f.device_id, f);
    }
  }
  for (const auto& [group, cards] : groups) {
    if (cards.size() < 2) continue;
    std::map<std::string, std::vector<std::string>> by_version;
    CheckResult r;
    r.module = "firmware";
    r.id = "firmware.rail-versions";
    r.target = group;
    for (const auto& [card, v] : cards) {
      by_version[v.first].push_back(card);
      r.evidence.push_back({v.second, v.first});
    }
    if (by_version.size() == 1) {
      r.verdict = Verdict::kOk;
      r.summary = "the " + std::to_string(cards.size()) + " cards of " + group +
                  " run one firmware version, " + by_version.begin()->first;
    } else {
      // The version most cards run, and the odd ones out.
      auto most = by_version.begin();
      for (auto it = by_version.begin(); it != by_version.end(); ++it) {
        if (it->second.size() > most->second.size()) most = it;
      }
      std::string odd;
      for (const auto& [version, list] : by_version) {
        if (version == most->first) continue;
        for (const std::string& card : list)
          odd += (odd.empty() ? "" : ", ") + card + " " + version;
      }
      r.verdict = Verdict::kFail;
      r.summary = "the cards of " + group + " run " + std::to_string(by_version.size()) +
                  " firmware versions: " + most->first + " on " +
                  std::to_string(most->second.size()) + " of " + std::to_string(cards.size()) +
                  ", but " + odd;
      r.fix =
          "burn one image on every rail card (mstflint -d <card> -i <image> -y burn, then a "
          "firmware reset or reboot); NVIDIA's firmware downloads list the image per PSID "
          "(mstflint -d <card> query)";
    }
    sink.Add(std::move(r));
  }
}

// firmware.version-pin (with host.yaml): each card a nic's firmwareVersion
// selects runs the pinned version (FW Version(Running) while a burned image
// waits for a reset, else FW Version): FAIL naming both and the PSID, the
// mstflint query as evidence, the burn (or policy: update) as the fix. A card
// whose version cannot be read is a WARN (nothing to compare).
void CheckVersionPins(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  if (desired == nullptr) return;
  std::set<std::string> seen;
  for (size_t i = 0; i < desired->nics.size(); ++i) {
    const NicSpec& nic = desired->nics[i];
    if (!nic.firmware_version) continue;
    const FirmwareVersionSpec& pin = *nic.firmware_version;
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      const std::string dev = FirmwareDevice(pf->pci_address);
      auto it = facts.firmware.find(dev);
      if (it == facts.firmware.end() || !seen.insert(dev + " " + pin.version).second) continue;
      const FirmwareFacts& fw = it->second;
      CheckResult r;
      r.module = "firmware";
      r.id = "firmware.version-pin";
      r.target = dev;
      const std::string query = "mstflint -d " + dev + " query";
      if (fw.flint_source.empty() || !fw.flint_error.empty()) {
        r.verdict = Verdict::kWarn;
        r.summary = "nic " + nic.name + " pins firmware " + pin.version + ", but the version of " +
                    dev + " cannot be read" +
                    (fw.flint_error.empty() ? " (mstflint not installed, or no capture)"
                                            : ": " + fw.flint_error);
        r.evidence.push_back({fw.flint_source.empty() ? query : fw.flint_source,
                              fw.flint_error.empty() ? "not read" : fw.flint_error});
        r.fix = "install mstflint (apt install mstflint); under a tree root capture it: " + query +
                " > <root>" + kMstflintCapturePrefix + dev + ".query";
        sink.Add(std::move(r));
        continue;
      }
      const std::string running = fw.fw_running.empty() ? fw.fw_version : fw.fw_running;
      std::string read = "FW Version: " + fw.fw_version;
      if (!fw.fw_running.empty()) read += ", FW Version(Running): " + fw.fw_running;
      read += ", PSID: " + (fw.psid.empty() ? std::string("-") : fw.psid);
      r.evidence.push_back({fw.flint_source == "mstflint" ? query : fw.flint_source, read});
      if (running == pin.version) {
        r.verdict = Verdict::kOk;
        r.summary = dev + " runs firmware " + running + ", as nic " + nic.name + " pins";
      } else {
        r.verdict = Verdict::kFail;
        r.summary =
            dev + " (PSID " + (fw.psid.empty() ? "unknown" : fw.psid) + ") runs firmware " +
            running +
            (fw.fw_running.empty() ? "" : " (" + fw.fw_version + " burned, not running yet)") +
            ", but nic " + nic.name + " pins " + pin.version;
        if (fw.fw_version == pin.version) {
          r.fix = "activate the burned firmware: mstfwreset -d " + dev +
                  " -y -l 3 reset (the tool stops and starts the driver; --sync 1 where "
                  "its query lists the driver as a reset-sync owner), or reboot";
        } else {
          r.fix =
              "burn an image of " + pin.version + " built for PSID " +
              (fw.psid.empty() ? "<psid>" : fw.psid) + ": mstflint -d " + dev + " -i " +
              pin.image.value_or("<image>") +
              " -y burn, then a firmware reset or reboot; or set firmwareVersion.policy: update "
              "and run apply";
        }
      }
      sink.Add(std::move(r));
    }
  }
}

}  // namespace

void FirmwareModule::Check(const DesiredState* desired, const HostFacts& facts,
                           CheckSink& sink) const {
  CheckRailVersions(desired, facts, sink);
  CheckVersionPins(desired, facts, sink);
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
