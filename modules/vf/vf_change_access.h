// What each piece of the vf module's host side (vf_host.cc, vf_guid_host.cc,
// vf_range_host.cc) shares: the PF's VFs of a change, its netdev and label,
// the bounded wait and the rebind, and the Apply/Verify of each attribute
// family that ApplyVfChange / VerifyVfChange dispatch to. Not for other modules.
#ifndef PROVISIONER_MODULES_VF_VF_CHANGE_ACCESS_H_
#define PROVISIONER_MODULES_VF_VF_CHANGE_ACCESS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "modules/vf/vf_host.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace vf_access {

inline constexpr char kVfPciDevices[] = "/sys/bus/pci/devices/";

// The attribute at `path`, or `fallback` when it cannot be read.
std::string ReadOr(const HostFs& fs, const std::string& path, const std::string& fallback = "");
// The driver `bdf` is bound to ("" none).
std::string DriverOf(const HostFs& fs, const std::string& bdf);
// Polls `done` until true or ctx.settle_timeout.
Status WaitFor(HostContext& ctx, const VfHostOptions& options, const std::string& what,
               const std::function<bool()>& done);
// One value per VF: an array (rollback: per-VF prior values) or one value for all.
std::vector<nlohmann::json> PerVf(const nlohmann::json& after, size_t n);
// The PF netdev the change's messages go to (detail.netdev), "" none.
std::string Netdev(const Change& c);
// "nics[<nic>]" for messages, else the target.
std::string Label(const Change& c);
// The VFs of the change's PF. A forward change (one value for all VFs, or a
// list as long as the planned count) needs exactly the planned count; an
// inverse one (rollback: the prior per-VF values) takes the VFs there are.
StatusOr<std::vector<std::string>> ChangeVfs(const Change& c, const HostFs& fs);
// Unbinds and binds a VF to the driver it has, so the driver takes new GUIDs.
Status Rebind(const std::string& bdf, HostContext& ctx, const VfHostOptions& options);

// IB GUIDs (vf_guid_host.cc).
struct VfGuids {
  std::string node;  // "" unknown
  std::string port;
};
// The GUID text of a sysfs/OFED file, normalized; "" when absent or unparsable.
std::string GuidFrom(const std::string& text);
// The GUIDs a VF has now: its RDMA device when it has one (what the driver
// took at probe), else the OFED / tree files, else the netlink dump.
VfGuids ReadGuids(const HostFs& fs, const std::string& pf, int index, const std::string& bdf,
                  const std::optional<VfLinkState>& nl);
Status ApplyGuids(const Change& c, HostContext& ctx, VfSettingsBackend& backend,
                  const VfHostOptions& options);
Status VerifyGuids(const Change& c, HostContext& ctx, VfSettingsBackend& backend);

// linkState, rate, vlan and mac over a VF range (vf_range_host.cc).
Status ApplyRangeSetting(const Change& c, HostContext& ctx, VfSettingsBackend& backend);
Status VerifyRangeSetting(const Change& c, HostContext& ctx, VfSettingsBackend& backend);
Status ApplyMac(const Change& c, HostContext& ctx, VfSettingsBackend& backend,
                const VfHostOptions& options);
Status VerifyMac(const Change& c, HostContext& ctx, VfSettingsBackend& backend);
// The VF's netdev MAC now ("" without a netdev).
std::string VfNetdevMac(const HostFs& fs, const std::string& bdf);

}  // namespace vf_access
}  // namespace provisioner

#endif  // PROVISIONER_MODULES_VF_VF_CHANGE_ACCESS_H_
