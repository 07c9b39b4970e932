#include "modules/link/link_module.h"

#include <cerrno>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "engine/model/pci_address.h"
#include "engine/module/registry.h"
#include "engine/plan/resource.h"
#include "modules/link/link_planner.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

// The VF netdevs of a vfsUp change's PF now: /sys/bus/pci/devices/<pf>/virtfnN/net/*,
// for N in detail.first..last when the change is for part of the VFs (a
// vfGroups run of netdevice VFs), else every N.
StatusOr<std::vector<std::string>> VfNetdevs(const HostFs& fs, const Change& c) {
  const std::string dir = "/sys/bus/pci/devices/" + c.target;
  ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDir(dir));
  const bool part = c.detail.is_object() && c.detail.contains("first");
  std::vector<std::string> out;
  for (const std::string& e : entries) {
    if (e.rfind("virtfn", 0) != 0) continue;
    if (part) {
      const std::string digits = e.substr(6);
      if (digits.empty() || digits.size() > 5 ||
          digits.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      const long long n = std::stoll(digits);
      if (n < c.detail["first"].get<long long>() || n > c.detail["last"].get<long long>()) continue;
    }
    auto net = fs.ListDir(dir + "/" + e + "/net");
    if (!net.ok()) continue;  // bound to vfio-pci or not probed yet: no netdev
    out.insert(out.end(), net->begin(), net->end());
  }
  return out;
}

// VF n of a PF now: its virtfn<n> link's target ("" when absent).
std::string VfOf(const HostFs& fs, const std::string& pf, int n) {
  auto target = fs.ReadLink("/sys/bus/pci/devices/" + pf + "/virtfn" + std::to_string(n));
  if (!target.ok()) return "";
  const size_t slash = target->rfind('/');
  return slash == std::string::npos ? *target : target->substr(slash + 1);
}

int DetailInt(const Change& c, const char* key) {
  return static_cast<int>(c.detail.at(key).get<long long>());
}

// The VFs a vfMtu change is for, with the MTU each is to get (nullopt: an
// inverse change's VF that had no known MTU before: left as it is), and
// their netdevs now. A VF without a netdev is an error: bound to vfio-pci or
// not probed, nothing carries the MTU.
struct VfMtuTarget {
  int index;
  std::string vf;
  std::string netdev;
  std::optional<int> want;
};
StatusOr<std::vector<VfMtuTarget>> VfMtuTargets(const Change& c, const HostFs& fs) {
  const int first = DetailInt(c, "first");
  const int last = DetailInt(c, "last");
  std::vector<VfMtuTarget> out;
  for (int n = first; n <= last; ++n) {
    VfMtuTarget t{n, "", "", std::nullopt};
    if (c.after.is_array()) {
      const nlohmann::json& a = c.after[static_cast<size_t>(n - first)];
      if (a.is_number_integer()) t.want = static_cast<int>(a.get<long long>());
    } else {
      t.want = static_cast<int>(c.after.get<long long>());
    }
    if (!t.want) continue;
    t.vf = VfOf(fs, c.target, n);
    if (t.vf.empty()) {
      return FailedPreconditionError(c.target + " has no VF " + std::to_string(n) + " (no virtfn" +
                                     std::to_string(n) + ")");
    }
    auto net = fs.ListDir("/sys/bus/pci/devices/" + t.vf + "/net");
    if (!net.ok() || net->empty()) {
      std::string driver;
      if (auto d = fs.ReadLink("/sys/bus/pci/devices/" + t.vf + "/driver"); d.ok()) {
        driver = d->substr(d->rfind('/') + 1);
      }
      return FailedPreconditionError("VF " + std::to_string(n) + " (" + t.vf +
                                     ") has no netdev to set the mtu on (driver " +
                                     (driver.empty() ? std::string("none") : driver) + ")");
    }
    t.netdev = net->front();
    out.push_back(std::move(t));
  }
  return out;
}

// Issue 36 item 3: a VF bound to a network driver whose netdev is still on
// its way (an apply right after a kill, a boot while udev renames) is waited
// for, within ctx.settle_timeout as the count change does, instead of
// failing at once with "has no netdev". VFs first..last of the change (all
// when the detail has no range); one without a driver, or on a userspace
// driver (vfio-pci), is left to the caller (it never gets a netdev).
Status AwaitVfNetdevs(const Change& c, HostContext& ctx) {
  const bool range = c.detail.is_object() && c.detail.contains("first") &&
                     c.detail["first"].is_number_integer() && c.detail.contains("last") &&
                     c.detail["last"].is_number_integer();
  const int first = range ? DetailInt(c, "first") : 0;
  const int last = range ? DetailInt(c, "last") : 65535;
  const std::string dev = "/sys/bus/pci/devices/";
  auto missing = [&]() -> std::string {
    for (int n = first; n <= last; ++n) {
      const std::string vf = VfOf(*ctx.fs, c.target, n);
      if (vf.empty()) {
        if (!range) break;  // past the last VF
        continue;
      }
      if (range && c.after.is_array()) {  // an inverse vfMtu: VFs with no value are left
        const size_t k = static_cast<size_t>(n - first);
        if (k >= c.after.size() || c.after[k].is_null()) continue;
      }
      const std::string driver = LinkBasenameIfPresent(*ctx.fs, dev + vf + "/driver");
      if (driver.empty() || IsUserspaceDriver(driver)) continue;
      if (RegisteredNetdevs(*ctx.fs, dev + vf).empty()) {
        return "VF " + std::to_string(n) + " (" + vf + ", " + driver + ")";
      }
    }
    return "";
  };
  Clock& clock = ctx.clock != nullptr ? *ctx.clock : RealClock();
  const auto start = clock.Now();
  for (;;) {
    const std::string vf = missing();
    if (vf.empty()) return OkStatus();
    const auto waited = clock.Now() - start;
    if (waited >= ctx.settle_timeout) {
      return DeadlineExceededError(
          c.target + ": " + vf + " has no netdev after " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(waited).count()) +
          "s (--settle-timeout)");
    }
    if (ctx.progress) ctx.progress->Waiting(c.target + ": " + vf + ": netdev", ctx.settle_timeout);
    if (!WaitStep(clock, std::chrono::milliseconds(20), ctx.interrupt)) {
      return FailedPreconditionError(c.target + ": the wait for " + vf +
                                     "'s netdev ended by a signal");
    }
  }
}

// detail.first and .last: VF indexes, first <= last.
bool VfIndexRangeDetail(const Change& c) {
  auto index = [&](const char* key) {
    return c.detail.is_object() && c.detail.contains(key) && c.detail[key].is_number_integer() &&
           c.detail[key].get<long long>() >= 0 && c.detail[key].get<long long>() < 65536;
  };
  return index("first") && index("last") &&
         c.detail["first"].get<long long>() <= c.detail["last"].get<long long>();
}

Status CheckChangeShape(const Change& c) {
  if (c.module != kLinkModule) return InvalidArgumentError("module link cannot apply " + c.id);
  if (c.attribute == kMtuAttribute) {
    if (!IsValidIfname(c.target)) return InvalidArgumentError(c.id + ": bad interface name");
    if (!c.after.is_number_integer() || c.after.get<long long>() < kMinMtu ||
        c.after.get<long long>() > 0x7fffffff) {
      return InvalidArgumentError(c.id + ": mtu must be a number >= 68, not " + c.after.dump());
    }
    return OkStatus();
  }
  if (c.attribute == kUpAttribute) {
    if (!IsValidIfname(c.target)) return InvalidArgumentError(c.id + ": bad interface name");
    if (!c.after.is_boolean()) return InvalidArgumentError(c.id + ": up must be true or false");
    return OkStatus();
  }
  if (c.attribute == kVfsUpAttribute) {
    // A path component as it is (/sys/bus/pci/devices/<target>): full form only.
    if (!PciAddress::ParseFull(c.target)) return InvalidArgumentError(c.id + ": bad PCI address");
    if (!c.after.is_boolean() && !c.after.is_null()) {
      return InvalidArgumentError(c.id + ": vfsUp must be true, false or null");
    }
    if (c.detail.is_object() && (c.detail.contains("first") || c.detail.contains("last")) &&
        !VfIndexRangeDetail(c)) {
      return InvalidArgumentError(c.id + ": detail.first..last must be a VF index range");
    }
    return OkStatus();
  }
  if (c.attribute == kVfMtuAttribute) {
    if (!PciAddress::ParseFull(c.target)) return InvalidArgumentError(c.id + ": bad PCI address");
    if (!VfIndexRangeDetail(c)) {
      return InvalidArgumentError(c.id + ": detail.first..last must be a VF index range");
    }
    const size_t n = static_cast<size_t>(c.detail["last"].get<long long>() -
                                         c.detail["first"].get<long long>() + 1);
    auto mtu = [](const nlohmann::json& v) {
      return v.is_number_integer() && v.get<long long>() >= kMinMtu &&
             v.get<long long>() <= 0x7fffffff;
    };
    if (mtu(c.after)) return OkStatus();
    if (c.after.is_null()) return OkStatus();  // undoing "VFs created": nothing to restore
    bool ok = c.after.is_array() && c.after.size() == n;
    for (size_t i = 0; ok && i < n; ++i) ok = c.after[i].is_null() || mtu(c.after[i]);
    if (!ok) {
      return InvalidArgumentError(c.id +
                                  ": vfMtu must be a number >= 68, or one (or null) per VF " +
                                  "of the range, not " + c.after.dump());
    }
    return OkStatus();
  }
  return InvalidArgumentError("module link has no attribute " + c.attribute + " (" + c.id + ")");
}

}  // namespace

Status LinkModule::Discover(HostContext& ctx, HostFacts& facts) {
  std::unique_ptr<LinkBackend> backend = options_.backend(*ctx.fs);
  std::vector<std::string> names;
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || !f.IsNetwork()) continue;
    names.insert(names.end(), f.netdevs.begin(), f.netdevs.end());
    if (!f.sriov) continue;
    for (const VfInfo& vf : f.sriov->vfs)
      names.insert(names.end(), vf.netdevs.begin(), vf.netdevs.end());
  }
  for (const std::string& n : names) {
    auto l = backend->Read(n);
    if (!l.ok()) {
      // A netdev that went away or cannot be read is a missing fact; in a
      // tree, a missing file is a partial capture (the planner says so).
      spdlog::debug("link {} ({}): {}", n, backend->Name(), l.status().message());
      const std::string dir = "/sys/class/net/" + n;
      if (l.status().code() == StatusCode::kNotFound &&
          (!ctx.fs->Captured(dir + "/mtu") || !ctx.fs->Captured(dir + "/flags"))) {
        facts.links_not_captured.insert(n);
      }
      continue;
    }
    facts.links[n] = std::move(*l);
  }
  return OkStatus();
}

void LinkModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanByPciResource(PlanLinks, desired, facts, sink);
}

Status LinkModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  std::unique_ptr<LinkBackend> backend = options_.backend(*ctx.fs);
  if (change.attribute == kMtuAttribute) {
    const int want = static_cast<int>(change.after.get<long long>());
    // No write when it already holds (a rollback of a change the kernel
    // refused, a re-run): some drivers refuse even an unchanged value.
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(change.target));
    if (now.mtu == want) return OkStatus();
    return backend->SetMtu(change.target, want);
  }
  if (change.attribute == kUpAttribute) {
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(change.target));
    if (now.admin_up == change.after.get<bool>()) return OkStatus();
    return backend->SetUp(change.target, change.after.get<bool>());
  }
  if (change.after.is_null()) return OkStatus();  // undoing "VFs created": nothing to restore
  if (change.attribute == kVfMtuAttribute) {
    RETURN_IF_ERROR(AwaitVfNetdevs(change, ctx));
    ASSIGN_OR_RETURN(std::vector<VfMtuTarget> vfs, VfMtuTargets(change, *ctx.fs));
    for (const VfMtuTarget& t : vfs) {
      const std::string label = "VF " + std::to_string(t.index) + " (" + t.vf + ")";
      StatusOr<LinkFacts> now = backend->Read(t.netdev);
      if (!now.ok()) return now.status().WithContext(label);
      if (now->mtu == *t.want) continue;
      if (ctx.progress) ctx.progress->Step(t.netdev + " mtu " + std::to_string(*t.want));
      RETURN_IF_ERROR(backend->SetMtu(t.netdev, *t.want).WithContext(label));
    }
    return OkStatus();
  }
  const bool up = change.after.get<bool>();
  RETURN_IF_ERROR(AwaitVfNetdevs(change, ctx));
  ASSIGN_OR_RETURN(std::vector<std::string> vfs, VfNetdevs(*ctx.fs, change));
  for (const std::string& n : vfs) {
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(n));
    if (now.admin_up == up) continue;
    if (ctx.progress) ctx.progress->Step(n + (up ? " up" : " down"));
    RETURN_IF_ERROR(backend->SetUp(n, up).WithContext("VF of " + change.target));
  }
  return OkStatus();
}

Status LinkModule::CheckChange(const Change& change) const { return CheckChangeShape(change); }

Status LinkModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  std::unique_ptr<LinkBackend> backend = options_.backend(*ctx.fs);
  const std::string label = change.field_path.empty() ? change.id : change.field_path;
  if (change.attribute == kMtuAttribute) {
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(change.target));
    const long long want = change.after.get<long long>();
    if (now.mtu != want) {
      return FailedPreconditionError(label + " (" + change.target + "): desired " +
                                     std::to_string(want) + ", current " + std::to_string(now.mtu));
    }
    return OkStatus();
  }
  if (change.attribute == kVfMtuAttribute) {
    if (change.after.is_null()) return OkStatus();
    ASSIGN_OR_RETURN(std::vector<VfMtuTarget> vfs, VfMtuTargets(change, *ctx.fs));
    for (const VfMtuTarget& t : vfs) {
      ASSIGN_OR_RETURN(LinkFacts now, backend->Read(t.netdev));
      if (now.mtu != *t.want) {
        return FailedPreconditionError(label + " (VF " + std::to_string(t.index) + ", " + t.netdev +
                                       "): desired " + std::to_string(*t.want) + ", current " +
                                       std::to_string(now.mtu));
      }
    }
    return OkStatus();
  }
  std::vector<std::string> names = {change.target};
  if (change.attribute == kVfsUpAttribute) {
    if (change.after.is_null()) return OkStatus();
    ASSIGN_OR_RETURN(names, VfNetdevs(*ctx.fs, change));
  }
  for (const std::string& n : names) {
    ASSIGN_OR_RETURN(LinkFacts now, backend->Read(n));
    if (now.admin_up != change.after.get<bool>()) {
      return FailedPreconditionError(label + " (" + n + "): desired " +
                                     (change.after.get<bool>() ? "up" : "down") + ", current " +
                                     (now.admin_up ? "up" : "down"));
    }
  }
  return OkStatus();
}

PROVISIONER_REGISTER_MODULE("link", LinkModule, "sriov", "vf")

}  // namespace provisioner
