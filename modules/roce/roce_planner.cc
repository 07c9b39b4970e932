#include "modules/roce/roce_planner.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "engine/model/selector.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

using nlohmann::json;

constexpr const char* kPoints[] = {"roce_np", "roce_rp"};
constexpr char kTrustDscpName[] = "dscp";
// mlx5's port_buff_cell_sz (128 bytes on every ConnectX) and the cells
// port_update_shared_buffer leaves to the shared pools at the least.
constexpr long long kBufferCell = 128;
constexpr long long kSharedCells = 4;

// Collects the changes once per id; two nics asking one netdev for different
// values is an error naming both.
class Changes {
 public:
  explicit Changes(PlanSink& sink) : sink_(sink) {}

  void Add(const NicSpec& nic, const std::string& ifname, const std::string& attribute, json before,
           json after, const std::string& what, const std::string& field,
           const json& detail = json::object()) {
    const std::string id = std::string(kRoceModule) + "/" + ifname + "/" + attribute;
    auto [it, fresh] = seen_.emplace(id, std::make_pair(after, nic.name));
    if (!fresh) {
      if (it->second.first != after) {
        sink_.Error(field, "nic " + nic.name + " wants " + attribute + " " + after.dump() + " on " +
                               ifname + ", nic " + it->second.second + " wants " +
                               it->second.first.dump());
      }
      return;
    }
    if (before == after) return;
    const bool pfc = attribute == kPfcAttribute;
    Change c = MakeChange(kRoceModule, ifname, attribute, std::move(before), std::move(after),
                          Disruption::kLive, kPhaseRoce,
                          "nic " + nic.name + " wants " + what + " on " + ifname + "; " +
                              (pfc ? "the driver takes the link down and up to set it; " : "") +
                              kRoceLiveReason,
                          field);
    c.detail["nic"] = nic.name;
    for (const auto& [k, v] : detail.items()) c.detail[k] = v;
    // mlx5 sets PFC with the port toggled down and up
    // (mlx5e_dcbnl_ieee_setpfc -> mlx5_toggle_port_link).
    c.link_flap = pfc;
    sink_.AddChange(std::move(c));
  }

 private:
  PlanSink& sink_;
  std::map<std::string, std::pair<json, std::string>> seen_;
};

json DscpMapJson(const std::map<int, std::optional<int>>& m) {
  json j = json::object();
  for (const auto& [d, p] : m) j[std::to_string(d)] = p ? json(*p) : json(nullptr);
  return j;
}

// The priority DSCP `d` lands on once this plan is applied: host.yaml's
// dscpMap entry, else the current table's (trust dscp), else DSCP >> 3.
int EffectivePriority(const NicRoceSpec& want, const RoceNetdevFacts& f, int d) {
  if (want.dscp_map) {
    auto it = want.dscp_map->find(d);
    if (it != want.dscp_map->end()) return it->second;
  }
  const bool trust_changes = want.trust && f.trust && *want.trust != *f.trust;
  if (!trust_changes && f.trust && *f.trust == kTrustDscpName) {
    auto it = f.dscp_map.find(d);
    if (it != f.dscp_map.end()) return it->second;
  }
  return (d >> 3) & 7;
}

json BuffersJson(const std::vector<int>& prio2buffer, const std::vector<long long>& sizes) {
  return json{{"prio2buffer", prio2buffer}, {"sizes", sizes}};
}

// cableLength and buffers, after PFC (the buffers' lossless bits follow the
// PFC priorities mapped to them: mlx5's update_buffer_lossy). mlx5 checks
// every lossless buffer against the xoff threshold the cable length gives
// (update_xoff_threshold): a longer cable goes after the buffers grow, a
// shorter one before they shrink, so that each step holds.
void PlanBuffers(const NicSpec& nic, const std::string& path, const std::string& ifname,
                 const RoceNetdevFacts& f, Changes& changes, PlanSink& sink) {
  const NicRoceSpec& want = *nic.roce;
  const std::string dcb_why = "could not be read: " + f.dcb_error;
  bool cable_ok = false;
  if (want.cable_length) {
    const std::string field = path + ".roce.cableLength";
    if (!f.pfc) {
      sink.Error(field, "the cable length of " + ifname + " " + dcb_why);
    } else if (!f.cable_length) {
      sink.Error(field, "the driver of " + ifname +
                            " reports no cable length (ieee_pfc.delay 0: only mlx5 with port "
                            "buffer support keeps one), so it cannot be set");
    } else {
      cable_ok = true;
    }
  }
  bool buffers_ok = false;
  json buffers_before, buffers_after;
  if (want.buffers) {
    const std::string field = path + ".roce.buffers";
    if (!f.pfc) {
      sink.Error(field, "the port buffers of " + ifname + " " + dcb_why);
    } else if (!f.prio2buffer || !f.buffer_sizes) {
      sink.Error(field, "the driver of " + ifname +
                            " has no port buffers to set (dcbnl DCB_ATTR_DCB_BUFFER: no "
                            "dcbnl_getbuffer, or mlx5 without port buffer support)");
    } else {
      std::vector<int> p2b = want.buffers->prio2buffer.value_or(*f.prio2buffer);
      std::vector<long long> sizes = *f.buffer_sizes;
      if (want.buffers->sizes) {
        sizes.assign(8, 0);
        for (size_t i = 0; i < want.buffers->sizes->size() && i < 8; ++i) {
          sizes[i] = (*want.buffers->sizes)[i];
        }
      }
      long long used = 0;
      for (long long z : sizes) used += z;
      // mlx5e_port_manual_buffer_config: EINVAL past the spare buffer
      // (port_buffer_size - internal_buffers_size - headroom, headroom the
      // sizes now), and port_update_shared_buffer: EINVAL when fewer than
      // 4 cells stay for the shared pools; in cells, the rest dropped.
      const long long usable = f.buffer_total - f.buffer_internal;
      const long long room = (usable / kBufferCell - kSharedCells) * kBufferCell;
      if (want.buffers->sizes && (used > usable || used / kBufferCell * kBufferCell > room)) {
        sink.Error(field + ".sizes",
                   "the buffers of " + ifname + " would take " + std::to_string(used) +
                       " bytes; mlx5 takes at most " + std::to_string(room) +
                       " (its port buffer has " + std::to_string(f.buffer_total) +
                       (f.buffer_internal > 0
                            ? ", " + std::to_string(f.buffer_internal) + " of them internal"
                            : std::string()) +
                       ", and 4 cells of 128 bytes stay shared; more is EINVAL)");
      } else {
        buffers_ok = true;
        buffers_before = BuffersJson(*f.prio2buffer, *f.buffer_sizes);
        buffers_after = BuffersJson(p2b, sizes);
      }
    }
  }
  auto add_cable = [&] {
    if (!cable_ok) return;
    changes.Add(nic, ifname, kCableLengthAttribute, *f.cable_length, *want.cable_length,
                "cable length " + std::to_string(*want.cable_length) +
                    " m (PFC delay; then the port buffers re-sent, one cell off and back, "
                    "so that mlx5 enters manual buffer mode and sizes xoff for it)",
                path + ".roce.cableLength");
  };
  auto add_buffers = [&] {
    if (!buffers_ok) return;
    changes.Add(nic, ifname, kBuffersAttribute, buffers_before, buffers_after,
                "port buffers prio2buffer " + buffers_after["prio2buffer"].dump() + " sizes " +
                    buffers_after["sizes"].dump(),
                path + ".roce.buffers");
  };
  if (cable_ok && *want.cable_length > *f.cable_length) {
    add_buffers();
    add_cable();
  } else {
    add_cable();
    add_buffers();
  }
}

void PlanNetdev(const NicSpec& nic, const std::string& path, const std::string& ifname,
                const RoceNetdevFacts& f, Changes& changes, PlanSink& sink) {
  const NicRoceSpec& want = *nic.roce;
  const std::string dcb_why = "could not be read: " + f.dcb_error;
  // DCBX first: host-managed before PFC is set, so the switch's LLDP cannot
  // undo it in between.
  if (want.dcbx) {
    if (!f.trust) {
      sink.Error(path + ".roce.dcbx", "the DCBX mode of " + ifname + " " + dcb_why);
    } else if (!f.dcbx) {
      sink.Error(path + ".roce.dcbx", "the driver of " + ifname +
                                          " reports no DCBX mode (dcbnl getdcbx: EOPNOTSUPP), "
                                          "so it cannot be set");
    } else {
      changes.Add(nic, ifname, kDcbxAttribute, *f.dcbx, *want.dcbx,
                  "DCBX " + *want.dcbx + "-managed", path + ".roce.dcbx");
    }
  }
  if (want.trust) {
    if (!f.trust) {
      sink.Error(path + ".roce.trust",
                 "the DCB trust state of " + ifname + " could not be read: " + f.dcb_error);
    } else {
      changes.Add(nic, ifname, kTrustAttribute, *f.trust, *want.trust, "trust " + *want.trust,
                  path + ".roce.trust");
    }
  }
  if (want.dscp_map && !want.dscp_map->empty()) {
    const std::string field = path + ".roce.dscpMap";
    const std::string trust_after = want.trust ? *want.trust : f.trust.value_or("");
    if (!f.trust) {
      sink.Error(field, "the DSCP map of " + ifname + " " + dcb_why);
    } else if (trust_after != kTrustDscpName) {
      sink.Error(field, "dscpMap on " + ifname + " with trust " + trust_after +
                            ": the DSCP map classifies only with roce.trust: dscp (and a DSCP "
                            "entry would switch mlx5 to trust dscp)");
    } else {
      std::map<int, std::optional<int>> before, after;
      for (const auto& [d, p] : *want.dscp_map) {
        after[d] = p;
        // With trust changing to dscp the table is the default map by then;
        // the plan shows what is there now.
        auto it = f.dscp_map.find(d);
        before[d] = it == f.dscp_map.end() ? std::nullopt : std::optional<int>(it->second);
      }
      std::string what;
      for (const auto& [d, p] : *want.dscp_map) {
        what += (what.empty() ? "" : ", ") + std::to_string(d) + "->" + std::to_string(p);
      }
      changes.Add(nic, ifname, kDscpMapAttribute, DscpMapJson(before), DscpMapJson(after),
                  "DSCP map " + what, field);
    }
  }
  // IEEE 802.3x global pause and 802.1Qbb PFC are not both on a link (the
  // validate step refuses pause: true beside a non-empty pfc): the one
  // turned off goes first, so the link never runs both. PFC on with pause
  // off: pause off, then PFC; to global pause: PFC off, then pause on.
  auto add_pause = [&] {
    if (!want.pause) return;
    if (!f.pause_rx || !f.pause_tx) {
      sink.Error(path + ".roce.pause",
                 "the pause frame settings of " + ifname + " could not be read: " + f.pause_error);
      return;
    }
    const std::vector<int> pfc_after = want.pfc ? *want.pfc : f.pfc.value_or(std::vector<int>());
    if (*want.pause && !pfc_after.empty()) {
      sink.Error(path + ".roce.pause",
                 "pause: true on " + ifname + ", which has PFC on priorities " +
                     PriorityList(pfc_after) +
                     " (dcbnl): 802.3x global pause and 802.1Qbb PFC are not both on a link; "
                     "add pfc: [] to turn PFC off first");
      return;
    }
    changes.Add(nic, ifname, kPauseAttribute, json{{"rx", *f.pause_rx}, {"tx", *f.pause_tx}},
                json{{"rx", *want.pause}, {"tx", *want.pause}},
                std::string("global pause frames ") + (*want.pause ? "on" : "off"),
                path + ".roce.pause");
  };
  auto add_pfc = [&] {
    if (!want.pfc) return;
    if (!f.pfc) {
      sink.Error(path + ".roce.pfc",
                 "the PFC state of " + ifname + " could not be read: " + f.dcb_error);
      return;
    }
    changes.Add(nic, ifname, kPfcAttribute, *f.pfc, *want.pfc,
                "PFC on priorities " + PriorityList(*want.pfc), path + ".roce.pfc");
  };
  if (want.pause && *want.pause) {
    add_pfc();
    add_pause();
  } else {
    add_pause();
    add_pfc();
  }
  PlanBuffers(nic, path, ifname, f, changes, sink);
  if (want.tos) {
    const std::string field = path + ".roce.tos";
    const int prio = EffectivePriority(want, f, *want.tos >> 2);
    if (want.pfc && !want.pfc->empty() &&
        std::find(want.pfc->begin(), want.pfc->end(), prio) == want.pfc->end()) {
      sink.Error(field, "tos " + std::to_string(*want.tos) + " (DSCP " +
                            std::to_string(*want.tos >> 2) + ") lands on priority " +
                            std::to_string(prio) + " by the DSCP map, which has no PFC (pfc " +
                            PriorityList(*want.pfc) + ")");
    } else if (!f.tos_error.empty()) {
      sink.Error(field, f.tos_error);
    } else if (f.tos_file.empty()) {
      sink.Error(field, ifname +
                            " has no default RoCE ToS to set: its RDMA device has neither "
                            "tc/<port>/traffic_class (NVIDIA's out-of-tree mlx5_ib) nor "
                            "/sys/kernel/config/rdma_cm/<device>/ports/<port>/default_roce_tos "
                            "(configfs mounted at /sys/kernel/config and the rdma_cm module "
                            "loaded: then apply makes the device's directory)");
    } else {
      // rdma_cm/<dev> not made yet: mkdir first (the kernel then makes the
      // port's default_roce_tos); the value before is not readable then.
      json detail = {{"file", f.tos_file}};
      std::string where = " in " + f.tos_file;
      if (!f.tos_mkdir.empty()) {
        detail["mkdir"] = f.tos_mkdir;
        where += " (after mkdir " + f.tos_mkdir + ", which makes the kernel create it)";
      }
      changes.Add(nic, ifname, kTosAttribute, f.tos ? json(*f.tos) : json(nullptr), *want.tos,
                  "default RoCE ToS " + std::to_string(*want.tos) + " (DSCP " +
                      std::to_string(*want.tos >> 2) + ", priority " + std::to_string(prio) + ")" +
                      where,
                  field, detail);
    }
  }
  if (!want.ecn && !want.cnp) return;
  if (!f.ecn_error.empty()) {
    sink.Error(path + (want.ecn ? ".roce.ecn" : ".roce.cnp"), f.ecn_error);
    return;
  }
  if (want.cnp) {
    // Live where NVIDIA's out-of-tree driver has the files; else the
    // firmware planner sets CNP_DSCP_P<n> / CNP_802P_PRIO_P<n>.
    if (want.cnp->dscp && f.cnp_dscp) {
      changes.Add(nic, ifname, kCnpDscpAttribute, *f.cnp_dscp, *want.cnp->dscp,
                  "CNP DSCP " + std::to_string(*want.cnp->dscp), path + ".roce.cnp.dscp");
    }
    if (want.cnp->priority && f.cnp_802p_prio) {
      changes.Add(nic, ifname, kCnpPriorityAttribute, *f.cnp_802p_prio, *want.cnp->priority,
                  "CNP 802.1p priority " + std::to_string(*want.cnp->priority),
                  path + ".roce.cnp.priority");
    }
  }
  // Without ecn/ (the upstream mlx5 driver has none) the firmware planner
  // sets ROCE_CC_PRIO_MASK_P<n> instead.
  if (!want.ecn || !f.ecn_dir) return;
  const std::string field = path + ".roce.ecn";
  for (const char* point : kPoints) {
    const std::map<int, bool>& now = std::string(point) == "roce_np" ? f.ecn_np : f.ecn_rp;
    for (int p : *want.ecn) {
      auto it = now.find(p);
      if (it == now.end()) {
        sink.Error(field, ifname + " has no ECN " + point + " enable for priority " +
                              std::to_string(p) + " (/sys/class/net/" + ifname + "/ecn/" + point +
                              "/enable/" + std::to_string(p) + ")");
        continue;
      }
      changes.Add(nic, ifname, EcnAttribute(point, p), it->second, true,
                  std::string("ECN ") + point + " on for priority " + std::to_string(p), field);
    }
  }
}

}  // namespace

std::string PriorityList(const std::vector<int>& priorities) {
  return nlohmann::json(priorities).dump();
}

std::string EcnAttribute(const std::string& point, int prio) {
  return "ecn." + point + "." + std::to_string(prio);
}

std::optional<EcnTarget> ParseEcnAttribute(const std::string& attribute) {
  for (const char* point : kPoints) {
    const std::string prefix = std::string("ecn.") + point + ".";
    if (attribute.size() == prefix.size() + 1 && attribute.compare(0, prefix.size(), prefix) == 0 &&
        attribute.back() >= '0' && attribute.back() <= '7') {
      return EcnTarget{point, attribute.back() - '0'};
    }
  }
  return std::nullopt;
}

bool WantsRoce(const NicRoceSpec& r) {
  return r.trust || r.pfc || r.ecn || r.cnp || r.tos || r.pause || r.dscp_map || r.dcbx ||
         r.cable_length || r.buffers;
}

bool WantsRoce(const DesiredState& desired) {
  for (const NicSpec& n : desired.nics) {
    if (n.roce && WantsRoce(*n.roce)) return true;
  }
  return false;
}

void PlanRoce(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  Changes changes(sink);
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.roce || !WantsRoce(*nic.roce)) continue;
    const std::string path = DesiredState::NicPath(i);
    std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
    // A selector matching nothing: reported once, by the pci module.
    if (pfs.empty()) continue;
    for (const PciFunction* pf : pfs) {
      if (pf->netdevs.empty()) {
        sink.Error(path + ".roce", pf->pci_address +
                                       " has no network interface (no net/ in its sysfs "
                                       "directory): its RoCE QoS cannot be set or checked");
        continue;
      }
      for (const std::string& ifname : pf->netdevs) {
        auto it = facts.roce.netdevs.find(ifname);
        if (it == facts.roce.netdevs.end()) {
          sink.Error(path + ".roce",
                     "the RoCE QoS state of " + ifname + " (" + pf->pci_address + ") was not read");
          continue;
        }
        PlanNetdev(nic, path, ifname, it->second, changes, sink);
      }
    }
  }
}

}  // namespace provisioner
