// The VF netdevs of a VF group used on the host network (issue 39 item 1:
// spec.nics[].vfGroups[].addresses). VF `first + i` of the group gets the
// group's i-th address and, as the nic's PF netdev has them, the nic's
// sysctls and a routing table of its own: table 1000 * T + <VF index> (T the
// nic's table), named "<T's name>-vf<index>", with the subnet route of the
// VF's address and the nic's routes via its gateway, all by the VF netdev,
// and `from <VF address> lookup <its table>` at the nic's rule priority.
// A table per VF, not the rail's: a table's subnet route names one netdev,
// and a reply from the VF's address must leave by the VF (its RDMA device's
// GIDs are the VF netdev's), not by the PF.
//
// The VF netdevs may not exist when the plan is made (numVfs creates them,
// phase vf binding rebinds them). A VF whose netdev exists now and stays
// (the PF keeps its VF count, the VF its network driver) is named by its
// netdev, as a PF netdev is; any other by a reference "<PF BDF>#vf<index>"
// (never an interface name: it has ':'), in change targets, in the routes'
// `dev` and in the sysctl.d file's keys, which apply and verify resolve through
// /sys/bus/pci/devices/<PF>/virtfn<index>/net/ when they run (phase rails,
// after the VFs exist and their netdevs are up).
#ifndef PROVISIONER_MODULES_RAILNET_RAILNET_VF_H_
#define PROVISIONER_MODULES_RAILNET_RAILNET_VF_H_

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"
#include "modules/railnet/railnet_planner.h"

namespace provisioner {

inline constexpr long long kVfTableFactor = 1000;
inline constexpr long long kMaxTable = 4294967295LL;

std::string VfRef(const std::string& pf, int index);
// {PF BDF, VF index} of a reference; nullopt for anything else.
std::optional<std::pair<std::string, int>> ParseVfRef(const std::string& text);
bool HasHostNetworkVfs(const NicSpec& nic);

// The wants of the VFs of `nic`'s host-network groups on `pf`, after the
// nic's own `rail` (its table, routes via the gateway, rule priority and
// sysctls). Problems go to `error(field path, message)`.
void AppendVfRails(const NicSpec& nic, const std::string& nic_path, const PciFunction& pf,
                   const RailWant& rail, const HostFacts& facts,
                   const std::function<void(const std::string&, const std::string&)>& error,
                   std::vector<RailWant>& out);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_RAILNET_VF_H_
