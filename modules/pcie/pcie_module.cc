#include "modules/pcie/pcie_module.h"

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>

#include "engine/model/pci_address.h"
#include "engine/model/topology.h"
#include "engine/module/registry.h"
#include "engine/plan/resource.h"
#include "modules/pcie/pcie_checks.h"
#include "modules/pcie/pcie_config.h"
#include "modules/pcie/pcie_planner.h"

namespace provisioner {
namespace {

std::string ConfigPath(const std::string& bdf) { return "/sys/bus/pci/devices/" + bdf + "/config"; }

bool WantsAcs(const DesiredState& d) {
  return d.pcie && d.pcie->disable_acs.value_or("none") != "none";
}

bool WantsPcie(const DesiredState& d) {
  if (WantsAcs(d)) return true;
  for (const NicSpec& n : d.nics) {
    if (n.pcie && n.pcie->max_read_request) return true;
  }
  return false;
}

// The inverse of a change planned from a short capture (before unknown):
// there is no value to restore.
bool NothingToRestore(const Change& c) { return c.after.is_null() && !c.before.is_null(); }

Status CheckChangeShape(const Change& c) {
  if (c.module != kPcieModule) return InvalidArgumentError("module pcie cannot apply " + c.id);
  if (!PciAddress::ParseSysfsName(c.target))
    return InvalidArgumentError(c.id + ": bad PCI address " + c.target);
  if (NothingToRestore(c)) return OkStatus();
  if (c.attribute == kAcsControlAttribute) {
    if (!c.after.is_string() || !ParseHex16(c.after.get<std::string>())) {
      return InvalidArgumentError(c.id + ": ACS Control must be a hex string, not " +
                                  c.after.dump());
    }
    return OkStatus();
  }
  if (c.attribute == kMaxReadRequestAttribute) {
    if (!c.after.is_number_integer() ||
        !WithMaxReadRequest(0, static_cast<int>(c.after.get<long long>()))) {
      return InvalidArgumentError(
          c.id + ": maxReadRequest must be 128..4096, a power of two, not " + c.after.dump());
    }
    return OkStatus();
  }
  return InvalidArgumentError("module pcie has no attribute " + c.attribute + " (" + c.id + ")");
}

// The function's config space now, parsed.
StatusOr<PcieFunctionFacts> ReadConfig(const HostFs& fs, const std::string& bdf) {
  ASSIGN_OR_RETURN(std::string bytes, fs.ReadFile(ConfigPath(bdf)));
  auto parsed = ParsePcieConfig(bytes);
  if (!parsed.ok()) return parsed.status().WithContext(ConfigPath(bdf));
  parsed->config_size = bytes.size();
  return parsed;
}

// The negotiated link (lspci's LnkSta) as sysfs gives it, for discover's
// table and JSON; absent attributes leave it empty.
void ReadLink(const HostFs& fs, const std::string& bdf, PcieFunctionFacts& f) {
  const std::string dir = "/sys/bus/pci/devices/" + bdf + "/";
  if (auto speed = fs.ReadAttr(dir + "current_link_speed"); speed.ok()) f.link_speed = *speed;
  if (auto width = fs.ReadAttr(dir + "current_link_width"); width.ok()) {
    char* end = nullptr;
    const long w = std::strtol(width->c_str(), &end, 10);
    if (end != width->c_str() && *end == '\0' && w > 0 && w <= 32)
      f.link_width = static_cast<int>(w);
  }
}

// The register a change writes and its value now.
struct Register {
  uint16_t offset = 0;
  uint16_t value = 0;
};

StatusOr<Register> CurrentRegister(const HostFs& fs, const Change& c) {
  ASSIGN_OR_RETURN(PcieFunctionFacts f, ReadConfig(fs, c.target));
  if (c.attribute == kAcsControlAttribute) {
    if (!f.acs_offset) {
      return FailedPreconditionError(ConfigPath(c.target) + ": no ACS extended capability");
    }
    return Register{static_cast<uint16_t>(*f.acs_offset + kPciAcsControl), f.acs_control};
  }
  if (!f.express_offset) {
    return FailedPreconditionError(ConfigPath(c.target) + ": no PCI Express capability");
  }
  return Register{static_cast<uint16_t>(*f.express_offset + kPciExpDeviceControl),
                  f.device_control};
}

// The register value `c.after` asks for, given its value now.
uint16_t Wanted(const Change& c, uint16_t now) {
  if (c.attribute == kAcsControlAttribute) return *ParseHex16(c.after.get<std::string>());
  return *WithMaxReadRequest(now, static_cast<int>(c.after.get<long long>()));
}

// The register `c` acts on, its value now and the value `c.after` asks for;
// nullopt when there is nothing to write or check: nothing to restore, or a
// change planned from a short capture (before unknown) on a function that
// turns out to have no such register.
struct RegisterStep {
  Register now;
  uint16_t want = 0;
};

StatusOr<std::optional<RegisterStep>> StepOf(const HostFs& fs, const Change& c) {
  if (NothingToRestore(c)) return std::optional<RegisterStep>();
  StatusOr<Register> read = CurrentRegister(fs, c);
  if (c.before.is_null() && !read.ok() && read.status().code() == StatusCode::kFailedPrecondition) {
    return std::optional<RegisterStep>();
  }
  ASSIGN_OR_RETURN(Register now, std::move(read));
  return std::optional<RegisterStep>(RegisterStep{now, Wanted(c, now.value)});
}

}  // namespace

Status PcieModule::Discover(HostContext& ctx, HostFacts& facts) {
  facts.pcie = PcieFacts();
  facts.pcie.discovered = true;
  if (ctx.plan_for != nullptr && !WantsPcie(*ctx.plan_for)) return OkStatus();
  const HostFs& fs = *ctx.fs;
  for (const PciFunction& f : facts.pci) {
    const bool bridge = (f.class_code >> 8) == 0x0604;
    if (f.IsVf() || (!bridge && !f.IsNetwork())) continue;
    auto read = ReadConfig(fs, f.pci_address);
    if (read.ok()) {
      if (ctx.plan_for == nullptr) ReadLink(fs, f.pci_address, *read);  // planning needs no link
      facts.pcie.functions[f.pci_address] = *read;
    } else if (read.status().err() == ENOENT) {
      facts.pcie.unreadable[f.pci_address] = "not captured (no " + ConfigPath(f.pci_address) + ")";
    } else {
      facts.pcie.unreadable[f.pci_address] = read.status().message();
    }
  }
  // The IOMMU mode: doctor's evidence, and what disableAcs clears.
  if (ctx.plan_for != nullptr && !WantsAcs(*ctx.plan_for)) return OkStatus();
  if (fs.IsDir("/sys/kernel/iommu_groups")) {
    auto groups = fs.ListDir("/sys/kernel/iommu_groups");
    if (groups.ok()) facts.pcie.iommu_groups = static_cast<int>(groups->size());
  } else {
    // No IOMMU, unless the capture did not take /sys/kernel.
    facts.pcie.iommu_groups_absent = fs.Captured("/sys/kernel");
  }
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || f.iommu_group.empty() || (!IsGpuFunction(f) && !f.IsNetwork())) continue;
    auto type = fs.ReadAttr("/sys/kernel/iommu_groups/" + f.iommu_group + "/type");
    if (type.ok()) facts.pcie.iommu_group_types[f.iommu_group] = *type;
  }
  auto cmdline = fs.ReadAttr("/proc/cmdline");
  if (cmdline.ok()) facts.pcie.cmdline = *cmdline;
  return OkStatus();
}

void PcieModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanByPciResource(PlanPcie, desired, facts, sink);
}

Status PcieModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  ASSIGN_OR_RETURN(std::optional<RegisterStep> step, StepOf(*ctx.fs, change));
  if (!step) return OkStatus();
  const auto& [now, want] = *step;
  if (now.value == want) return OkStatus();  // a re-run, or a rollback of a refused write
  if (ctx.progress) {
    ctx.progress->Step(change.target + " config+" + Hex16(now.offset) + " <- " + Hex16(want));
  }
  return ctx.fs->WriteAt(ConfigPath(change.target), now.offset, Le16(want));
}

Status PcieModule::CheckChange(const Change& change) const { return CheckChangeShape(change); }

Status PcieModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  ASSIGN_OR_RETURN(std::optional<RegisterStep> step, StepOf(*ctx.fs, change));
  if (!step) return OkStatus();
  const auto& [now, want] = *step;
  if (now.value == want) return OkStatus();
  const std::string label = change.field_path.empty() ? change.id : change.field_path;
  if (change.attribute == kAcsControlAttribute) {
    return FailedPreconditionError(label + " (" + change.target + "): desired ACS Control " +
                                   Hex16(want) + ", current " + Hex16(now.value));
  }
  return FailedPreconditionError(label + " (" + change.target + "): desired " +
                                 change.after.dump() + ", current " +
                                 std::to_string(128 << ((now.value >> 12) & 0x7)));
}

void PcieModule::Check(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) const {
  CheckPcie(desired, facts, sink);
}

// After topology: GPU and NIC facts (pci, sriov, rdma) are complete.
PROVISIONER_REGISTER_MODULE("pcie", PcieModule, "pci", "topology")

}  // namespace provisioner
