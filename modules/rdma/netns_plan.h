// Pure planning of spec.rdma.netnsMode: a live change (RDMA netlink) and a
// persistent one (/etc/modprobe.d/ib_core.conf). No host access.
//
// Disruption: the persistent file change is "live" when the running kernel
// has (or is switched to, by the live change planned with it) the same mode:
// the file only keeps the mode across reboots. It is "reboot" when the live
// mode cannot be read (ib_core not loaded): the mode then takes effect when
// ib_core next loads. A live switch the kernel refuses at apply time is
// reported by the module as taking effect at the reboot (exit 3).
#ifndef PROVISIONER_MODULES_RDMA_NETNS_PLAN_H_
#define PROVISIONER_MODULES_RDMA_NETNS_PLAN_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner::rdma {

inline constexpr const char* kModuleName = "rdma";
inline constexpr const char* kLiveTarget = "system";
inline constexpr const char* kPersistTarget = "modprobe.d";
inline constexpr const char* kNetnsAttribute = "netnsMode";
inline constexpr const char* kNetnsField = "spec.rdma.netnsMode";

void PlanNetnsMode(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

}  // namespace provisioner::rdma

#endif  // PROVISIONER_MODULES_RDMA_NETNS_PLAN_H_
