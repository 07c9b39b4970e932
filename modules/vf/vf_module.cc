#include "modules/vf/vf_module.h"

#include <utility>

#include "engine/module/registry.h"
#include "modules/vf/vf_planner.h"

namespace provisioner {

VfHostOptions VfModule::HostOptions(const HostFs& fs) const {
  VfHostOptions o;
  o.use_netlink = options_.use_netlink.value_or(fs.IsLiveRoot());
  o.poll_interval = options_.poll_interval;
  return o;
}

VfNetlink* VfModule::Netlink() {
  if (netlink_ == nullptr) {
    netlink_ = options_.netlink_factory ? options_.netlink_factory() : NewLibnlVfNetlink();
  }
  return netlink_.get();
}

Status VfModule::Discover(HostContext& ctx, HostFacts& facts) {
  VfHostOptions o = HostOptions(*ctx.fs);
  return DiscoverVfFacts(*ctx.fs, o.use_netlink ? Netlink() : nullptr, o, facts);
}

void VfModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanVf(desired, facts, sink);
}

Status VfModule::Apply(const Change& change, HostContext& ctx) {
  VfHostOptions o = HostOptions(*ctx.fs);
  return ApplyVfChange(change, ctx, o.use_netlink ? Netlink() : nullptr, o);
}

Status VfModule::Verify(const Change& change, HostContext& ctx) {
  VfHostOptions o = HostOptions(*ctx.fs);
  return VerifyVfChange(change, ctx, o.use_netlink ? Netlink() : nullptr, o);
}

PROVISIONER_REGISTER_MODULE("vf", VfModule, "sriov")

}  // namespace provisioner
