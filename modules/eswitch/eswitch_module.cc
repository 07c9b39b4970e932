#include "modules/eswitch/eswitch_module.h"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/strings.h"
#include "engine/model/pci_address.h"
#include "engine/module/registry.h"
#include "engine/output/facts_output.h"
#include "modules/eswitch/eswitch_planner.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

bool ValidName(const std::string& s) {
  return !s.empty() && s.size() < 64 && s.find('/') == std::string::npos && s != "." && s != "..";
}

// The VF representors of a PF: its netdevs whose phys_port_name is pf<N>vf<M>.
std::map<int, std::string> Representors(const HostFs& fs, const std::string& bdf) {
  std::map<int, std::string> out;
  auto names = fs.ListDir("/sys/bus/pci/devices/" + bdf + "/net");
  if (!names.ok()) return out;
  for (const std::string& n : *names) {
    auto ppn = fs.ReadFile("/sys/bus/pci/devices/" + bdf + "/net/" + n + "/phys_port_name");
    if (!ppn.ok()) continue;  // EOPNOTSUPP: a netdev without a port name
    if (auto vf = RepresentorVfIndex(Trim(*ppn))) out[*vf] = n;
  }
  return out;
}

struct BoundVf {
  std::string bdf;
  std::string driver;
};

// The PF's VFs that have a driver now (virtfnN links), in index order.
StatusOr<std::vector<BoundVf>> BoundVfs(const HostFs& fs, const std::string& pf) {
  std::vector<BoundVf> out;
  const std::string dir = "/sys/bus/pci/devices/" + pf;
  ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDir(dir));
  std::map<int, std::string> vfs;
  for (const std::string& e : entries) {
    if (e.rfind("virtfn", 0) != 0 || e.size() == 6 ||
        e.find_first_not_of("0123456789", 6) != std::string::npos) {
      continue;
    }
    ASSIGN_OR_RETURN(std::string target, fs.ReadLink(dir + "/" + e));
    vfs[std::atoi(e.c_str() + 6)] = std::string(Basename(target));
  }
  for (const auto& [index, vf] : vfs) {
    (void)index;
    auto drv = fs.ReadLink("/sys/bus/pci/devices/" + vf + "/driver");
    if (drv.ok()) out.push_back({vf, std::string(Basename(*drv))});
  }
  return out;
}

// Polls `done` (bounded by the settle timeout): the kernel unbinds and binds
// before the write returns; a simulated kernel (--root) acts a moment later,
// and the next write to the same file must wait for it.
bool WaitFor(HostContext& ctx, const std::function<bool()>& done) {
  if (done()) return true;
  if (ctx.clock == nullptr) return false;
  const auto until = ctx.clock->Now() + ctx.settle_timeout;
  while (ctx.clock->Now() < until) {
    ctx.clock->SleepFor(std::chrono::milliseconds(20));
    if (done()) return true;
  }
  return false;
}

bool HasDriver(const HostFs& fs, const std::string& bdf) {
  return fs.IsSymlink("/sys/bus/pci/devices/" + bdf + "/driver");
}

}  // namespace

Status EswitchModule::Discover(HostContext& ctx, HostFacts& facts) {
  facts.eswitch = EswitchFacts();
  facts.eswitch.discovered = true;
  if (ctx.plan_for != nullptr) {
    bool wanted = false;
    for (const NicSpec& n : ctx.plan_for->nics) wanted = wanted || n.eswitch_mode.has_value();
    if (!wanted) return OkStatus();  // no Plan reads them
  }
  std::unique_ptr<DevlinkBackend> devlink = options_.devlink(*ctx.fs);
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || !f.IsNetwork() || !f.sriov || !PciAddress::ParseFull(f.pci_address)) continue;
    EswitchPfFacts e;
    auto state = devlink->Read(f.pci_address);
    if (state.ok()) {
      e.mode = state->mode;
      e.flow_steering_mode = state->flow_steering_mode;
      e.hw_tc_offload = state->hw_tc_offload;
    } else {
      e.error = state.status().message();
      spdlog::debug("eswitch {} ({}): {}", f.pci_address, devlink->Name(), e.error);
    }
    e.representors = Representors(*ctx.fs, f.pci_address);
    facts.eswitch.pfs[f.pci_address] = std::move(e);
  }
  return OkStatus();
}

void EswitchModule::Plan(const DesiredState& desired, const HostFacts& facts,
                         PlanSink& sink) const {
  PlanEswitch(desired, facts, sink);
}

Status EswitchModule::CheckChange(const Change& c) const {
  if (c.module != kEswitchModule)
    return InvalidArgumentError("module eswitch cannot apply " + c.id);
  if (!PciAddress::ParseFull(c.target))
    return InvalidArgumentError(c.id + ": bad PCI address " + c.target);
  if (c.attribute != kEswitchModeAttribute) {
    return InvalidArgumentError("module eswitch has no attribute " + c.attribute + " (" + c.id +
                                ")");
  }
  if (c.after != kEswitchLegacy && c.after != kEswitchSwitchdev) {
    return InvalidArgumentError(c.id + ": eswitchMode must be \"legacy\" or \"switchdev\", not " +
                                c.after.dump());
  }
  if (!c.detail.is_object()) return InvalidArgumentError(c.id + ": detail must be an object");
  if (auto f = c.detail.find("flowSteeringMode");
      f != c.detail.end() && (!f->is_string() || *f != kFlowSteeringSmfs)) {
    return InvalidArgumentError(c.id + ": detail.flowSteeringMode must be \"smfs\"");
  }
  if (auto n = c.detail.find("pfNetdev");
      n != c.detail.end() &&
      (!n->is_string() || !ValidName(n->get<std::string>()) || n->get<std::string>().size() > 15)) {
    return InvalidArgumentError(c.id + ": detail.pfNetdev must be an interface name");
  }
  for (const char* flag : {"hwTcOffload", "rebindVfs"}) {
    if (auto b = c.detail.find(flag); b != c.detail.end() && !b->is_boolean()) {
      return InvalidArgumentError(c.id + ": detail." + flag + " must be true or false");
    }
  }
  return OkStatus();
}

Status EswitchModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  const std::string& bdf = change.target;
  const std::string want = change.after.get<std::string>();
  std::unique_ptr<DevlinkBackend> devlink = options_.devlink(*ctx.fs);
  ASSIGN_OR_RETURN(DevlinkState now, devlink->Read(bdf));
  if (now.mode == want) return OkStatus();  // a re-run, or a rollback of a refused set
  auto step = [&](const std::string& s) {
    if (ctx.progress) ctx.progress->Step(s);
  };
  const bool switchdev = want == kEswitchSwitchdev;
  // mlx5: the flow steering mode cannot change once in switchdev.
  if (switchdev && change.detail.value("flowSteeringMode", "") == kFlowSteeringSmfs &&
      now.flow_steering_mode && *now.flow_steering_mode != kFlowSteeringSmfs) {
    step(bdf + " devlink param flow_steering_mode smfs");
    RETURN_IF_ERROR(devlink->SetParam(bdf, kFlowSteeringParam, kFlowSteeringSmfs)
                        .WithContext("apply " + change.id));
  }
  if (switchdev && change.detail.value("hwTcOffload", false)) {
    const std::string ifname = change.detail.value("pfNetdev", "");
    step(ifname + " hw-tc-offload on");
    RETURN_IF_ERROR(devlink->SetHwTcOffload(bdf, ifname).WithContext("apply " + change.id));
  }
  std::vector<BoundVf> unbound;
  if (change.detail.value("rebindVfs", false)) {
    ASSIGN_OR_RETURN(std::vector<BoundVf> bound, BoundVfs(*ctx.fs, bdf));
    for (const BoundVf& vf : bound) {
      if (!ValidName(vf.driver)) continue;
      step(vf.bdf + " unbind from " + vf.driver);
      Status s = ctx.fs->WriteAttr("/sys/bus/pci/drivers/" + vf.driver + "/unbind", vf.bdf);
      if (!s.ok()) {
        // Back as it was: the VFs unbound so far to their drivers again.
        for (const BoundVf& u : unbound) {
          (void)ctx.fs->WriteAttr("/sys/bus/pci/drivers/" + u.driver + "/bind", u.bdf);
        }
        return s.WithContext("apply " + change.id + ": unbind " + vf.bdf);
      }
      unbound.push_back(vf);
      if (!WaitFor(ctx, [&] { return !HasDriver(*ctx.fs, vf.bdf); })) {
        for (const BoundVf& u : unbound) {
          (void)ctx.fs->WriteAttr("/sys/bus/pci/drivers/" + u.driver + "/bind", u.bdf);
        }
        return Status(StatusCode::kUnavailable, "apply " + change.id + ": " + vf.bdf +
                                                    " still bound to " + vf.driver +
                                                    " after the unbind");
      }
    }
  }
  step("devlink dev eswitch set pci/" + bdf + " mode " + want);
  Status set = devlink->SetMode(bdf, want).WithContext("apply " + change.id);
  // The VFs back to their drivers whether or not the mode changed.
  Status bind = OkStatus();
  for (const BoundVf& vf : unbound) {
    step(vf.bdf + " bind to " + vf.driver);
    Status s = ctx.fs->WriteAttr("/sys/bus/pci/drivers/" + vf.driver + "/bind", vf.bdf);
    if (s.ok() && !WaitFor(ctx, [&] { return HasDriver(*ctx.fs, vf.bdf); })) {
      s = Status(StatusCode::kUnavailable,
                 vf.bdf + " not bound to " + vf.driver + " after the bind");
    }
    if (!s.ok() && bind.ok()) bind = s.WithContext("apply " + change.id + ": bind " + vf.bdf);
  }
  RETURN_IF_ERROR(set);
  RETURN_IF_ERROR(bind);
  // The representors: registered by the driver before the devlink answer on
  // a live host; a simulated kernel (--root) may take a moment. Bounded.
  auto num = ctx.fs->ReadFile("/sys/bus/pci/devices/" + bdf + "/sriov_numvfs");
  const size_t vfs = num.ok() ? static_cast<size_t>(std::atoi(Trim(*num).c_str())) : 0;
  const size_t want_reps = switchdev ? vfs : 0;
  if (ctx.clock == nullptr || Representors(*ctx.fs, bdf).size() == want_reps) return OkStatus();
  if (ctx.progress) {
    ctx.progress->Waiting(
        bdf + " VF representors",
        std::chrono::duration_cast<std::chrono::milliseconds>(ctx.settle_timeout));
  }
  const auto until = ctx.clock->Now() + ctx.settle_timeout;
  while (ctx.clock->Now() < until) {
    ctx.clock->SleepFor(std::chrono::milliseconds(50));
    if (Representors(*ctx.fs, bdf).size() == want_reps) return OkStatus();
  }
  return OkStatus();  // Verify says which one is missing
}

Status EswitchModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  const std::string& bdf = change.target;
  const std::string want = change.after.get<std::string>();
  ASSIGN_OR_RETURN(DevlinkState now, options_.devlink(*ctx.fs)->Read(bdf));
  if (now.mode != want) {
    return Status(StatusCode::kFailedPrecondition, change.id + ": E-Switch mode of pci/" + bdf +
                                                       " is " + now.mode +
                                                       " after the change, not " + want);
  }
  auto num = ctx.fs->ReadFile("/sys/bus/pci/devices/" + bdf + "/sriov_numvfs");
  const int vfs = num.ok() ? std::atoi(Trim(*num).c_str()) : 0;
  const std::map<int, std::string> reps = Representors(*ctx.fs, bdf);
  if (want == kEswitchSwitchdev) {
    for (int i = 0; i < vfs; ++i) {
      if (reps.count(i) == 0) {
        return Status(StatusCode::kFailedPrecondition,
                      change.id + ": switchdev, but VF " + std::to_string(i) + " of pci/" + bdf +
                          " has no representor netdev (phys_port_name pf<N>vf" + std::to_string(i) +
                          ")");
      }
    }
  } else if (!reps.empty()) {
    return Status(StatusCode::kFailedPrecondition, change.id + ": legacy, but representor " +
                                                       reps.begin()->second + " of pci/" + bdf +
                                                       " is still there");
  }
  return OkStatus();
}

void EswitchModule::Check(const DesiredState* desired, const HostFacts& facts,
                          CheckSink& sink) const {
  CheckEswitch(desired, facts, sink);
}

void EswitchModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  if (!facts.eswitch.discovered) return;
  for (const auto& [bdf, e] : facts.eswitch.pfs) {
    if (!e.mode) continue;
    nlohmann::json* nic = out.Nic(bdf);
    if (nic == nullptr) continue;
    nlohmann::json j = {{"mode", *e.mode}};
    if (e.flow_steering_mode) j["flowSteeringMode"] = *e.flow_steering_mode;
    nlohmann::json reps = nlohmann::json::array();
    for (const auto& [index, name] : e.representors) {
      reps.push_back({{"vf", index}, {"netdev", name}});
    }
    j["representors"] = reps;
    (*nic)["eswitch"] = j;
  }
}

// After pci (the PFs, their VFs and netdevs) and sriov (numVfs comes first
// in the phases anyway; discover's output keeps the SR-IOV facts first).
PROVISIONER_REGISTER_MODULE("eswitch", EswitchModule, "pci", "sriov")

}  // namespace provisioner
