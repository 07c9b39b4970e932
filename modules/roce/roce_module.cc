#include "modules/roce/roce_module.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "engine/base/strings.h"
#include "engine/module/registry.h"
#include "engine/plan/resource.h"
#include "modules/link/link_backend.h"
#include "modules/roce/roce_checks.h"
#include "modules/roce/roce_ecn.h"
#include "modules/roce/roce_planner.h"
#include "modules/roce/roce_tos.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

constexpr char kNcclConf[] = "/etc/nccl.conf";

// A traffic class as NCCL reads it (a decimal 0..255); nullopt otherwise.
std::optional<int> TrafficClass(std::string_view text) {
  const std::string t = Trim(text);
  if (t.empty() || t.size() > 3 || t.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  const int v = std::atoi(t.c_str());
  if (v > 255) return std::nullopt;
  return v;
}

// NCCL_IB_TC=<n> of an nccl.conf (KEY=VALUE lines, '#' comments), the last
// one winning as NCCL's parser does.
std::optional<std::string> NcclConfValue(const std::string& text, const std::string& key) {
  std::optional<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    const std::string l = Trim(line);
    if (l.empty() || l[0] == '#') continue;
    const size_t eq = l.find('=');
    if (eq == std::string::npos || Trim(l.substr(0, eq)) != key) continue;
    out = Trim(l.substr(eq + 1));
  }
  return out;
}

// {"prio2buffer": [8], "sizes": [8]} of a buffers change; nullopt when it is
// not that.
std::optional<DcbBuffer> BufferOf(const nlohmann::json& j) {
  if (!j.is_object() || j.size() != 2 || !j.contains("prio2buffer") || !j.contains("sizes")) {
    return std::nullopt;
  }
  const nlohmann::json& p = j["prio2buffer"];
  const nlohmann::json& z = j["sizes"];
  if (!p.is_array() || p.size() != 8 || !z.is_array() || z.size() != 8) return std::nullopt;
  DcbBuffer b;
  for (size_t i = 0; i < 8; ++i) {
    if (!p[i].is_number_integer() || p[i].get<long long>() < 0 || p[i].get<long long>() > 7 ||
        !z[i].is_number_integer() || z[i].get<long long>() < 0 ||
        z[i].get<long long>() > 0xffffffffLL) {
      return std::nullopt;
    }
    b.prio2buffer[i] = p[i].get<int>();
    b.sizes[i] = z[i].get<long long>();
  }
  return b;
}

bool SameBuffers(const DcbState& now, const DcbBuffer& want) {
  return now.buffer && now.buffer->prio2buffer == want.prio2buffer &&
         now.buffer->sizes == want.sizes;
}

nlohmann::json BuffersNow(const DcbState& now) {
  if (!now.buffer) return nullptr;
  return {{"prio2buffer", now.buffer->prio2buffer}, {"sizes", now.buffer->sizes}};
}

// The rdma_cm/<dev> directory a tos change makes first ("" for none).
std::string MkdirOf(const Change& c) {
  auto m = c.detail.find("mkdir");
  return m != c.detail.end() && m->is_string() ? m->get<std::string>() : std::string();
}

Status CheckChangeShape(const Change& c) {
  if (c.module != kRoceModule) return InvalidArgumentError("module roce cannot apply " + c.id);
  if (!IsValidIfname(c.target)) return InvalidArgumentError(c.id + ": bad interface name");
  if (c.attribute == kTrustAttribute) {
    if (c.after != kTrustDscp && c.after != kTrustPcp) {
      return InvalidArgumentError(c.id + ": trust must be \"dscp\" or \"pcp\", not " +
                                  c.after.dump());
    }
    return OkStatus();
  }
  if (c.attribute == kPfcAttribute) {
    bool ok = c.after.is_array();
    if (ok) {
      for (const auto& p : c.after) {
        ok = ok && p.is_number_integer() && p.get<long long>() >= 0 && p.get<long long>() <= 7;
      }
    }
    if (!ok) return InvalidArgumentError(c.id + ": pfc must be a list of priorities 0..7");
    return OkStatus();
  }
  if (ParseEcnAttribute(c.attribute)) {
    if (!c.after.is_boolean()) return InvalidArgumentError(c.id + ": ECN must be true or false");
    return OkStatus();
  }
  if (c.attribute == kDcbxAttribute) {
    if (c.after != kDcbxHost && c.after != kDcbxFirmware) {
      return InvalidArgumentError(c.id + ": dcbx must be \"host\" or \"firmware\", not " +
                                  c.after.dump());
    }
    return OkStatus();
  }
  if (c.attribute == kDscpMapAttribute) {
    bool ok = c.after.is_object() && !c.after.empty();
    if (ok) {
      for (const auto& [k, v] : c.after.items()) {
        const bool key = !k.empty() && k.size() <= 2 &&
                         k.find_first_not_of("0123456789") == std::string::npos &&
                         std::stoi(k) <= 63;
        ok = ok && key &&
             (v.is_null() ||
              (v.is_number_integer() && v.get<long long>() >= 0 && v.get<long long>() <= 7));
      }
    }
    if (!ok) {
      return InvalidArgumentError(c.id +
                                  ": dscpMap must map DSCPs 0..63 to priorities 0..7 (or null)");
    }
    return OkStatus();
  }
  if (c.attribute == kCableLengthAttribute) {
    if (!c.after.is_number_integer() || c.after.get<long long>() < 1 ||
        c.after.get<long long>() > 999) {
      return InvalidArgumentError(c.id + ": cableLength must be meters 1..999");
    }
    return OkStatus();
  }
  if (c.attribute == kBuffersAttribute) {
    if (!BufferOf(c.after)) {
      return InvalidArgumentError(c.id +
                                  ": buffers must be {\"prio2buffer\": [8 buffers 0..7], "
                                  "\"sizes\": [8 byte counts]}");
    }
    return OkStatus();
  }
  if (c.attribute == kPauseAttribute) {
    if (!c.after.is_object() || c.after.size() != 2 || !c.after.contains("rx") ||
        !c.after.contains("tx") || !c.after["rx"].is_boolean() || !c.after["tx"].is_boolean()) {
      return InvalidArgumentError(c.id + ": pause must be {\"rx\": bool, \"tx\": bool}");
    }
    return OkStatus();
  }
  if (c.attribute == kTosAttribute) {
    auto file = c.detail.find("file");
    if (file == c.detail.end() || !file->is_string() || !IsTosPath(file->get<std::string>())) {
      return InvalidArgumentError(c.id +
                                  ": detail.file must be a traffic_class or default_roce_tos path");
    }
    const std::string mkdir = MkdirOf(c);
    if (!mkdir.empty() &&
        (!IsRdmaCmDevicePath(mkdir) || file->get<std::string>().rfind(mkdir + "/ports/", 0) != 0)) {
      return InvalidArgumentError(c.id + ": detail.mkdir must be the rdma_cm directory of " +
                                  file->get<std::string>());
    }
    // null: unset traffic_class, or (rollback) remove the directory we made.
    const bool unset =
        file->get<std::string>().find("/traffic_class") != std::string::npos || !mkdir.empty();
    if (!(c.after.is_null() && unset) &&
        !(c.after.is_number_integer() && c.after.get<long long>() >= 0 &&
          c.after.get<long long>() <= 255)) {
      return InvalidArgumentError(c.id + ": tos must be an integer 0..255");
    }
    return OkStatus();
  }
  if (c.attribute == kCnpDscpAttribute || c.attribute == kCnpPriorityAttribute) {
    const long long max = c.attribute == kCnpDscpAttribute ? 63 : 7;
    if (!c.after.is_number_integer() || c.after.get<long long>() < 0 ||
        c.after.get<long long>() > max) {
      return InvalidArgumentError(c.id + ": must be an integer 0.." + std::to_string(max));
    }
    return OkStatus();
  }
  return InvalidArgumentError("module roce has no attribute " + c.attribute + " (" + c.id + ")");
}

// The ecn/roce_np file of a CNP attribute; nullptr for another attribute.
const char* CnpFile(const std::string& attribute) {
  if (attribute == kCnpDscpAttribute) return kCnpDscp;
  if (attribute == kCnpPriorityAttribute) return kCnpPrio;
  return nullptr;
}

std::vector<int> PfcOf(const Change& c) {
  std::vector<int> out;
  for (const auto& p : c.after) out.push_back(p.get<int>());
  return PrioritiesOfBitmap(BitmapOfPriorities(out));
}

std::map<int, std::optional<int>> DscpMapOf(const nlohmann::json& j) {
  std::map<int, std::optional<int>> out;
  for (const auto& [k, v] : j.items()) {
    out[std::stoi(k)] = v.is_null() ? std::nullopt : std::optional<int>(v.get<int>());
  }
  return out;
}

// The entries of `want` the state does not hold yet.
std::map<int, std::optional<int>> DscpMapDiff(const std::map<int, std::optional<int>>& want,
                                              const DcbState& now) {
  std::map<int, std::optional<int>> out;
  for (const auto& [d, p] : want) {
    auto it = now.dscp_map.find(d);
    const std::optional<int> cur =
        it == now.dscp_map.end() ? std::nullopt : std::optional<int>(it->second);
    if (cur != p) out[d] = p;
  }
  return out;
}

// mlx5 sizes the lossless buffers' xoff from the cable length only in
// manual buffer mode (en_dcbnl.c: mlx5e_dcbnl_ieee_setpfc calls
// mlx5e_port_manual_buffer_config only with priv->dcbx.manual_buffer),
// which a buffer write that changes something sets and every driver load
// clears; an unchanged write returns before it (mlx5e_dcbnl_setbuffer).
// So after a cable length: the port's buffers again, one of them a cell
// off and then as they were. The cell comes off a lossy buffer that has
// one (no xoff to hold), else goes onto an unused buffer, else onto the
// first buffer (the driver refuses it past the port's capacity).
Status ResendBuffers(DcbBackend& dcb, const std::string& ifname) {
  ASSIGN_OR_RETURN(DcbState now, dcb.Read(ifname));
  if (!now.buffer) return OkStatus();  // no port buffer support: nothing to size
  const DcbBuffer as_is = *now.buffer;
  const unsigned pfc = BitmapOfPriorities(now.pfc);
  auto lossless = [&](int b) {
    for (int p = 0; p < 8; ++p) {
      if (as_is.prio2buffer[static_cast<size_t>(p)] == b && ((pfc >> p) & 1U)) return true;
    }
    return false;
  };
  auto mapped = [&](int b) {
    return std::find(as_is.prio2buffer.begin(), as_is.prio2buffer.end(), b) !=
           as_is.prio2buffer.end();
  };
  DcbBuffer nudged = as_is;
  int b = 0;
  for (; b < 8; ++b) {
    if (!lossless(b) && as_is.sizes[static_cast<size_t>(b)] >= kBufferCellBytes) break;
  }
  if (b < 8) {
    nudged.sizes[static_cast<size_t>(b)] -= kBufferCellBytes;
  } else {
    for (b = 0; b < 8 && mapped(b); ++b) {
    }
    nudged.sizes[static_cast<size_t>(b < 8 ? b : 0)] += kBufferCellBytes;
  }
  const std::string why =
      "re-send the port buffers of " + ifname +
      " (one cell off and back) so that mlx5, in manual buffer mode, sizes xoff for the cable";
  RETURN_IF_ERROR(dcb.SetBuffer(ifname, nudged).WithContext(why));
  return dcb.SetBuffer(ifname, as_is).WithContext(why);
}

std::optional<int> TosOf(const Change& c) {
  return c.after.is_null() ? std::nullopt : std::optional<int>(c.after.get<int>());
}

std::string TosText(std::optional<int> t) { return t ? std::to_string(*t) : "unset"; }

}  // namespace

Status RoceModule::Discover(HostContext& ctx, HostFacts& facts) {
  facts.roce = RoceFacts();
  facts.roce.discovered = true;
  if (ctx.plan_for != nullptr && !WantsRoce(*ctx.plan_for)) return OkStatus();
  HostFs& fs = *ctx.fs;
  std::unique_ptr<DcbBackend> dcb = options_.dcb(fs);
  std::unique_ptr<PauseBackend> pause = options_.pause(fs);
  // Each PF netdev's RDMA device port (RoCE: the port whose netdev it is).
  std::map<std::string, std::pair<std::string, int>> rdma_port;
  for (const RdmaDevice& d : facts.rdma.devices) {
    if (d.is_vf) continue;
    for (const RdmaPort& p : d.ports) {
      if (!p.netdev.empty()) rdma_port.emplace(p.netdev, std::make_pair(d.name, p.port));
    }
  }
  for (const PciFunction& f : facts.pci) {
    if (f.IsVf() || !f.IsNetwork()) continue;
    for (const std::string& ifname : f.netdevs) {
      if (!IsValidIfname(ifname)) continue;
      RoceNetdevFacts n;
      auto state = dcb->Read(ifname);
      if (state.ok()) {
        n.trust = state->trust;
        n.pfc = state->pfc;
        n.dscp_map = state->dscp_map;
        n.dcbx = state->dcbx;
        n.cable_length = state->cable_length;
        if (state->buffer) {
          n.prio2buffer = state->buffer->prio2buffer;
          n.buffer_sizes = state->buffer->sizes;
          n.buffer_total = state->buffer->total;
          n.buffer_internal = state->buffer->internal;
        }
      } else {
        n.dcb_error = state.status().message();
        spdlog::debug("roce {} ({}): {}", ifname, dcb->Name(), n.dcb_error);
      }
      if (auto p = pause->Read(ifname); p.ok()) {
        n.pause_rx = p->rx;
        n.pause_tx = p->tx;
      } else {
        n.pause_error = p.status().message();
      }
      // While planning the rdma module may have read no ports: then the
      // PF's one RDMA device and its one port (mlx5: a device per PF).
      if (rdma_port.count(ifname) == 0 && f.rdma_devices.size() == 1 &&
          IsValidIfname(f.rdma_devices[0])) {
        auto ports = fs.ListDir("/sys/class/infiniband/" + f.rdma_devices[0] + "/ports");
        if (ports.ok() && ports->size() == 1 && TrafficClass((*ports)[0])) {
          rdma_port.emplace(ifname,
                            std::make_pair(f.rdma_devices[0], std::atoi((*ports)[0].c_str())));
        }
      }
      if (auto rp = rdma_port.find(ifname); rp != rdma_port.end()) {
        n.tos_file = TosFile(fs, rp->second.first, rp->second.second);
        n.tos_mkdir = RdmaCmDirToMake(fs, n.tos_file);
        if (!n.tos_file.empty() && n.tos_mkdir.empty()) {
          auto tos = ReadTos(fs, n.tos_file);
          if (tos.ok()) {
            n.tos = *tos;
          } else {
            n.tos_error = tos.status().message();
          }
        }
      }
      n.ecn_dir = HasEcn(fs, ifname);
      if (n.ecn_dir) {
        auto np = ReadEcn(fs, ifname, kEcnNp);
        auto rp = ReadEcn(fs, ifname, kEcnRp);
        auto dscp = ReadCnp(fs, ifname, kCnpDscp);
        auto prio = ReadCnp(fs, ifname, kCnpPrio);
        if (np.ok() && rp.ok() && dscp.ok() && prio.ok()) {
          n.ecn_np = *np;
          n.ecn_rp = *rp;
          n.cnp_dscp = *dscp;
          n.cnp_802p_prio = *prio;
        } else {
          for (const Status* s : {&np.status(), &rp.status(), &dscp.status(), &prio.status()}) {
            if (!s->ok() && n.ecn_error.empty()) n.ecn_error = s->message();
          }
        }
      }
      facts.roce.netdevs[ifname] = std::move(n);
    }
  }
  if (ctx.plan_for != nullptr) return OkStatus();  // the rest is doctor's evidence
  const char* env = options_.nccl_ib_tc_env ? options_.nccl_ib_tc_env() : std::getenv("NCCL_IB_TC");
  if (env != nullptr && TrafficClass(env)) {
    facts.roce.nccl_ib_tc = TrafficClass(env);
    facts.roce.nccl_ib_tc_source = "environment";
  } else if (auto conf = fs.ReadFile(kNcclConf); conf.ok()) {
    auto v = NcclConfValue(*conf, "NCCL_IB_TC");
    if (v && TrafficClass(*v)) {
      facts.roce.nccl_ib_tc = TrafficClass(*v);
      facts.roce.nccl_ib_tc_source = kNcclConf;
    }
  }
  return OkStatus();
}

void RoceModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanByPciResource(PlanRoce, desired, facts, sink);
}

Status RoceModule::Apply(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  const std::string& ifname = change.target;
  if (auto ecn = ParseEcnAttribute(change.attribute)) {
    const bool want = change.after.get<bool>();
    ASSIGN_OR_RETURN(bool now, ReadEcnOne(*ctx.fs, ifname, ecn->point, ecn->prio));
    if (now == want) return OkStatus();  // a re-run, or a rollback of a refused write
    if (ctx.progress) ctx.progress->Step(ifname + " ECN " + change.attribute);
    return WriteEcn(*ctx.fs, ifname, ecn->point, ecn->prio, want);
  }
  if (const char* file = CnpFile(change.attribute)) {
    const int want = change.after.get<int>();
    ASSIGN_OR_RETURN(std::optional<int> now, ReadCnp(*ctx.fs, ifname, file));
    if (now == want) return OkStatus();
    if (ctx.progress) ctx.progress->Step(ifname + " " + file + " " + std::to_string(want));
    return WriteCnp(*ctx.fs, ifname, file, want);
  }
  if (change.attribute == kTosAttribute) {
    const std::string file = change.detail["file"].get<std::string>();
    // rdma_cm/<dev> made for this change (plan found it absent): made when
    // still absent; its rollback (after null) removes it again.
    if (const std::string dir = MkdirOf(change); !dir.empty()) {
      const std::string dev(Basename(dir));
      if (change.after.is_null()) {
        if (!ctx.fs->Exists(dir)) return OkStatus();
        if (ctx.progress) ctx.progress->Step("remove " + dir);
        return NewRdmaCmConfigfs(*ctx.fs)->RemoveDevice(dev).WithContext("apply " + change.id);
      }
      if (!ctx.fs->Exists(dir)) {
        if (ctx.progress) ctx.progress->Step("mkdir " + dir);
        RETURN_IF_ERROR(
            NewRdmaCmConfigfs(*ctx.fs)->MakeDevice(dev).WithContext("apply " + change.id));
      }
    }
    ASSIGN_OR_RETURN(std::optional<int> now, ReadTos(*ctx.fs, file));
    if (now == TosOf(change)) return OkStatus();
    if (ctx.progress) ctx.progress->Step(ifname + " RoCE ToS " + TosText(TosOf(change)));
    return WriteTos(*ctx.fs, file, TosOf(change)).WithContext("apply " + change.id);
  }
  if (change.attribute == kPauseAttribute) {
    std::unique_ptr<PauseBackend> pause = options_.pause(*ctx.fs);
    const PauseState want{change.after["rx"].get<bool>(), change.after["tx"].get<bool>()};
    ASSIGN_OR_RETURN(PauseState now, pause->Read(ifname));
    if (now.rx == want.rx && now.tx == want.tx) return OkStatus();
    if (ctx.progress) ctx.progress->Step(ifname + " pause " + change.after.dump());
    return pause->Set(ifname, want).WithContext("apply " + change.id);
  }
  std::unique_ptr<DcbBackend> dcb = options_.dcb(*ctx.fs);
  ASSIGN_OR_RETURN(DcbState now, dcb->Read(ifname));
  if (change.attribute == kDcbxAttribute) {
    const std::string want = change.after.get<std::string>();
    if (now.dcbx == want) return OkStatus();
    if (ctx.progress) ctx.progress->Step(ifname + " DCBX " + want);
    return dcb->SetDcbx(ifname, want).WithContext("apply " + change.id);
  }
  if (change.attribute == kCableLengthAttribute) {
    const int want = change.after.get<int>();
    if (now.cable_length == want && now.xoff_cable_length.value_or(want) == want) {
      return OkStatus();
    }
    if (ctx.progress) ctx.progress->Step(ifname + " cable length " + std::to_string(want) + " m");
    RETURN_IF_ERROR(dcb->SetCableLength(ifname, want).WithContext("apply " + change.id));
    return ResendBuffers(*dcb, ifname).WithContext("apply " + change.id);
  }
  if (change.attribute == kBuffersAttribute) {
    DcbBuffer want = *BufferOf(change.after);
    if (SameBuffers(now, want)) return OkStatus();
    if (now.buffer) want.total = now.buffer->total;
    if (ctx.progress) ctx.progress->Step(ifname + " port buffers " + change.after.dump());
    Status s = dcb->SetBuffer(ifname, want);
    // mlx5 checks a new prio2buffer against the sizes the port has before
    // it takes the new sizes (update_buffer_lossy runs first in
    // mlx5e_port_manual_buffer_config): a PFC priority moved to a buffer
    // that is empty now is ENOMEM, with nothing changed. Then the sizes
    // first under the current mapping, and the mapping after them.
    if (s.err() == ENOMEM && now.buffer && now.buffer->prio2buffer != want.prio2buffer &&
        now.buffer->sizes != want.sizes) {
      DcbBuffer sizes_first = *now.buffer;
      sizes_first.sizes = want.sizes;
      if (dcb->SetBuffer(ifname, sizes_first).ok()) s = dcb->SetBuffer(ifname, want);
    }
    return s.WithContext("apply " + change.id);
  }
  if (change.attribute == kDscpMapAttribute) {
    const auto diff = DscpMapDiff(DscpMapOf(change.after), now);
    if (diff.empty()) return OkStatus();
    if (ctx.progress) ctx.progress->Step(ifname + " DSCP map " + change.after.dump());
    return dcb->SetDscpMap(ifname, diff).WithContext("apply " + change.id);
  }
  if (change.attribute == kTrustAttribute) {
    const std::string want = change.after.get<std::string>();
    if (now.trust == want) return OkStatus();
    if (ctx.progress) ctx.progress->Step(ifname + " trust " + want);
    return dcb->SetTrust(ifname, want).WithContext("apply " + change.id);
  }
  const std::vector<int> want = PfcOf(change);
  if (now.pfc == want) return OkStatus();
  if (ctx.progress) ctx.progress->Step(ifname + " PFC " + PriorityList(want));
  return dcb->SetPfc(ifname, want).WithContext("apply " + change.id);
}

Status RoceModule::CheckChange(const Change& change) const { return CheckChangeShape(change); }

Status RoceModule::Verify(const Change& change, HostContext& ctx) {
  RETURN_IF_ERROR(CheckChange(change));
  const std::string& ifname = change.target;
  const std::string label = (change.field_path.empty() ? change.id : change.field_path) + " (" +
                            ifname + " " + change.attribute + ")";
  if (auto ecn = ParseEcnAttribute(change.attribute)) {
    ASSIGN_OR_RETURN(bool now, ReadEcnOne(*ctx.fs, ifname, ecn->point, ecn->prio));
    if (now == change.after.get<bool>()) return OkStatus();
    return FailedPreconditionError(label + ": desired " + change.after.dump() + ", current " +
                                   (now ? "true" : "false"));
  }
  if (const char* file = CnpFile(change.attribute)) {
    ASSIGN_OR_RETURN(std::optional<int> now, ReadCnp(*ctx.fs, ifname, file));
    if (now == change.after.get<int>()) return OkStatus();
    return FailedPreconditionError(label + ": desired " + change.after.dump() + ", current " +
                                   (now ? std::to_string(*now) : "absent"));
  }
  if (change.attribute == kTosAttribute) {
    if (const std::string dir = MkdirOf(change); !dir.empty() && change.after.is_null()) {
      if (!ctx.fs->Exists(dir)) return OkStatus();
      return FailedPreconditionError(label + ": " + dir + " is still there");
    }
    ASSIGN_OR_RETURN(std::optional<int> now,
                     ReadTos(*ctx.fs, change.detail["file"].get<std::string>()));
    if (now == TosOf(change)) return OkStatus();
    return FailedPreconditionError(label + ": desired " + TosText(TosOf(change)) + ", current " +
                                   TosText(now));
  }
  if (change.attribute == kPauseAttribute) {
    ASSIGN_OR_RETURN(PauseState now, options_.pause(*ctx.fs)->Read(ifname));
    const nlohmann::json got = {{"rx", now.rx}, {"tx", now.tx}};
    if (got == change.after) return OkStatus();
    return FailedPreconditionError(label + ": desired " + change.after.dump() + ", current " +
                                   got.dump());
  }
  ASSIGN_OR_RETURN(DcbState now, options_.dcb(*ctx.fs)->Read(ifname));
  if (change.attribute == kDcbxAttribute) {
    if (now.dcbx == change.after.get<std::string>()) return OkStatus();
    return FailedPreconditionError(label + ": desired " + change.after.get<std::string>() +
                                   ", current " + now.dcbx.value_or("unknown"));
  }
  if (change.attribute == kCableLengthAttribute) {
    const int want = change.after.get<int>();
    if (now.cable_length == want && now.xoff_cable_length && *now.xoff_cable_length != want) {
      return FailedPreconditionError(
          label + ": desired " + change.after.dump() + " m, current " + change.after.dump() +
          " m in the driver but the lossless buffers' xoff still sized for " +
          std::to_string(*now.xoff_cable_length) + " m (mlx5 not in manual buffer mode)");
    }
    if (now.cable_length == want) return OkStatus();
    return FailedPreconditionError(
        label + ": desired " + change.after.dump() + " m, current " +
        (now.cable_length ? std::to_string(*now.cable_length) + " m" : "none reported"));
  }
  if (change.attribute == kBuffersAttribute) {
    if (SameBuffers(now, *BufferOf(change.after))) return OkStatus();
    return FailedPreconditionError(label + ": desired " + change.after.dump() + ", current " +
                                   BuffersNow(now).dump());
  }
  if (change.attribute == kDscpMapAttribute) {
    const auto diff = DscpMapDiff(DscpMapOf(change.after), now);
    if (diff.empty()) return OkStatus();
    nlohmann::json cur = nlohmann::json::object();
    for (const auto& [d, p] : diff) {
      auto it = now.dscp_map.find(d);
      cur[std::to_string(d)] =
          it == now.dscp_map.end() ? nlohmann::json(nullptr) : nlohmann::json(it->second);
    }
    return FailedPreconditionError(label + ": desired " + change.after.dump() + ", current " +
                                   cur.dump());
  }
  if (change.attribute == kTrustAttribute) {
    if (now.trust == change.after.get<std::string>()) return OkStatus();
    return FailedPreconditionError(label + ": desired " + change.after.get<std::string>() +
                                   ", current " + now.trust);
  }
  if (now.pfc == PfcOf(change)) return OkStatus();
  return FailedPreconditionError(label + ": desired " + PriorityList(PfcOf(change)) + ", current " +
                                 PriorityList(now.pfc));
}

void RoceModule::Check(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) const {
  CheckRoce(desired, facts, sink);
}

// After pci (the PF netdevs), rdma (which ports are RoCE, for doctor) and
// link (the netdevs' own settings come first in discover's output too).
PROVISIONER_REGISTER_MODULE("roce", RoceModule, "pci", "rdma", "link")

}  // namespace provisioner
