// Apply and verify of the changes of host-network VFs (railnet_vf.h): the
// VF references "<PF BDF>#vf<index>" in a change's target, its routes'
// `dev` and its sysctl.d text replaced by the VF netdevs' names now
// (/sys/bus/pci/devices/<PF>/virtfn<index>/net/<name>).
#ifndef PROVISIONER_MODULES_RAILNET_RAILNET_VF_APPLY_H_
#define PROVISIONER_MODULES_RAILNET_RAILNET_VF_APPLY_H_

#include <optional>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/plan/change.h"

namespace provisioner {

// `c` with its VF references resolved (unchanged without any). nullopt: the
// change is for a VF that has no netdev now and wants nothing there (a
// rollback after the VFs went): nothing to do. A VF without a netdev that
// is to get something is an error naming it and its driver.
StatusOr<std::optional<Change>> ResolveVfRefs(const Change& c, const HostFs& fs);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_RAILNET_VF_APPLY_H_
