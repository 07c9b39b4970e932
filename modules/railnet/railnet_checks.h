// Doctor checks of the railnet module, per rail of host.yaml (pure: over the
// facts): railnet.address, railnet.table, railnet.rule, railnet.sysctl,
// railnet.route (the kernel's route lookup of a neighbour from the rail's
// address leaves by the rail: RTM_GETROUTE with RTA_SRC, nothing sent; on a
// tree computed from the captured tables and rules) and railnet.gid (the
// port's GID table holds the address as a RoCE v2 GID). A failure's fix
// says which of them to set right.
#ifndef PROVISIONER_MODULES_RAILNET_RAILNET_CHECKS_H_
#define PROVISIONER_MODULES_RAILNET_RAILNET_CHECKS_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"

namespace provisioner {

void CheckRailnet(const DesiredState& desired, const HostFacts& facts, CheckSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_RAILNET_CHECKS_H_
