#include "modules/link/link_module.h"

#include <cerrno>
#include <string>
#include <vector>

#include "engine/model/pci_address.h"
#include "engine/module/registry.h"
#include "engine/plan/resource.h"
#include "modules/link/link_planner.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

// The VF netdevs of a PF now: /sys/bus/pci/devices/<pf>/virtfnN/net/*.
StatusOr<std::vector<std::string>> VfNetdevs(const HostFs& fs, const std::string& pf) {
  const std::string dir = "/sys/bus/pci/devices/" + pf;
  ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDir(dir));
  std::vector<std::string> out;
  for (const std::string& e : entries) {
    if (e.rfind("virtfn", 0) != 0) continue;
    auto net = fs.ListDir(dir + "/" + e + "/net");
    if (!net.ok()) continue;  // bound to vfio-pci or not probed yet: no netdev
    out.insert(out.end(), net->begin(), net->end());
  }
  return out;
}

Status CheckChangeShape(const Change& c) {
  if (c.module != kLinkModule) return InvalidArgumentError("module link cannot apply " + c.id);
  if (c.attribute == kMtuAttribute) {
    if (!IsValidIfname(c.target)) return InvalidArgumentError(c.id + ": bad interface name");
    if (!c.after.is_number_integer() || c.after.get<long long>() < kMinMtu ||
        c.after.get<long long>() > 0x7fffffff) {
      return InvalidArgumentError(c.id + ": mtu must be a number >= 68, not " + c.after.dump());
    }
    return OkStatus();
  }
  if (c.attribute == kUpAttribute) {
    if (!IsValidIfname(c.target)) return InvalidArgumentError(c.id + ": bad interface name");
    if (!c.after.is_boolean()) return InvalidArgumentError(c.id + ": up must be true or false");
    return OkStatus();
  }
  if (c.attribute == kVfsUpAttribute) {
    // A path component as it is (/sys/bus/pci/devices/<target>): full form only.
    if (!PciAddress::ParseFull(c.target)) return InvalidArgumentError(c.id + ": bad PCI address");
    if (!c.after.is_boolean() && !c.after.is_null()) {
      return InvalidArgumentError(c.id + ": vfsUp must be true, false or null");
    }
    return OkStatus();
  }
  return InvalidArgumentError("module link has no attribute " + c.attribute + " (" + c.id + ")");
}

}  // namespace

std::unique_ptr<LinkBackend> LinkModule::Backend(HostFs& fs) const {
  if (options_.backend) return options_.backend(fs);
  return NewLinkBackend(fs);
}

Status LinkModule::Discover(HostContext& ctx, HostFacts& facts) {
  std::unique_ptr<LinkBackend> backend = Backend(*ctx.fs);
  std::vector<std::string> names;
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || !f.IsNetwork()) continue;
    names.insert(names.end(), f.netdevs.begin(), f.netdevs.end());
    if (!f.sriov) continue;
    for (const VfInfo& vf : f.sriov->vfs)
      names.insert(names.end(), vf.netdevs.begin(), vf.netdevs.end());
  }
  for (const std::string& n : names) {
    auto l = backend->Read(n);
    if (!l.ok()) {
      // A netdev that went away or cannot be read is a missing fact; in a
      // tree, a missing file is a partial capture (the planner says so).
      spdlog::debug("link {} ({}): {}", n, backend->Name(), l.status().message());
      const std::string dir = "/sys/class/net/" + n;
      if (l.status().code() == StatusCode::kNotFound &&
          (!ctx.fs->Captured(dir + "/mtu") || !ctx.fs->Captured(dir + "/flags"))) {
        facts.links_not_captured.insert(n);
      }
      continue;
    }
    facts.links[n] = std::move(*l);
  }
  return OkStatus();
}

void LinkModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  const size_t from = sink.changes().size();
  PlanLinks(desired, facts, sink);
  DeclarePciResources(facts, sink, from);  // a PF's changes in order, PFs at once
}

Status LinkModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  std::unique_ptr<LinkBackend> backend = Backend(*ctx.fs);
  if (change.attribute == kMtuAttribute) {
    const int want = static_cast<int>(change.after.get<long long>());
    // No write when it already holds (a rollback of a change the kernel
    // refused, a re-run): some drivers refuse even an unchanged value.
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(change.target));
    if (now.mtu == want) return OkStatus();
    return backend->SetMtu(change.target, want);
  }
  if (change.attribute == kUpAttribute) {
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(change.target));
    if (now.admin_up == change.after.get<bool>()) return OkStatus();
    return backend->SetUp(change.target, change.after.get<bool>());
  }
  if (change.after.is_null()) return OkStatus();  // undoing "VFs created up": nothing to restore
  const bool up = change.after.get<bool>();
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, VfNetdevs(*ctx.fs, change.target));
  for (const std::string& n : vfs) {
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(n));
    if (now.admin_up == up) continue;
    if (ctx.progress) ctx.progress->Step(n + (up ? " up" : " down"));
    RETURN_IF_ERROR(backend->SetUp(n, up).WithContext("VF of " + change.target));
  }
  return OkStatus();
}

Status LinkModule::CheckChange(const Change& change) const {
  return CheckChangeShape(change);
}

Status LinkModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  std::unique_ptr<LinkBackend> backend = Backend(*ctx.fs);
  const std::string label = change.field_path.empty() ? change.id : change.field_path;
  if (change.attribute == kMtuAttribute) {
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(change.target));
    const long long want = change.after.get<long long>();
    if (now.mtu != want) {
      return FailedPreconditionError(label + " (" + change.target + "): desired " +
                                     std::to_string(want) + ", current " + std::to_string(now.mtu));
    }
    return OkStatus();
  }
  std::vector<std::string> names = {change.target};
  if (change.attribute == kVfsUpAttribute) {
    if (change.after.is_null()) return OkStatus();
    ASSIGN_OR_RETURN(names, VfNetdevs(*ctx.fs, change.target));
  }
  for (const std::string& n : names) {
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(n));
    if (now.admin_up != change.after.get<bool>()) {
      return FailedPreconditionError(label + " (" + n + "): desired " +
                                     (change.after.get<bool>() ? "up" : "down") + ", current " +
                                     (now.admin_up ? "up" : "down"));
    }
  }
  return OkStatus();
}

PROVISIONER_REGISTER_MODULE("link", LinkModule, "sriov", "vf")

}  // namespace provisioner
