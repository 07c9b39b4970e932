#include "modules/sriov/sriov_module.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/strings.h"
#include "engine/host/host_fs.h"
#include "engine/model/pci_address.h"
#include "engine/module/registry.h"
#include "engine/plan/resource.h"
#include "modules/link/link_backend.h"
#include "modules/sriov/planner.h"
#include "modules/sriov/vf_settings_restore.h"

namespace provisioner {
namespace {

// The change's target count, checked: plans may come from a file.
StatusOr<int> TargetCount(const Change& change) {
  if (change.attribute != kNumVfsAttribute) {
    return InvalidArgumentError("module sriov has no attribute " + change.attribute + " (" +
                                change.id + ")");
  }
  if (!change.after.is_number_integer() || change.after.get<long long>() < 0 ||
      change.after.get<long long>() > 65535) {
    return InvalidArgumentError(change.id + ": numVfs must be a count, not " + change.after.dump());
  }
  return static_cast<int>(change.after.get<long long>());
}

// "nics[gpu1-nic].numVfs" (the style of verify messages), or the field path.
std::string Label(const Change& change) {
  if (change.detail.is_object() && change.detail.contains("nic") &&
      change.detail["nic"].is_string()) {
    return "nics[" + change.detail["nic"].get<std::string>() + "].numVfs";
  }
  if (!change.field_path.empty()) return change.field_path;
  return change.target + " numVfs";
}

// The VF indexes whose netdevs the change's detail says were up when the
// PF had `target` VFs: a rollback to that count restores them (planner.h).
std::vector<int> VfsToBringUp(const Change& change, int target) {
  std::vector<int> out;
  const nlohmann::json* record = RecordAtCount(change, kVfsUpAtCount, "vfIndexes", target);
  if (record == nullptr) return out;
  for (const auto& i : record->at("vfIndexes")) {
    if (i.is_number_integer() && i.get<long long>() >= 0 && i.get<long long>() < target) {
      out.push_back(static_cast<int>(i.get<long long>()));
    }
  }
  return out;
}

// The registered netdevs of VF `index` of `pf`.
std::vector<std::string> VfNetdevs(const HostFs& fs, const std::string& pf, int index) {
  return RegisteredNetdevs(fs, "/sys/bus/pci/devices/" + pf + "/virtfn" + std::to_string(index));
}

}  // namespace

Status SriovModule::Discover(HostContext& ctx, HostFacts& facts) {
  for (PciFunction& f : facts.pci) {
    if (f.IsVf()) continue;
    auto info = ReadSriovInfo(*ctx.fs, f.pci_address, facts, &facts.warnings);
    if (!info.ok()) return info.status().WithContext("read SR-IOV of " + f.pci_address);
    f.sriov = std::move(*info);
  }
  return OkStatus();
}

void SriovModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanByPciResource(PlanNumVfs, desired, facts, sink);
  sink.UnmanagedPfsWithVfs(CountUnmanagedPfsWithVfs(desired, facts));
}

Status SriovModule::Apply(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(int target, TargetCount(change));
  RETURN_IF_ERROR(ApplyNumVfs(change.target, target, ctx, options_));
  // Back to a count the PF had (a rollback): the re-created VFs have driver
  // defaults; their settings before the change come back (the MAC and GUIDs
  // rebind a VF: before the netdevs' state), and their netdevs come up down:
  // those that were up before are brought up again.
  RETURN_IF_ERROR(RestoreVfSettings(change, target, ctx));
  const std::vector<int> up = VfsToBringUp(change, target);
  if (up.empty()) return OkStatus();
  std::unique_ptr<LinkBackend> links = NewLinkBackend(*ctx.fs);
  for (int i : up) {
    for (const std::string& nd : VfNetdevs(*ctx.fs, change.target, i)) {
      RETURN_IF_ERROR(links->SetUp(nd, true).WithContext("bring VF " + std::to_string(i) +
                                                         " netdev " + nd + " of " + change.target +
                                                         " up again, as it was"));
    }
  }
  return OkStatus();
}

Status SriovModule::CheckChange(const Change& change) const {
  RETURN_IF_ERROR(TargetCount(change).status());
  if (!PciAddress::ParseFull(change.target)) {
    return InvalidArgumentError(change.id + ": " + Quote(change.target) + " is not a PCI address");
  }
  return OkStatus();
}

Status SriovModule::Verify(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(int target, TargetCount(change));
  RETURN_IF_ERROR(VerifyNumVfs(change.target, target, Label(change), *ctx.fs));
  RETURN_IF_ERROR(VerifyVfSettings(change, target, ctx).WithContext(Label(change)));
  const std::vector<int> up = VfsToBringUp(change, target);
  if (up.empty()) return OkStatus();
  std::unique_ptr<LinkBackend> links = NewLinkBackend(*ctx.fs);
  for (int i : up) {
    const std::vector<std::string> netdevs = VfNetdevs(*ctx.fs, change.target, i);
    if (netdevs.empty()) {
      return FailedPreconditionError(Label(change) + ": VF " + std::to_string(i) + " of " +
                                     change.target + " has no netdev; it was up before");
    }
    for (const std::string& nd : netdevs) {
      ASSIGN_OR_RETURN(LinkFacts l, links->Read(nd));
      if (!l.admin_up) {
        return FailedPreconditionError(Label(change) + ": VF " + std::to_string(i) + " netdev " +
                                       nd + " of " + change.target +
                                       ": admin state desired up (as before), current down");
      }
    }
  }
  return OkStatus();
}

PROVISIONER_REGISTER_MODULE("sriov", SriovModule, "pci")

}  // namespace provisioner
