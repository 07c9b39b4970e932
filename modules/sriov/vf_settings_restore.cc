#include "modules/sriov/vf_settings_restore.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "modules/link/link_backend.h"
#include "modules/sriov/planner.h"
#include "modules/vf/vf_backend.h"
#include "modules/vf/vf_host.h"
#include "modules/vf/vf_netlink.h"
#include "modules/vf/vf_planner.h"

namespace provisioner {
namespace {

using nlohmann::json;

// The recorded VFs as (index, settings), indexes below `target` only.
std::vector<std::pair<int, const json*>> RecordedVfs(const json& record, int target) {
  std::vector<std::pair<int, const json*>> out;
  for (const json& v : record["vfs"]) {
    if (!v.is_object() || !v.contains("index") || !v["index"].is_number_integer()) continue;
    const long long i = v["index"].get<long long>();
    if (i >= 0 && i < target) out.emplace_back(static_cast<int>(i), &v);
  }
  return out;
}

// One vf-module change per setting, in the shape of an inverse change (a
// value per VF, null: left as it is), so that the vf module's own apply and
// verify restore it.
std::vector<Change> SettingChanges(const Change& c, const json& record, int target) {
  static const std::pair<const char*, const char*> kSettings[] = {
      {"mac", kMacAttribute},          {"guid", kIbGuidsAttribute},
      {"trust", kTrustAttribute},      {"spoofChk", kSpoofChkAttribute},
      {"linkState", kLinkStateAttribute}, {"rate", kRateAttribute},
      {"vlan", kVlanAttribute},
  };
  std::vector<Change> out;
  for (const auto& [key, attribute] : kSettings) {
    json after = json::array();
    for (int i = 0; i < target; ++i) after.push_back(nullptr);
    bool any = false;
    for (const auto& [i, v] : RecordedVfs(record, target)) {
      auto it = v->find(key);
      if (it == v->end() || it->is_null()) continue;
      after[static_cast<size_t>(i)] = *it;
      any = true;
    }
    if (!any) continue;
    Change x;
    x.id = kVfModule + std::string("/") + c.target + "/" + attribute;
    x.module = kVfModule;
    x.target = c.target;
    x.attribute = attribute;
    x.before = nullptr;
    x.after = std::move(after);
    x.reason = "restore the VFs' " + std::string(attribute) + " (" + c.id + ")";
    x.detail = {{"first", 0}, {"last", target - 1}};
    if (record.contains("pfNetdev") && record["pfNetdev"].is_string()) {
      x.detail["netdev"] = record["pfNetdev"];
    }
    out.push_back(std::move(x));
  }
  return out;
}

std::unique_ptr<VfSettingsBackend> Backend(HostFs& fs, std::unique_ptr<VfNetlink>* netlink) {
  return NewVfSettingsBackend(fs, [netlink]() {
    if (*netlink == nullptr) *netlink = NewLibnlVfNetlink();
    return netlink->get();
  });
}

// The recorded MTU of each VF netdev, with the netdev it is for now.
struct MtuTarget {
  int index;
  std::string netdev;  // "" when the VF has none now
  int mtu;
};
std::vector<MtuTarget> MtuTargets(const Change& c, const json& record, int target,
                                  const HostFs& fs) {
  std::vector<MtuTarget> out;
  for (const auto& [i, v] : RecordedVfs(record, target)) {
    auto it = v->find("mtu");
    if (it == v->end() || !it->is_number_integer()) continue;
    std::vector<std::string> nds = RegisteredNetdevs(
        fs, "/sys/bus/pci/devices/" + c.target + "/virtfn" + std::to_string(i));
    out.push_back({i, nds.empty() ? "" : nds.front(), static_cast<int>(it->get<long long>())});
  }
  return out;
}

std::string VfLabel(const Change& c, int i) {
  return "VF " + std::to_string(i) + " of " + c.target;
}

}  // namespace

Status RestoreVfSettings(const Change& change, int target, HostContext& ctx) {
  const json* record = RecordAtCount(change, kVfSettingsAtCount, "vfs", target);
  if (record == nullptr) return OkStatus();
  std::unique_ptr<VfNetlink> netlink;
  std::unique_ptr<VfSettingsBackend> backend = Backend(*ctx.fs, &netlink);
  for (const Change& x : SettingChanges(change, *record, target)) {
    RETURN_IF_ERROR(ApplyVfChange(x, ctx, *backend, VfHostOptions())
                        .WithContext("restore the VFs' " + x.attribute + " of " + change.target));
  }
  std::unique_ptr<LinkBackend> links = NewLinkBackend(*ctx.fs);
  for (const MtuTarget& t : MtuTargets(change, *record, target, *ctx.fs)) {
    if (t.netdev.empty()) {
      return FailedPreconditionError("restore the mtu of " + VfLabel(change, t.index) +
                                     ": it has no netdev");
    }
    ASSIGN_OR_RETURN(LinkFacts now, links->Read(t.netdev));
    if (now.mtu == t.mtu) continue;
    RETURN_IF_ERROR(links->SetMtu(t.netdev, t.mtu).WithContext(
        "restore the mtu of " + VfLabel(change, t.index) + " netdev " + t.netdev));
  }
  return OkStatus();
}

Status VerifyVfSettings(const Change& change, int target, HostContext& ctx) {
  const json* record = RecordAtCount(change, kVfSettingsAtCount, "vfs", target);
  if (record == nullptr) return OkStatus();
  std::unique_ptr<VfNetlink> netlink;
  std::unique_ptr<VfSettingsBackend> backend = Backend(*ctx.fs, &netlink);
  for (const Change& x : SettingChanges(change, *record, target)) {
    RETURN_IF_ERROR(VerifyVfChange(x, ctx, *backend)
                        .WithContext("the VFs' " + x.attribute + " as before " + change.id));
  }
  std::unique_ptr<LinkBackend> links = NewLinkBackend(*ctx.fs);
  for (const MtuTarget& t : MtuTargets(change, *record, target, *ctx.fs)) {
    if (t.netdev.empty()) {
      return FailedPreconditionError(VfLabel(change, t.index) + " has no netdev; its mtu was " +
                                     std::to_string(t.mtu) + " before " + change.id);
    }
    ASSIGN_OR_RETURN(LinkFacts now, links->Read(t.netdev));
    if (now.mtu != t.mtu) {
      return FailedPreconditionError(VfLabel(change, t.index) + " netdev " + t.netdev +
                                     " mtu: desired " + std::to_string(t.mtu) + " (as before " +
                                     change.id + "), current " + std::to_string(now.mtu));
    }
  }
  return OkStatus();
}

}  // namespace provisioner
