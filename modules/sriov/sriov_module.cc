#include "modules/sriov/sriov_module.h"

#include <string>
#include <utility>

#include "engine/base/strings.h"
#include "engine/model/pci_address.h"
#include "engine/module/registry.h"
#include "engine/plan/resource.h"
#include "modules/sriov/planner.h"

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
  const size_t from = sink.changes().size();
  PlanNumVfs(desired, facts, sink);
  DeclarePciResources(facts, sink, from);  // a PF's changes in order, PFs at once
}

Status SriovModule::Apply(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(int target, TargetCount(change));
  return ApplyNumVfs(change.target, target, ctx, options_);
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
  return VerifyNumVfs(change.target, target, Label(change), *ctx.fs);
}

PROVISIONER_REGISTER_MODULE("sriov", SriovModule, "pci")

}  // namespace provisioner
