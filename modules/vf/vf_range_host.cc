// Per-VF settings over a VF range on the host (vfLinkState, vfRate, vfVlan
// through the VF settings backend) and vfMac (the PF's table MAC, then a
// rebind so the VF's netdev takes it).
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "engine/base/strings.h"
#include "engine/model/pci_address.h"
#include "modules/vf/vf_change_access.h"
#include "modules/vf/vf_planner.h"

namespace provisioner {
namespace vf_access {

using nlohmann::json;

namespace {

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

  // Runs `each` on every VF the change names that is there: its index, PCI
  // address, what the backend read of it (null: nothing) and the value the
  // change wants. An inverse's VF that is gone is skipped (numVfs went down
  // since); a forward change's is an error, `label` naming the change.
  using EachVf = std::function<Status(int n, const std::string& bdf, const VfLinkState* state,
                                      const json& want)>;
  Status ForEachVf(const Change& c, const std::string& label, const EachVf& each) const {
    for (const auto& [n, want] : targets) {
      if (static_cast<size_t>(n) >= vfs.size()) {
        if (c.after.is_array()) continue;
        return FailedPreconditionError(label + ": no VF " + std::to_string(n) + " (" +
                                       std::to_string(vfs.size()) + " VFs)");
      }
      auto it = link.find(n);
      RETURN_IF_ERROR(
          each(n, vfs[static_cast<size_t>(n)], it != link.end() ? &it->second : nullptr, want));
    }
    return OkStatus();
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

}  // namespace

Status ApplyRangeSetting(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  ASSIGN_OR_RETURN(RangeWork w, PrepareRange(c, ctx, backend, /*for_apply=*/true));
  return w.ForEachVf(
      c, c.target,
      [&](int n, const std::string& bdf, const VfLinkState* state, const json& want) -> Status {
        if (state != nullptr && RangeValueNow(c, *state) == want) return OkStatus();
        const std::string vf_label = "VF " + std::to_string(n) + " (" + bdf + ")";
        if (ctx.progress) {
          ctx.progress->Step(c.target + ": " + vf_label + " " + c.attribute + " " +
                             RangeValueText(want));
        }
        return SetRangeValue(c, backend, w.netdev, n, want).WithContext(vf_label);
      });
}

Status VerifyRangeSetting(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  ASSIGN_OR_RETURN(RangeWork w, PrepareRange(c, ctx, backend, /*for_apply=*/false));
  return w.ForEachVf(
      c, Label(c),
      [&](int n, const std::string& bdf, const VfLinkState* state, const json& want) -> Status {
        const json now = state != nullptr ? RangeValueNow(c, *state) : json(nullptr);
        if (now == want) return OkStatus();
        return FailedPreconditionError(Label(c) + " VF " + std::to_string(n) + " (" + bdf + ") " +
                                       c.attribute + ": desired " + RangeValueText(want) +
                                       ", current " + RangeValueText(now));
      });
}

std::string VfNetdevMac(const HostFs& fs, const std::string& bdf) {
  const std::string dev = kVfPciDevices + bdf;
  for (const std::string& nd : RegisteredNetdevs(fs, dev)) {
    if (auto m = ParseMacAddress(ReadOr(fs, dev + "/net/" + nd + "/address"))) {
      return FormatMacAddress(m->data());
    }
  }
  return "";
}

namespace {

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

}  // namespace

// Sets each VF's table MAC and rebinds a VF on a netdev driver whose netdev
// or RDMA device has not taken it: mlx5 reads the admin MAC (and the node
// GUID it derives from it) when the VF is probed. An inverse back to zero
// does not rebind: the netdev keeps the MAC it had before.
Status ApplyMac(const Change& c, HostContext& ctx, VfSettingsBackend& backend,
                const VfHostOptions& options) {
  ASSIGN_OR_RETURN(RangeWork w, PrepareRange(c, ctx, backend, /*for_apply=*/true));
  return w.ForEachVf(
      c, c.target,
      [&](int n, const std::string& bdf, const VfLinkState* state, const json& want) -> Status {
        const std::string vf_label = "VF " + std::to_string(n) + " (" + bdf + ")";
        StatusOr<std::string> got = MacTarget(c, ctx, options, n, bdf, want);
        if (!got.ok()) return got.status().WithContext(vf_label);
        const std::string target = *got;
        const std::string table = state != nullptr && state->mac ? *state->mac : "";
        if (target.empty()) {
          if (!table.empty() && !IsZeroMac(table)) return OkStatus();  // keep: on vfio-pci, has one
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
          RETURN_IF_ERROR(backend.SetMac(c.target, w.netdev, n, target).WithContext(vf_label));
          rebind = !IsZeroMac(target);
        }
        const std::string driver = DriverOf(*ctx.fs, bdf);
        if (driver.empty() || IsUserspaceDriver(driver) || IsZeroMac(target)) return OkStatus();
        rebind = rebind || VfNetdevMac(*ctx.fs, bdf) != target;
        if (!rebind) return OkStatus();
        if (ctx.progress) ctx.progress->Step(c.target + ": " + vf_label + " rebind " + driver);
        RETURN_IF_ERROR(Rebind(bdf, ctx, options).WithContext("rebind " + vf_label));
        return WaitFor(ctx, options, vf_label + " netdev with MAC " + target,
                       [&] { return VfNetdevMac(*ctx.fs, bdf) == target; });
      });
}

Status VerifyMac(const Change& c, HostContext& ctx, VfSettingsBackend& backend) {
  ASSIGN_OR_RETURN(RangeWork w, PrepareRange(c, ctx, backend, /*for_apply=*/false));
  return w.ForEachVf(
      c, Label(c),
      [&](int n, const std::string& bdf, const VfLinkState* state, const json& want) -> Status {
        const std::string table =
            state != nullptr && state->mac ? *state->mac : std::string("unknown");
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
        if (problem.empty()) return OkStatus();
        return FailedPreconditionError(Label(c) + " VF " + std::to_string(n) + " (" + bdf + ") " +
                                       problem);
      });
}

}  // namespace vf_access
}  // namespace provisioner
