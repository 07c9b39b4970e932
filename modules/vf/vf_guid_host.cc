// IB VF GUIDs on the host: read from the VF's RDMA device, the OFED/tree
// sriov/<vf> files or the netlink dump; set over netlink (or those files),
// then the VF rebound so mlx5 takes them.
#include <cerrno>
#include <map>
#include <optional>

#include "engine/base/strings.h"
#include "modules/vf/vf_change_access.h"
#include "modules/vf/vf_planner.h"

namespace provisioner {
namespace vf_access {

using nlohmann::json;

namespace {

// The GUID part (last 64 bits) of a GID "fe80:0000:0000:0000:ee0d:9a00:018a:bcde".
std::string PortGuidFromGid(const std::string& gid) {
  return gid.size() == 39 ? GuidFrom(gid.substr(20)) : "";
}

}  // namespace

// The GUID text of a sysfs/OFED file, normalized; "" when absent or unparsable.
std::string GuidFrom(const std::string& text) {
  auto g = ParseGuid(text);
  return g ? FormatGuid(*g) : "";
}

// The GUIDs a VF has now: its RDMA device when it has one (what the driver
// took at probe), else the OFED / tree files, else the netlink dump.
VfGuids ReadGuids(const HostFs& fs, const std::string& pf, int index, const std::string& bdf,
                  const std::optional<VfLinkState>& nl) {
  VfGuids g;
  for (const std::string& dev : ListDirIfPresent(fs, kVfPciDevices + bdf + "/infiniband")) {
    const std::string d = kVfPciDevices + bdf + "/infiniband/" + dev;
    g.node = GuidFrom(ReadOr(fs, d + "/node_guid"));
    if (ReadOr(fs, d + "/ports/1/link_layer") == "InfiniBand") {
      g.port = PortGuidFromGid(ReadOr(fs, d + "/ports/1/gids/0"));
    }
    if (!g.node.empty()) return g;
  }
  g.node = GuidFrom(ReadOr(fs, OfedGuidPath(pf, index, "node")));
  g.port = GuidFrom(ReadOr(fs, OfedGuidPath(pf, index, "port")));
  if (!g.node.empty()) return g;
  if (nl && nl->node_guid) g.node = FormatGuid(*nl->node_guid);
  if (nl && nl->port_guid) g.port = FormatGuid(*nl->port_guid);
  return g;
}

Status ApplyGuids(const Change& c, HostContext& ctx, VfSettingsBackend& backend,
                  const VfHostOptions& options) {
  HostFs& fs = *ctx.fs;
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, ChangeVfs(c, fs));
  std::vector<json> want = PerVf(c.after, vfs.size());
  const std::string netdev = Netdev(c);
  for (size_t i = 0; i < vfs.size(); ++i) {
    if (!want[i].is_string()) continue;  // unknown before: nothing to restore
    auto g = ParseGuid(want[i].get<std::string>());
    if (!g) return InvalidArgumentError(c.id + ": not a GUID: " + Quote(want[i].dump()));
    const int n = static_cast<int>(i);
    VfGuids now = ReadGuids(fs, c.target, n, vfs[i], std::nullopt);
    if (now.node == FormatGuid(*g) && now.port == FormatGuid(*g)) continue;
    const std::string vf_label = "VF " + std::to_string(n) + " (" + vfs[i] + ")";
    if (ctx.progress) ctx.progress->Step(c.target + ": " + vf_label + " GUID " + FormatGuid(*g));
    if (backend.NeedsPfNetdev() && netdev.empty()) {
      return FailedPreconditionError(c.id + ": the PF has no netdev");
    }
    StatusOr<bool> set = backend.SetGuids(c.target, netdev, n, *g);
    if (!set.ok()) {
      // MLNX_OFED refuses the netlink messages: its files take them.
      const bool ofed = fs.Exists(OfedGuidPath(c.target, n, "node"));
      if (!(set.status().err() == EOPNOTSUPP && ofed)) return set.status().WithContext(vf_label);
    }
    const bool done = set.ok() && *set;
    if (!done) {
      const std::string node = OfedGuidPath(c.target, n, "node");
      if (!fs.Exists(node)) {
        return FailedPreconditionError(
            c.id + ": " + vf_label + ": no " + node +
            " (IB VF GUIDs go over netlink on the live root; the sriov/<vf> files exist "
            "only with MLNX_OFED or the kernel simulator)");
      }
      RETURN_IF_ERROR(fs.WriteAttr(node, FormatGuidBytes(*g) + "\n").WithContext(vf_label));
      RETURN_IF_ERROR(fs.WriteAttr(OfedGuidPath(c.target, n, "port"), FormatGuidBytes(*g) + "\n")
                          .WithContext(vf_label));
    }
    // mlx5 reads the GUIDs when the VF is probed.
    RETURN_IF_ERROR(Rebind(vfs[i], ctx, options).WithContext("rebind " + vf_label));
    const std::string driver = DriverOf(fs, vfs[i]);
    if (!driver.empty() && !IsUserspaceDriver(driver)) {
      RETURN_IF_ERROR(WaitFor(
          ctx, options, vf_label + " RDMA device with node GUID " + FormatGuid(*g),
          [&] { return ReadGuids(fs, c.target, n, vfs[i], std::nullopt).node == FormatGuid(*g); }));
    }
  }
  return OkStatus();
}

Status VerifyGuids(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  const HostFs& fs = *ctx.fs;
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, ChangeVfs(c, fs));
  std::vector<json> want = PerVf(c.after, vfs.size());
  std::map<int, VfLinkState> link = backend.Read(c.target, Netdev(c));
  for (size_t i = 0; i < vfs.size(); ++i) {
    if (!want[i].is_string()) continue;
    const int n = static_cast<int>(i);
    std::optional<VfLinkState> l;
    if (auto it = link.find(n); it != link.end()) l = it->second;
    VfGuids now = ReadGuids(fs, c.target, n, vfs[i], l);
    const std::string g = GuidFrom(want[i].get<std::string>());
    if (now.node != g || (!now.port.empty() && now.port != g)) {
      return FailedPreconditionError(Label(c) + " VF " + std::to_string(n) + " (" + vfs[i] +
                                     ") GUID: desired " + g + ", current node " +
                                     (now.node.empty() ? "unknown" : now.node) + ", port " +
                                     (now.port.empty() ? "unknown" : now.port));
    }
  }
  return OkStatus();
}

}  // namespace vf_access
}  // namespace provisioner
