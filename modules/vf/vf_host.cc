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
#include "modules/vf/vf_change_access.h"
#include "modules/vf/vf_planner.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace vf_access {

using nlohmann::json;
using std::chrono::milliseconds;

namespace {
constexpr const char* kDevices = kVfPciDevices;
constexpr char kDrivers[] = "/sys/bus/pci/drivers/";
}  // namespace

std::string ReadOr(const HostFs& fs, const std::string& path, const std::string& fallback) {
  auto v = fs.ReadAttr(path);
  return v.ok() ? *v : fallback;
}

std::string DriverOf(const HostFs& fs, const std::string& bdf) {
  return LinkBasenameIfPresent(fs, kDevices + bdf + "/driver");
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

namespace {

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

}  // namespace vf_access

using namespace vf_access;  // NOLINT: this module's own parts

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
