#include "modules/vf/vf_module.h"

#include <utility>

#include "engine/module/registry.h"
#include "engine/plan/resource.h"
#include "modules/vf/vf_planner.h"

namespace provisioner {

VfHostOptions VfModule::HostOptions() const {
  VfHostOptions o;
  o.poll_interval = options_.poll_interval;
  return o;
}

VfNetlink* VfModule::Netlink() {
  std::lock_guard<std::mutex> lock(netlink_mu_);
  std::unique_ptr<VfNetlink>& netlink = netlinks_[std::this_thread::get_id()];
  if (netlink == nullptr) {
    netlink = options_.netlink_factory ? options_.netlink_factory() : NewLibnlVfNetlink();
  }
  return netlink.get();
}

std::unique_ptr<VfSettingsBackend> VfModule::Backend(HostFs& fs) {
  // Tests force either backend; otherwise the factory picks by root.
  if (options_.use_netlink == std::optional<bool>(true)) return NewNetlinkVfSettings(Netlink(), fs);
  if (options_.use_netlink == std::optional<bool>(false)) return NewTreeVfSettings(fs);
  return NewVfSettingsBackend(fs, [this] { return Netlink(); });
}

Status VfModule::Discover(HostContext& ctx, HostFacts& facts) {
  return DiscoverVfFacts(*ctx.fs, *Backend(*ctx.fs), facts);
}

void VfModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanByPciResource(PlanVf, desired, facts, sink);
}

Status VfModule::Apply(const Change& change, HostContext& ctx) {
  return ApplyVfChange(change, ctx, *Backend(*ctx.fs), HostOptions());
}

Status VfModule::Verify(const Change& change, HostContext& ctx) {
  return VerifyVfChange(change, ctx, *Backend(*ctx.fs));
}

PROVISIONER_REGISTER_MODULE("vf", VfModule, "sriov")

}  // namespace provisioner
