#include "modules/vf/vf_host.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "engine/base/strings.h"
#include "engine/model/pci_address.h"
#include "modules/vf/vf_planner.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr char kDevices[] = "/sys/bus/pci/devices/";
constexpr char kDrivers[] = "/sys/bus/pci/drivers/";

std::string ReadOr(const HostFs& fs, const std::string& path, const std::string& fallback = "") {
  auto v = fs.ReadAttr(path);
  return v.ok() ? *v : fallback;
}

std::string DriverOf(const HostFs& fs, const std::string& bdf) {
  return LinkBasenameIfPresent(fs, kDevices + bdf + "/driver");
}

// The GUID text of a sysfs/OFED file, normalized; "" when absent or unparsable.
std::string GuidFrom(const std::string& text) {
  auto g = ParseGuid(text);
  return g ? FormatGuid(*g) : "";
}

// The GUID part (last 64 bits) of a GID "fe80:0000:0000:0000:ee0d:9a00:018a:bcde".
std::string PortGuidFromGid(const std::string& gid) {
  return gid.size() == 39 ? GuidFrom(gid.substr(20)) : "";
}

struct VfGuids {
  std::string node;  // "" unknown
  std::string port;
};

// The GUIDs a VF has now: its RDMA device when it has one (what the driver
// took at probe), else the OFED / tree files, else the netlink dump.
VfGuids ReadGuids(const HostFs& fs, const std::string& pf, int index, const std::string& bdf,
                  const std::optional<VfLinkState>& nl) {
  VfGuids g;
  for (const std::string& dev : ListDirIfPresent(fs, kDevices + bdf + "/infiniband")) {
    const std::string d = kDevices + bdf + "/infiniband/" + dev;
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

// Polls `done` until true or ctx.settle_timeout.
Status WaitFor(HostContext& ctx, const VfHostOptions& options, const std::string& what,
               const std::function<bool()>& done) {
  Clock& clock = ctx.clock != nullptr ? *ctx.clock : RealClock();
  const auto deadline = clock.Now() + ctx.settle_timeout;
  for (;;) {
    if (done()) return OkStatus();
    if (clock.Now() >= deadline) {
      return DeadlineExceededError(
          "not settled after " +
          std::to_string(std::chrono::duration_cast<milliseconds>(ctx.settle_timeout).count()) +
          "ms: " + what);
    }
    if (!WaitStep(clock, options.poll_interval, ctx.interrupt)) {
      return FailedPreconditionError("the wait ended by a signal: " + what);
    }
  }
}

// One value per VF: an array (rollback: per-VF prior values) or one value for all.
std::vector<json> PerVf(const json& after, size_t n) {
  std::vector<json> out(n, after.is_array() ? json(nullptr) : after);
  if (after.is_array()) {
    for (size_t i = 0; i < n && i < after.size(); ++i) out[i] = after[i];
  }
  return out;
}

std::string Netdev(const Change& c) {
  return c.detail.is_object() && c.detail.contains("netdev") && c.detail["netdev"].is_string()
             ? c.detail["netdev"].get<std::string>()
             : "";
}

std::string Label(const Change& c) {
  if (c.detail.is_object() && c.detail.contains("nic") && c.detail["nic"].is_string()) {
    return "nics[" + c.detail["nic"].get<std::string>() + "]";
  }
  return c.target;
}

// The VFs of the change's PF. A forward change (one value for all VFs, or a
// list as long as the planned count) needs exactly the planned count; an
// inverse one (rollback: the prior per-VF values) takes the VFs there are.
StatusOr<std::vector<std::string>> ChangeVfs(const Change& c, const HostFs& fs) {
  // The target goes into paths as it is: full form only.
  if (!PciAddress::ParseFull(c.target)) return InvalidArgumentError(c.id + ": not a PCI address");
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, ResolveVfs(fs, c.target));
  if (c.detail.is_object() && c.detail.contains("count") && c.detail["count"].is_number_integer()) {
    const size_t want = static_cast<size_t>(c.detail["count"].get<long long>());
    const bool forward = !c.after.is_array() || c.after.size() == want;
    if (forward && vfs.size() != want) {
      return FailedPreconditionError(c.target + ": " + std::to_string(vfs.size()) +
                                     " VFs present, the plan expects " + std::to_string(want));
    }
  }
  return vfs;
}

// Unbinds and binds a VF to the driver it has, so the driver takes new GUIDs.
Status Rebind(const std::string& bdf, HostContext& ctx, const VfHostOptions& options) {
  const std::string driver = DriverOf(*ctx.fs, bdf);
  if (driver.empty()) return OkStatus();  // the next probe takes them
  RETURN_IF_ERROR(BindVf(bdf, "", ctx, options));
  return BindVf(bdf, driver, ctx, options);
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

const char* FlagFile(const Change& c) {
  return c.attribute == kTrustAttribute ? "trust" : "spoofchk";
}

std::optional<bool> ReadFlag(const Change& c, int n, const std::map<int, VfLinkState>& link) {
  auto it = link.find(n);
  if (it == link.end()) return std::nullopt;
  return c.attribute == kTrustAttribute ? it->second.trust : it->second.spoof_chk;
}

Status ApplyFlag(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  HostFs& fs = *ctx.fs;
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, ChangeVfs(c, fs));
  std::vector<json> want = PerVf(c.after, vfs.size());
  const std::string netdev = Netdev(c);
  if (backend.NeedsPfNetdev() && netdev.empty()) {
    return FailedPreconditionError(c.id + ": the PF has no netdev");
  }
  std::map<int, VfLinkState> link = backend.Read(c.target, netdev);
  for (size_t i = 0; i < vfs.size(); ++i) {
    if (!want[i].is_boolean()) continue;
    const bool on = want[i].get<bool>();
    const int n = static_cast<int>(i);
    if (ReadFlag(c, n, link) == on) continue;
    const std::string vf_label = "VF " + std::to_string(n) + " (" + vfs[i] + ")";
    RETURN_IF_ERROR(backend.SetFlag(c.target, netdev, n, FlagFile(c), on).WithContext(vf_label));
  }
  return OkStatus();
}

Status VerifyFlag(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  const HostFs& fs = *ctx.fs;
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, ChangeVfs(c, fs));
  std::vector<json> want = PerVf(c.after, vfs.size());
  std::map<int, VfLinkState> link = backend.Read(c.target, Netdev(c));
  for (size_t i = 0; i < vfs.size(); ++i) {
    if (!want[i].is_boolean()) continue;
    const int n = static_cast<int>(i);
    std::optional<bool> now = ReadFlag(c, n, link);
    if (now != want[i].get<bool>()) {
      return FailedPreconditionError(Label(c) + " VF " + std::to_string(n) + " (" + vfs[i] + ") " +
                                     c.attribute + ": desired " + want[i].dump() + ", current " +
                                     (now ? (*now ? "true" : "false") : "unknown"));
    }
  }
  return OkStatus();
}

// A per-VF setting over a VF range (linkState, rate, vlan): each VF's value
// as the change's `after` says and as the backend reads it, in the JSON the
// plan carries ("enable"; {"min": 0, "max": 10000}; {"id": 100, "qos": 3,
// "proto": "802.1Q"}).
bool ValidRangeValue(const Change& c, const json& v) {
  if (c.attribute == kLinkStateAttribute) {
    return v.is_string() && ParseVfLinkState(v.get<std::string>()).has_value();
  }
  auto in = [&](const char* k, long long max) {
    return v.contains(k) && v[k].is_number_integer() && v[k].get<long long>() >= 0 &&
           v[k].get<long long>() <= max;
  };
  if (c.attribute == kMacAttribute) {
    // keep or derived's MACs forward; a table MAC (zero included) in an inverse.
    if (v.is_object()) {
      if (v.size() != 2 || v.value("mode", json()) != kVfMacDerived || !v.contains("macs") ||
          !v["macs"].is_array()) {
        return false;
      }
      for (const json& m : v["macs"]) {
        if (!m.is_string() || !ParseMacAddress(m.get<std::string>())) return false;
      }
      return true;
    }
    return v.is_string() && (v == kVfMacKeep || ParseMacAddress(v.get<std::string>()).has_value());
  }
  if (c.attribute == kVlanAttribute) {
    return v.is_object() && v.size() == 3 && in("id", 4095) && in("qos", 7) &&
           v.contains("proto") && v["proto"].is_string() &&
           ParseVfVlanProto(v["proto"].get<std::string>()).has_value();
  }
  auto rate = [&](const char* k) {
    return v.contains(k) && v[k].is_number_integer() && v[k].get<long long>() >= 0 &&
           v[k].get<long long>() <= 0xffffffffLL;
  };
  return v.is_object() && v.size() == 2 && rate("min") && rate("max");
}

json RangeValueNow(const Change& c, const VfLinkState& l) {
  if (c.attribute == kLinkStateAttribute) {
    return l.link_state && !VfLinkStateName(*l.link_state).empty()
               ? json(VfLinkStateName(*l.link_state))
               : json(nullptr);
  }
  if (c.attribute == kVlanAttribute) {
    return l.vlan && l.vlan_qos && l.vlan_proto && !VfVlanProtoName(*l.vlan_proto).empty()
               ? json{{"id", *l.vlan},
                      {"qos", *l.vlan_qos},
                      {"proto", VfVlanProtoName(*l.vlan_proto)}}
               : json(nullptr);
  }
  return l.min_tx_rate && l.max_tx_rate ? json{{"min", *l.min_tx_rate}, {"max", *l.max_tx_rate}}
                                        : json(nullptr);
}

Status SetRangeValue(const Change& c, VfSettingsBackend& backend, const std::string& netdev, int n,
                     const json& v) {
  if (c.attribute == kLinkStateAttribute) {
    return backend.SetLinkState(c.target, netdev, n, *ParseVfLinkState(v.get<std::string>()));
  }
  if (c.attribute == kVlanAttribute) {
    return backend.SetVlan(c.target, netdev, n, static_cast<uint32_t>(v["id"].get<long long>()),
                           static_cast<uint32_t>(v["qos"].get<long long>()),
                           *ParseVfVlanProto(v["proto"].get<std::string>()));
  }
  return backend.SetRate(c.target, netdev, n, static_cast<uint32_t>(v["min"].get<long long>()),
                         static_cast<uint32_t>(v["max"].get<long long>()));
}

std::string RangeValueText(const json& v) {
  return v.is_null() ? "unknown" : v.is_string() ? v.get<std::string>() : v.dump();
}

// The VF indexes of the change (detail first..last) and the value each is to
// get (an inverse change's unknown before: left as it is).
StatusOr<std::vector<std::pair<int, json>>> RangeTargets(const Change& c) {
  auto index = [&](const char* key) -> std::optional<int> {
    if (!c.detail.is_object() || !c.detail.contains(key) || !c.detail[key].is_number_integer())
      return std::nullopt;
    const long long v = c.detail[key].get<long long>();
    if (v < 0 || v > 65535) return std::nullopt;
    return static_cast<int>(v);
  };
  const std::optional<int> first = index("first"), last = index("last");
  if (!first || !last || *first > *last) {
    return InvalidArgumentError(c.id + ": detail.first..last must be a VF index range");
  }
  std::vector<std::pair<int, json>> out;
  for (int n = *first; n <= *last; ++n) {
    const size_t k = static_cast<size_t>(n - *first);
    const json a = c.after.is_array() ? (k < c.after.size() ? c.after[k] : json(nullptr)) : c.after;
    if (a.is_null()) continue;
    if (!ValidRangeValue(c, a)) {
      return InvalidArgumentError(c.id + ": not a VF " + c.attribute + ": " + a.dump());
    }
    out.emplace_back(n, a);
  }
  return out;
}

// What applying or verifying a per-range change works on: its VFs' targets,
// the PF's VFs now, its netdev and what the backend reads of each VF.
struct RangeWork {
  std::vector<std::pair<int, json>> targets;
  std::vector<std::string> vfs;  // virtfnN -> VF PCI address
  std::string netdev;
  std::map<int, VfLinkState> link;

  // Whether VF `n` is there to work on; an inverse's VF that is gone is
  // skipped (*skip), a forward change's is an error.
  Status Present(const Change& c, int n, bool* skip) const {
    *skip = false;
    if (static_cast<size_t>(n) < vfs.size()) return OkStatus();
    *skip = c.after.is_array();  // an inverse: that VF is gone
    if (*skip) return OkStatus();
    return FailedPreconditionError(c.target + " has no VF " + std::to_string(n) + " (" +
                                   std::to_string(vfs.size()) + " VFs)");
  }
};

StatusOr<RangeWork> PrepareRange(const Change& c, HostContext& ctx, VfSettingsBackend& backend,
                                 bool for_apply) {
  RangeWork w;
  if (for_apply && !PciAddress::ParseFull(c.target)) {
    return InvalidArgumentError(c.id + ": not a PCI address");
  }
  ASSIGN_OR_RETURN(w.targets, RangeTargets(c));
  ASSIGN_OR_RETURN(w.vfs, ResolveVfs(*ctx.fs, c.target));
  w.netdev = Netdev(c);
  if (for_apply && backend.NeedsPfNetdev() && w.netdev.empty()) {
    return FailedPreconditionError(c.id + ": the PF has no netdev");
  }
  w.link = backend.Read(c.target, w.netdev);
  return w;
}

Status ApplyRangeSetting(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  ASSIGN_OR_RETURN(RangeWork w, PrepareRange(c, ctx, backend, /*for_apply=*/true));
  const auto& vfs = w.vfs;
  const std::string& netdev = w.netdev;
  const auto& link = w.link;
  for (const auto& [n, want] : w.targets) {
    bool skip = false;
    RETURN_IF_ERROR(w.Present(c, n, &skip));
    if (skip) continue;
    auto it = link.find(n);
    if (it != link.end() && RangeValueNow(c, it->second) == want) continue;
    const std::string vf_label =
        "VF " + std::to_string(n) + " (" + vfs[static_cast<size_t>(n)] + ")";
    if (ctx.progress) {
      ctx.progress->Step(c.target + ": " + vf_label + " " + c.attribute + " " +
                         RangeValueText(want));
    }
    RETURN_IF_ERROR(SetRangeValue(c, backend, netdev, n, want).WithContext(vf_label));
  }
  return OkStatus();
}

Status VerifyRangeSetting(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  ASSIGN_OR_RETURN(RangeWork w, PrepareRange(c, ctx, backend, /*for_apply=*/false));
  const auto& vfs = w.vfs;
  const auto& link = w.link;
  for (const auto& [n, want] : w.targets) {
    if (static_cast<size_t>(n) >= vfs.size()) {
      if (c.after.is_array()) continue;
      return FailedPreconditionError(Label(c) + ": no VF " + std::to_string(n));
    }
    auto it = link.find(n);
    const json now = it != link.end() ? RangeValueNow(c, it->second) : json(nullptr);
    if (now != want) {
      return FailedPreconditionError(
          Label(c) + " VF " + std::to_string(n) + " (" + vfs[static_cast<size_t>(n)] + ") " +
          c.attribute + ": desired " + RangeValueText(want) + ", current " + RangeValueText(now));
    }
  }
  return OkStatus();
}

// vfMac. The VF's netdev MAC now ("" without a netdev).
std::string VfNetdevMac(const HostFs& fs, const std::string& bdf) {
  const std::string dev = kDevices + bdf;
  for (const std::string& nd : RegisteredNetdevs(fs, dev)) {
    if (auto m = ParseMacAddress(ReadOr(fs, dev + "/net/" + nd + "/address"))) {
      return FormatMacAddress(m->data());
    }
  }
  return "";
}

bool IsZeroMac(const std::string& mac) { return mac == "00:00:00:00:00:00"; }

// derived's MAC for VF `n` ("" when the change has none for it).
std::string DerivedMac(const Change& c, int n, const json& want) {
  const long long k = n - c.detail.value("first", 0LL);
  const json& macs = want["macs"];
  if (k < 0 || k >= static_cast<long long>(macs.size())) return "";
  return FormatMacAddress(ParseMacAddress(macs[static_cast<size_t>(k)].get<std::string>())->data());
}

// The MAC VF `n` is to get: derived's from the change, keep's its netdev's
// (waited for while its netdev driver probes; "" when it has none, then the
// table MAC it has is kept), an inverse's the value itself.
StatusOr<std::string> MacTarget(const Change& c, HostContext& ctx, const VfHostOptions& options,
                                int n, const std::string& bdf, const json& want) {
  if (want.is_object()) {
    std::string m = DerivedMac(c, n, want);
    if (m.empty())
      return InvalidArgumentError(c.id + ": no derived MAC for VF " + std::to_string(n));
    return m;
  }
  const std::string mode = want.get<std::string>();
  if (mode != kVfMacKeep) return FormatMacAddress(ParseMacAddress(mode)->data());
  const std::string driver = DriverOf(*ctx.fs, bdf);
  if (driver.empty() || IsUserspaceDriver(driver)) return std::string();
  RETURN_IF_ERROR(WaitFor(ctx, options, bdf + " netdev (" + driver + ")",
                          [&] { return !VfNetdevMac(*ctx.fs, bdf).empty(); }));
  return VfNetdevMac(*ctx.fs, bdf);
}

// Sets each VF's table MAC and rebinds a VF on a netdev driver whose netdev
// or RDMA device has not taken it: mlx5 reads the admin MAC (and the node
// GUID it derives from it) when the VF is probed. An inverse back to zero
// does not rebind: the netdev keeps the MAC it had before.
Status ApplyMac(const Change& c, HostContext& ctx, VfSettingsBackend& backend,
                const VfHostOptions& options) {
  ASSIGN_OR_RETURN(RangeWork w, PrepareRange(c, ctx, backend, /*for_apply=*/true));
  const auto& vfs = w.vfs;
  const std::string& netdev = w.netdev;
  const auto& link = w.link;
  for (const auto& [n, want] : w.targets) {
    bool skip = false;
    RETURN_IF_ERROR(w.Present(c, n, &skip));
    if (skip) continue;
    const std::string& bdf = vfs[static_cast<size_t>(n)];
    const std::string vf_label = "VF " + std::to_string(n) + " (" + bdf + ")";
    StatusOr<std::string> got = MacTarget(c, ctx, options, n, bdf, want);
    if (!got.ok()) return got.status().WithContext(vf_label);
    const std::string target = *got;
    auto it = link.find(n);
    const std::string table = it != link.end() && it->second.mac ? *it->second.mac : "";
    if (target.empty()) {
      if (!table.empty() && !IsZeroMac(table)) continue;  // keep: on vfio-pci, has one
      return FailedPreconditionError(
          Label(c) + " " + vf_label +
          ": vfMac keep copies the VF netdev's MAC, but it has no "
          "netdev (driver " +
          (DriverOf(*ctx.fs, bdf).empty() ? "none" : DriverOf(*ctx.fs, bdf)) +
          ") and no MAC in the PF's table; use vfMac: derived");
    }
    bool rebind = false;
    if (table != target) {
      if (ctx.progress) ctx.progress->Step(c.target + ": " + vf_label + " mac " + target);
      RETURN_IF_ERROR(backend.SetMac(c.target, netdev, n, target).WithContext(vf_label));
      rebind = !IsZeroMac(target);
    }
    const std::string driver = DriverOf(*ctx.fs, bdf);
    if (driver.empty() || IsUserspaceDriver(driver) || IsZeroMac(target)) continue;
    rebind = rebind || VfNetdevMac(*ctx.fs, bdf) != target;
    if (!rebind) continue;
    if (ctx.progress) ctx.progress->Step(c.target + ": " + vf_label + " rebind " + driver);
    RETURN_IF_ERROR(Rebind(bdf, ctx, options).WithContext("rebind " + vf_label));
    RETURN_IF_ERROR(WaitFor(ctx, options, vf_label + " netdev with MAC " + target,
                            [&] { return VfNetdevMac(*ctx.fs, bdf) == target; }));
  }
  return OkStatus();
}

Status VerifyMac(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  ASSIGN_OR_RETURN(RangeWork w, PrepareRange(c, ctx, backend, /*for_apply=*/false));
  const auto& vfs = w.vfs;
  const auto& link = w.link;
  for (const auto& [n, want] : w.targets) {
    if (static_cast<size_t>(n) >= vfs.size()) {
      if (c.after.is_array()) continue;
      return FailedPreconditionError(Label(c) + ": no VF " + std::to_string(n));
    }
    const std::string& bdf = vfs[static_cast<size_t>(n)];
    auto it = link.find(n);
    const std::string table =
        it != link.end() && it->second.mac ? *it->second.mac : std::string("unknown");
    const std::string mine = VfNetdevMac(*ctx.fs, bdf);
    std::string desired;
    if (want.is_object()) {
      desired = DerivedMac(c, n, want);
    } else if (want == kVfMacKeep) {
      desired = mine.empty() ? table : mine;
      if (IsZeroMac(desired)) desired = "a MAC (not zero)";
    } else {
      desired = FormatMacAddress(ParseMacAddress(want.get<std::string>())->data());
    }
    std::string problem;
    if (table != desired) {
      problem = "table MAC: desired " + desired + ", current " + table;
    } else if (!mine.empty() && !IsZeroMac(table) && mine != table) {
      problem = "netdev MAC " + mine + " is not the table's " + table + " (not rebound)";
    }
    if (!problem.empty()) {
      return FailedPreconditionError(Label(c) + " VF " + std::to_string(n) + " (" + bdf + ") " +
                                     problem);
    }
  }
  return OkStatus();
}

std::string DriverTarget(const json& v) { return v.is_string() ? v.get<std::string>() : ""; }

// detail.vfIndexes (vfGroups leaving some VFs to no group): only those VFs
// are the change's, forward and inverse; without it every VF is.
bool ManagesVf(const Change& c, size_t i) {
  if (!c.detail.is_object() || !c.detail.contains("vfIndexes")) return true;
  const json& list = c.detail["vfIndexes"];
  if (!list.is_array()) return true;
  for (const json& x : list) {
    if (x.is_number_integer() && x.get<long long>() == static_cast<long long>(i)) return true;
  }
  return false;
}

bool SafeName(const std::string& s) {
  return !s.empty() && s.find('/') == std::string::npos && s != "." && s != "..";
}

Status ApplyDriver(const Change& c, HostContext& ctx, const VfHostOptions& options) {
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, ChangeVfs(c, *ctx.fs));
  std::vector<json> want = PerVf(c.after, vfs.size());
  for (size_t i = 0; i < vfs.size(); ++i) {
    if (!ManagesVf(c, i)) continue;
    const std::string target = DriverTarget(want[i]);
    if (!target.empty() && !SafeName(target)) {
      return InvalidArgumentError(c.id + ": not a driver name: " + Quote(want[i].dump()));
    }
    if (ctx.progress != nullptr && DriverOf(*ctx.fs, vfs[i]) != target) {
      ctx.progress->Step(c.target + ": VF " + std::to_string(i) + " (" + vfs[i] + ") -> " +
                         (target.empty() ? "no driver" : target));
    }
    RETURN_IF_ERROR(BindVf(vfs[i], target, ctx, options)
                        .WithContext("VF " + std::to_string(i) + " (" + vfs[i] + ")"));
  }
  return OkStatus();
}

Status VerifyDriver(const Change& c, HostContext& ctx) {
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, ChangeVfs(c, *ctx.fs));
  std::vector<json> want = PerVf(c.after, vfs.size());
  for (size_t i = 0; i < vfs.size(); ++i) {
    if (!ManagesVf(c, i)) continue;
    const std::string target = DriverTarget(want[i]);
    const std::string now = DriverOf(*ctx.fs, vfs[i]);
    if (now != target) {
      return FailedPreconditionError(
          Label(c) + ".deviceType: VF " + std::to_string(i) + " (" + vfs[i] + ") driver: desired " +
          (target.empty() ? "none" : target) + ", current " + (now.empty() ? "none" : now));
    }
  }
  return OkStatus();
}

}  // namespace

std::string OfedGuidPath(const std::string& pf, int vf, const std::string& name) {
  return kDevices + pf + "/sriov/" + std::to_string(vf) + "/" + name;
}

StatusOr<std::vector<std::string>> ResolveVfs(const HostFs& fs, const std::string& pf) {
  const std::string dir = kDevices + pf;
  ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDir(dir));
  std::vector<std::pair<int, std::string>> links;
  for (const std::string& e : entries) {
    if (e.rfind("virtfn", 0) != 0 || e.size() == 6) continue;
    if (e.find_first_not_of("0123456789", 6) != std::string::npos) continue;
    std::string vf = LinkBasenameIfPresent(fs, dir + "/" + e);
    if (!vf.empty()) links.emplace_back(std::atoi(e.c_str() + 6), vf);
  }
  std::sort(links.begin(), links.end());
  std::vector<std::string> out;
  for (auto& [n, vf] : links) {
    if (n != static_cast<int>(out.size())) {
      return FailedPreconditionError(dir + ": virtfn" + std::to_string(out.size()) + " missing");
    }
    out.push_back(std::move(vf));
  }
  return out;
}

Status DiscoverVfFacts(const HostFs& fs, VfSettingsBackend& backend, HostFacts& facts) {
  facts.pci_drivers = ListDirIfPresent(fs, "/sys/bus/pci/drivers");
  for (PciFunction& f : facts.pci) {
    if (!f.sriov) continue;
    SriovInfo& s = *f.sriov;
    s.ib_node_guid.clear();
    for (const std::string& r : f.rdma_devices) {
      const std::string d = "/sys/class/infiniband/" + r;
      if (ReadOr(fs, d + "/ports/1/link_layer") != "InfiniBand") continue;
      s.ib_node_guid = GuidFrom(ReadOr(fs, d + "/node_guid"));
      break;
    }
    s.pf_mac.clear();
    s.pf_addr_assign_type.reset();
    if (!f.netdevs.empty()) {
      const std::string net = "/sys/class/net/" + f.netdevs.front();
      if (auto m = ParseMacAddress(ReadOr(fs, net + "/address"))) {
        s.pf_mac = FormatMacAddress(m->data());
      }
      const std::string t = ReadOr(fs, net + "/addr_assign_type");
      if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos && t.size() < 4) {
        s.pf_addr_assign_type = std::atoi(t.c_str());
      }
    }
    if (s.vfs.empty()) continue;
    std::map<int, VfLinkState> link =
        backend.Read(f.pci_address, f.netdevs.empty() ? "" : f.netdevs.front());
    for (VfInfo& vf : s.vfs) {
      std::string o = ReadOr(fs, kDevices + vf.pci_address + "/driver_override", "(null)");
      vf.driver_override = o == "(null)" ? "" : o;
      std::optional<VfLinkState> l;
      if (auto it = link.find(vf.vf_index); it != link.end()) l = it->second;
      if (!s.ib_node_guid.empty()) {
        VfGuids g = ReadGuids(fs, f.pci_address, vf.vf_index, vf.pci_address, l);
        vf.ib_node_guid = g.node;
        vf.ib_port_guid = g.port;
      }
      vf.trust = l ? l->trust : std::nullopt;
      vf.spoof_chk = l ? l->spoof_chk : std::nullopt;
      vf.link_state.reset();
      if (l && l->link_state && !VfLinkStateName(*l->link_state).empty()) {
        vf.link_state = VfLinkStateName(*l->link_state);
      }
      vf.min_tx_rate.reset();
      vf.max_tx_rate.reset();
      if (l && l->min_tx_rate && l->max_tx_rate) {
        vf.min_tx_rate = *l->min_tx_rate;
        vf.max_tx_rate = *l->max_tx_rate;
      }
      vf.mac.reset();
      if (l && l->mac) vf.mac = *l->mac;
      vf.netdev_mac = VfNetdevMac(fs, vf.pci_address);
      vf.vlan_id.reset();
      vf.vlan_qos.reset();
      vf.vlan_proto.reset();
      if (l && l->vlan && l->vlan_qos && l->vlan_proto &&
          !VfVlanProtoName(*l->vlan_proto).empty()) {
        vf.vlan_id = static_cast<int>(*l->vlan);
        vf.vlan_qos = static_cast<int>(*l->vlan_qos);
        vf.vlan_proto = VfVlanProtoName(*l->vlan_proto);
      }
    }
  }
  return OkStatus();
}

Status BindVf(const std::string& vf, const std::string& driver, HostContext& ctx,
              const VfHostOptions& options) {
  HostFs& fs = *ctx.fs;
  const std::string dev = kDevices + vf;
  const std::string now = DriverOf(fs, vf);
  const std::string override_path = dev + "/driver_override";
  const std::string want_override = driver == kVfioPci ? driver : "";
  std::string override_now = ReadOr(fs, override_path, "(null)");
  if (override_now == "(null)") override_now.clear();
  if (now == driver && (driver.empty() || override_now == want_override)) return OkStatus();
  if (!now.empty() && now != driver) {
    RETURN_IF_ERROR(fs.WriteAttr(kDrivers + now + "/unbind", vf));
    RETURN_IF_ERROR(WaitFor(ctx, options, vf + " unbound from " + now,
                            [&] { return DriverOf(fs, vf).empty(); }));
  }
  // Without an override a later probe (or reboot) could hand the VF back.
  if (override_now != want_override && fs.Exists(override_path)) {
    RETURN_IF_ERROR(fs.WriteAttr(override_path, want_override.empty() ? "\n" : want_override));
  }
  if (driver.empty() || now == driver) return OkStatus();
  const std::string bind = kDrivers + driver + "/bind";
  if (!fs.Exists(bind)) {
    return FailedPreconditionError(
        "driver " + driver + " is not registered (no " + std::string(kDrivers) + driver +
        "): load its kernel module" +
        (driver == kVfioPci ? " (vfio_pci: add it to spec.kernelModules)" : ""));
  }
  RETURN_IF_ERROR(fs.WriteAttr(bind, vf));
  RETURN_IF_ERROR(WaitFor(ctx, options, vf + " bound to " + driver,
                          [&] { return DriverOf(fs, vf) == driver; }));
  if (!IsUserspaceDriver(driver)) {
    RETURN_IF_ERROR(WaitFor(ctx, options, vf + " netdev (" + driver + ")",
                            [&] { return !RegisteredNetdevs(fs, dev).empty(); }));
  }
  return OkStatus();
}

Status ApplyVfChange(const Change& change, HostContext& ctx, VfSettingsBackend& backend,
                     const VfHostOptions& options) {
  Status s;
  if (change.attribute == kIbGuidsAttribute) {
    s = ApplyGuids(change, ctx, backend, options);
  } else if (change.attribute == kTrustAttribute || change.attribute == kSpoofChkAttribute) {
    s = ApplyFlag(change, ctx, backend);
  } else if (change.attribute == kDriverAttribute) {
    s = ApplyDriver(change, ctx, options);
  } else if (change.attribute == kLinkStateAttribute || change.attribute == kRateAttribute ||
             change.attribute == kVlanAttribute) {
    s = ApplyRangeSetting(change, ctx, backend);
  } else if (change.attribute == kMacAttribute) {
    s = ApplyMac(change, ctx, backend, options);
  } else {
    return InvalidArgumentError("module vf has no attribute " + change.attribute + " (" +
                                change.id + ")");
  }
  return s;
}

Status VerifyVfChange(const Change& change, HostContext& ctx, VfSettingsBackend& backend) {
  if (change.attribute == kIbGuidsAttribute) return VerifyGuids(change, ctx, backend);
  if (change.attribute == kTrustAttribute || change.attribute == kSpoofChkAttribute) {
    return VerifyFlag(change, ctx, backend);
  }
  if (change.attribute == kDriverAttribute) return VerifyDriver(change, ctx);
  if (change.attribute == kLinkStateAttribute || change.attribute == kRateAttribute ||
      change.attribute == kVlanAttribute) {
    return VerifyRangeSetting(change, ctx, backend);
  }
  if (change.attribute == kMacAttribute) return VerifyMac(change, ctx, backend);
  return InvalidArgumentError("module vf has no attribute " + change.attribute + " (" + change.id +
                              ")");
}

}  // namespace provisioner
