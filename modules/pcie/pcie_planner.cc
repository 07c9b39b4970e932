#include "modules/pcie/pcie_planner.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "engine/model/iommu_mode.h"
#include "engine/model/pci_address.h"
#include "engine/model/selector.h"
#include "engine/model/topology.h"
#include "modules/pcie/pcie_config.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

// The BDFs of a sysfs device path, root port first, the device last.
std::vector<std::string> BdfChain(const std::string& sysfs_path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= sysfs_path.size()) {
    size_t end = sysfs_path.find('/', start);
    if (end == std::string::npos) end = sysfs_path.size();
    std::string part = sysfs_path.substr(start, end - start);
    if (PciAddress::ParseSysfsName(part)) out.push_back(std::move(part));
    start = end + 1;
  }
  return out;
}

std::string ConfigPath(const std::string& bdf) { return "/sys/bus/pci/devices/" + bdf + "/config"; }

Change PcieChange(const std::string& target, const char* attribute, nlohmann::json before,
                  nlohmann::json after, std::string reason, std::string field) {
  return MakeChange(kPcieModule, target, attribute, std::move(before), std::move(after),
                    Disruption::kLive, kPhasePcie, std::move(reason), std::move(field));
}

// The config facts of `bdf`, or an error message naming why there are none.
const PcieFunctionFacts* ConfigOf(const HostFacts& facts, const std::string& bdf,
                                  std::string* why) {
  auto bad = facts.pcie.unreadable.find(bdf);
  if (bad != facts.pcie.unreadable.end()) {
    *why = bad->second;
    return nullptr;
  }
  auto it = facts.pcie.functions.find(bdf);
  if (it == facts.pcie.functions.end()) {
    *why = "its config space was not read";
    return nullptr;
  }
  return &it->second;
}

void PlanAcs(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  const std::string mode = desired.pcie->disable_acs.value_or("none");
  if (mode == "none") return;
  const std::string field = "spec.pcie.disableAcs";
  // Port BDF -> why it is cleared.
  std::map<std::string, std::string> ports;
  // The IOMMU groups of the GPUs and NICs concerned (empty: every group).
  std::vector<std::string> groups;
  if (mode == "all") {
    for (const auto& [bdf, why] : facts.pcie.unreadable) {
      const PciFunction* f = facts.FindPci(bdf);
      if (f != nullptr && (f->class_code >> 8) == 0x0604) {
        sink.Error(field, "the ACS control of bridge " + bdf + " cannot be read: " + why);
      }
    }
    for (const auto& [bdf, f] : facts.pcie.functions) {
      const PciFunction* fn = facts.FindPci(bdf);
      const bool bridge = fn != nullptr && (fn->class_code >> 8) == 0x0604;
      if ((f.IsDownstreamPort() && f.acs_offset) || (bridge && f.AcsNotCaptured())) {
        ports[bdf] = "disableAcs all: ACS on every PCIe root and downstream port";
      }
    }
  } else {
    const std::vector<const PciFunction*> nics = SelectedPfs(desired, facts);
    if (nics.empty()) {
      sink.Warning(field, "gpuNicPaths: spec.nics selects no NIC on this host, nothing to do");
      return;
    }
    std::vector<GpuNicPath> paths = GpuNicPaths(facts, nics);
    if (paths.empty()) {
      sink.Warning(field,
                   "gpuNicPaths: no GPU shares a PCIe switch or host bridge with a selected NIC");
    }
    for (const GpuNicPath& p : paths) {
      for (const std::string& end : {p.gpu, p.nic}) {
        const PciFunction* fn = facts.FindPci(end);
        if (fn != nullptr && !fn->iommu_group.empty()) groups.push_back(fn->iommu_group);
      }
      for (const std::string& bdf : p.bridges) {
        std::string why;
        const PcieFunctionFacts* f = ConfigOf(facts, bdf, &why);
        if (f == nullptr) {
          sink.Error(field, "the ACS control of " + bdf + " (between GPU " + p.gpu + " and NIC " +
                                p.nic + ") cannot be read: " + why);
          continue;
        }
        if (!f->IsDownstreamPort() && !f->AcsNotCaptured()) continue;
        ports.emplace(bdf, "ACS sends peer-to-peer requests between GPU " + p.gpu + " and NIC " +
                               p.nic + " (" + PcieLevelName(p.level) + ") up to the root complex");
      }
    }
  }
  if (ports.empty()) return;
  const IommuDecision iommu = DecideIommuMode(facts.pcie, groups);
  for (const std::string& conflict : iommu.conflicts) sink.Warning(field, conflict);
  if (iommu.mode == IommuMode::kUnknown) {
    sink.Warning(field, "IOMMU mode unknown (" + iommu.why +
                            "): planned the ACS Control that is safe under a translating "
                            "IOMMU; capture /proc/cmdline and /sys/kernel/iommu_groups to clear "
                            "it for passthrough");
  }
  const std::string iommu_mode =
      std::string("IOMMU ") + IommuModeName(iommu.mode) + " (" + iommu.why + ")";
  std::vector<std::string> blind;  // config files too short, planned anyway
  for (const auto& [bdf, why] : ports) {
    const PcieFunctionFacts& f = facts.pcie.functions.at(bdf);
    if (f.AcsNotCaptured()) {
      // A short capture (a non-root read: 64 bytes): the register is not in
      // it. Cleared, the value is known without it: planned with an unknown
      // before. Kept redirects depend on the register: not plannable.
      const std::string what = ConfigPath(bdf) + " holds " + std::to_string(f.config_size) +
                               " of 4096 bytes (read without root?): ACS Control not captured";
      if (iommu.mode == IommuMode::kOff || iommu.mode == IommuMode::kPassthrough) {
        blind.push_back(ConfigPath(bdf));
        Change c =
            PcieChange(bdf, kAcsControlAttribute, nullptr, Hex16(0),
                       why + "; " + iommu_mode + ": ACS Control cleared; " + kLiveReason, field);
        c.detail["register"] = "ECAP_ACS+0x6";
        c.detail["iommu"] = IommuModeName(iommu.mode);
        sink.AddChange(std::move(c));
      } else {
        sink.Error(field, what + "; under " + iommu_mode +
                              " the value keeps the port's redirect bits and depends on its ACS "
                              "Capability: plan as root, or from a capture taken as root");
      }
      continue;
    }
    if (!f.acs_offset) continue;
    const uint16_t want = AcsControlFor(iommu.mode, f.acs_capability, f.acs_control);
    if (want == f.acs_control) continue;
    std::string what;
    if (want == 0) {
      what = "ACS Control cleared";
    } else {
      // SV, RR, CR, UF kept: untranslated requests still go up to the IOMMU.
      what = "ACS Control keeps SV, RR, CR, UF";
      what += (want & kPciAcsDirectTranslated) != 0
                  ? " and sets DT (Direct Translated P2P: ATS-translated peer requests go "
                    "direct; the NIC needs ATS_ENABLED)"
                  : " (no Direct Translated P2P advertised: peer traffic through this port "
                    "still goes up to the root complex)";
    }
    Change c = PcieChange(bdf, kAcsControlAttribute, Hex16(f.acs_control), Hex16(want),
                          why + "; " + iommu_mode + ": " + what + "; " + kLiveReason, field);
    c.detail["register"] = "ECAP_ACS+0x6";
    c.detail["offset"] = *f.acs_offset + kPciAcsControl;
    c.detail["iommu"] = IommuModeName(iommu.mode);
    sink.AddChange(std::move(c));
  }
  if (!blind.empty()) {
    std::string files = blind[0];
    if (blind.size() > 1) files += " and " + std::to_string(blind.size() - 1) + " more";
    sink.Warning(field, "ACS Control not captured in " + files +
                            " (64 bytes: config space read without root?): 0x0000 planned with "
                            "an unknown current value");
  }
}

void PlanMaxReadRequest(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  std::set<std::string> planned;
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.pcie || !nic.pcie->max_read_request) continue;
    const int want = *nic.pcie->max_read_request;
    const std::string field = DesiredState::NicPath(i) + ".pcie.maxReadRequest";
    if (!WithMaxReadRequest(0, want)) {
      sink.Error(field, std::to_string(want) + " is not one of 128, 256, 512, 1024, 2048, 4096");
      continue;
    }
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    // A selector matching nothing: reported once, by the pci module.
    for (const PciFunction* pf : pfs) {
      std::string why;
      const PcieFunctionFacts* f = ConfigOf(facts, pf->pci_address, &why);
      if (f == nullptr) {
        sink.Error(field, "the Device Control of " + pf->pci_address + " cannot be read: " + why);
        continue;
      }
      if (!f->express_offset && f->express_not_captured) {
        // A short capture: the capability is past the bytes read.
        sink.Warning(field, ConfigPath(pf->pci_address) + " holds " +
                                std::to_string(f->config_size) +
                                " bytes (read without root?): its PCI Express capability is not "
                                "captured; " +
                                std::to_string(want) + " planned with an unknown current value");
        Change c = PcieChange(pf->pci_address, kMaxReadRequestAttribute, nullptr, want,
                              "nic " + nic.name + " wants PCIe Max_Read_Request_Size " +
                                  std::to_string(want) + " bytes; " + kLiveReason,
                              field);
        c.detail["nic"] = nic.name;
        c.detail["register"] = "CAP_EXP+0x8.w bits 14:12";
        if (planned.insert(c.id).second) sink.AddChange(std::move(c));
        continue;
      }
      if (!f->express_offset) {
        sink.Error(field, pf->pci_address + " has no PCI Express capability");
        continue;
      }
      if (f->MaxReadRequest() == want) continue;
      Change c = PcieChange(pf->pci_address, kMaxReadRequestAttribute, f->MaxReadRequest(), want,
                            "nic " + nic.name + " wants PCIe Max_Read_Request_Size " +
                                std::to_string(want) + " bytes; " + kLiveReason,
                            field);
      c.detail["nic"] = nic.name;
      c.detail["register"] = "CAP_EXP+0x8.w bits 14:12";
      c.detail["offset"] = *f->express_offset + kPciExpDeviceControl;
      if (planned.insert(c.id).second) sink.AddChange(std::move(c));
    }
  }
}

}  // namespace

std::vector<const PciFunction*> SelectedPfs(const DesiredState& desired, const HostFacts& facts) {
  std::map<std::string, const PciFunction*> by_address;
  for (const NicSpec& nic : desired.nics) {
    for (const PciFunction* pf : SelectPfs(nic, facts)) by_address[pf->pci_address] = pf;
  }
  std::vector<const PciFunction*> out;
  for (const auto& [a, pf] : by_address) out.push_back(pf);
  return out;
}

std::vector<GpuNicPath> GpuNicPaths(const HostFacts& facts,
                                    const std::vector<const PciFunction*>& nics) {
  BridgeIdLookup lookup = [&facts](const std::string& bdf) {
    const PciFunction* f = facts.FindPci(bdf);
    return f == nullptr ? std::string() : f->vendor + ":" + f->device_id;
  };
  std::vector<const PciFunction*> gpus;
  for (const PciFunction& f : facts.pci) {
    if (IsGpuFunction(f)) gpus.push_back(&f);
  }
  std::vector<GpuNicPath> out;
  for (const PciFunction* g : gpus) {
    std::vector<std::pair<PcieLevel, const PciFunction*>> levels;
    for (const PciFunction* n : nics) {
      auto level =
          ComputePcieLevel(g->sysfs_path, g->numa_node, n->sysfs_path, n->numa_node, lookup);
      if (level) levels.emplace_back(*level, n);
    }
    if (levels.empty()) continue;
    PcieLevel best = PcieLevel::kSys;
    for (const auto& l : levels) best = std::min(best, l.first);
    if (best > PcieLevel::kPhb) continue;
    const std::vector<std::string> gc = BdfChain(g->sysfs_path);
    for (const auto& [level, n] : levels) {
      if (level != best) continue;
      const std::vector<std::string> nc = BdfChain(n->sysfs_path);
      size_t common = 0;
      while (common + 1 < gc.size() && common + 1 < nc.size() && gc[common] == nc[common]) {
        ++common;
      }
      std::set<std::string> bridges;
      for (size_t i = common; i + 1 < gc.size(); ++i) bridges.insert(gc[i]);
      for (size_t i = common; i + 1 < nc.size(); ++i) bridges.insert(nc[i]);
      out.push_back({g->pci_address, n->pci_address, level, {bridges.begin(), bridges.end()}});
    }
  }
  return out;
}

void PlanPcie(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  if (desired.pcie) PlanAcs(desired, facts, sink);
  PlanMaxReadRequest(desired, facts, sink);
}

}  // namespace provisioner
