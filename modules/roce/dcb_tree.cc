// The capture format and the tree backend of roce_backend.h.
#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "engine/host/capture_file.h"
#include "modules/link/link_backend.h"
#include "modules/roce/roce_backend.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

using nlohmann::json;

class TreeDcb final : public DcbBackend {
 public:
  explicit TreeDcb(HostFs& fs) : fs_(fs) {}
  std::string Name() const override { return "capture"; }

  StatusOr<DcbState> Read(const std::string& ifname) override {
    RETURN_IF_ERROR(CheckNetdevInTree(fs_, ifname));
    return ReadParsedCapture(fs_, DcbCapturePath(ifname), "DCB state of " + ifname,
                             "provisioner snapshot writes it from dcbnl", ParseDcbCapture);
  }

  // As mlx5 does: trust dscp installs the default map, trust pcp deletes
  // every DSCP entry.
  Status SetTrust(const std::string& ifname, const std::string& trust) override {
    ASSIGN_OR_RETURN(DcbState s, Read(ifname));
    if (s.trust == trust) return OkStatus();
    s.trust = trust;
    s.dscp_map.clear();
    if (trust == kTrustDscp) {
      for (int d = 0; d < 64; ++d) s.dscp_map[d] = DefaultDscpPriority(d);
    }
    return Write(ifname, s);
  }

  // mlx5 replaces a DSCP's entry (mlx5e_dcbnl_ieee_setapp deletes the old
  // one) and is in trust dscp while any DSCP entry exists; the capture keeps
  // only the differences from the default map, so a deleted entry reads as
  // the default again.
  Status SetDscpMap(const std::string& ifname,
                    const std::map<int, std::optional<int>>& entries) override {
    ASSIGN_OR_RETURN(DcbState s, Read(ifname));
    if (s.trust != kTrustDscp) {
      s.trust = kTrustDscp;
      for (int d = 0; d < 64; ++d) s.dscp_map[d] = DefaultDscpPriority(d);
    }
    for (const auto& [d, p] : entries) {
      if (d < 0 || d > 63 || (p && (*p < 0 || *p > 7))) {
        return InvalidArgumentError("DSCP " + std::to_string(d) + " -> priority out of range");
      }
      s.dscp_map[d] = p.value_or(DefaultDscpPriority(d));
    }
    return Write(ifname, s);
  }

  Status SetDcbx(const std::string& ifname, const std::string& mode) override {
    if (mode != kDcbxHost && mode != kDcbxFirmware) {
      return InvalidArgumentError("dcbx must be host or firmware, not " + mode);
    }
    ASSIGN_OR_RETURN(DcbState s, Read(ifname));
    s.dcbx = mode;
    return Write(ifname, s);
  }

  // mlx5 with a port buffer: a buffer that becomes lossless must hold the
  // xoff threshold (update_buffer_lossy -> update_xoff_threshold: ENOMEM).
  Status SetPfc(const std::string& ifname, const std::vector<int>& priorities) override {
    ASSIGN_OR_RETURN(DcbState s, Read(ifname));
    s.pfc = PrioritiesOfBitmap(BitmapOfPriorities(priorities));
    if (s.buffer) RETURN_IF_ERROR(CheckXoff(ifname, s, "PFC"));
    return Write(ifname, s);
  }

  // mlx5e_dcbnl_ieee_setpfc: a delay of 0 or >= MLX5E_MAX_CABLE_LENGTH
  // (1000) is ignored; without port buffer support the driver keeps it but
  // reports none; else the lossless buffers must hold the new xoff.
  Status SetCableLength(const std::string& ifname, int meters) override {
    ASSIGN_OR_RETURN(DcbState s, Read(ifname));
    if (meters <= 0 || meters >= kMaxCableLength || !s.buffer) return OkStatus();
    s.cable_length = meters;
    // Outside manual buffer mode the driver keeps the length and changes
    // nothing in the port (mlx5e_dcbnl_ieee_setpfc calls
    // mlx5e_port_manual_buffer_config only with manual_buffer set).
    if (s.manual_buffer) {
      RETURN_IF_ERROR(CheckXoff(ifname, s, "cable length " + std::to_string(meters) + " m"));
      s.xoff_cable_length = meters;
    }
    return Write(ifname, s);
  }

  // dcbnl_ieee_set (a prio2buffer entry >= DCBX_MAX_BUFFERS: EINVAL) and
  // mlx5e_dcbnl_setbuffer / mlx5e_port_manual_buffer_config: no buffer
  // support EOPNOTSUPP; a lossless buffer of size 0 EINVAL; more than the
  // port buffer EINVAL; a lossless buffer below xoff + max MTU + a cell
  // ENOMEM. Nothing changes when it refuses.
  Status SetBuffer(const std::string& ifname, const DcbBuffer& buffer) override {
    ASSIGN_OR_RETURN(DcbState s, Read(ifname));
    const std::string where = "dcbnl DCB_ATTR_DCB_BUFFER " + ifname;
    if (buffer.prio2buffer.size() != 8 || buffer.sizes.size() != 8) {
      return InvalidArgumentError(where + ": prio2buffer and sizes must have 8 entries");
    }
    for (int b : buffer.prio2buffer) {
      if (b < 0 || b >= 8) return ErrnoToStatus(EINVAL, where + ": buffer " + std::to_string(b));
    }
    if (!s.buffer) {
      return Status(StatusCode::kFailedPrecondition,
                    where + ": EOPNOTSUPP: the driver has no port buffer support", EOPNOTSUPP);
    }
    // In mlx5's order: the new mapping first, checked against the sizes the
    // port has now (update_buffer_lossy, when a buffer's lossy bit flips),
    // then the sizes against the new mapping.
    DcbState next = s;
    next.buffer->prio2buffer = buffer.prio2buffer;
    const unsigned pfc = BitmapOfPriorities(s.pfc);
    bool flips = false;
    for (int b = 0; b < 8; ++b) {
      flips = flips ||
              Lossless(s.buffer->prio2buffer, pfc, b) != Lossless(next.buffer->prio2buffer, pfc, b);
    }
    if (flips) RETURN_IF_ERROR(CheckXoff(ifname, next, "prio2buffer"));
    const bool sizes_change = buffer.sizes != s.buffer->sizes;
    // mlx5e_dcbnl_setbuffer: an unchanged write returns before manual mode.
    if (!sizes_change && buffer.prio2buffer == s.buffer->prio2buffer) return OkStatus();
    if (sizes_change) {
      long long used = 0;
      for (int b = 0; b < 8; ++b) {
        if (Lossless(next.buffer->prio2buffer, pfc, b) && buffer.sizes[b] == 0) {
          return ErrnoToStatus(
              EINVAL, where + ": lossless buffer " + std::to_string(b) + " size cannot be zero");
        }
        used += buffer.sizes[b];
      }
      // The spare buffer (port_buffer_size - internal - headroom) and the 4
      // cells port_update_shared_buffer keeps shared.
      const long long usable = s.buffer->total - s.buffer->internal;
      long long cells = 0;
      for (long long z : buffer.sizes) cells += z / kBufferCellBytes;
      if (used > usable || cells > usable / kBufferCellBytes - 4) {
        return ErrnoToStatus(
            EINVAL, where + ": " + std::to_string(used) + " bytes requested, the port buffer has " +
                        std::to_string(s.buffer->total) + " (" +
                        std::to_string(s.buffer->internal) + " internal) and keeps 4 cells shared");
      }
      next.buffer->sizes = buffer.sizes;
      RETURN_IF_ERROR(CheckXoff(ifname, next, "buffer sizes"));
      // port_set_buffer divides by port_buff_cell_sz: the rest is lost.
      for (long long& z : next.buffer->sizes) z = z / kBufferCellBytes * kBufferCellBytes;
    }
    next.manual_buffer = true;
    next.xoff_cable_length = next.cable_length.value_or(kDefaultCableLength);
    return Write(ifname, next);
  }

 private:
  static constexpr int kMaxCableLength = 1000;   // MLX5E_MAX_CABLE_LENGTH
  static constexpr int kDefaultCableLength = 7;  // MLX5E_DEFAULT_CABLE_LEN

  // A buffer is lossless when a PFC-enabled priority lands in it.
  static bool Lossless(const std::vector<int>& prio2buffer, unsigned pfc, int b) {
    for (int p = 0; p < 8; ++p) {
      if (prio2buffer[static_cast<size_t>(p)] == b && ((pfc >> p) & 1U)) return true;
    }
    return false;
  }

  // calculate_xoff and update_xoff_threshold of mlx5's port_buffer.c:
  // xoff = (301 + 2.16 * cable m) * Gb/s (at least 40) + 2.72 * MTU bytes;
  // a lossless buffer needs xoff + max(max_mtu, 9216) + one cell (mlx5's
  // max_mtu 9978, cells of 128 bytes). Speed and MTU from the tree's
  // /sys/class/net/<if>/{speed,mtu} (absent: 40 Gb/s, 1500).
  Status CheckXoff(const std::string& ifname, const DcbState& s, const std::string& what) const {
    long long speed = 40000;
    long long mtu = 1500;
    if (auto t = fs_.ReadFile("/sys/class/net/" + ifname + "/speed"); t.ok()) {
      speed = std::max(speed, std::atoll(t->c_str()));
    }
    if (auto t = fs_.ReadFile("/sys/class/net/" + ifname + "/mtu");
        t.ok() && std::atoll(t->c_str()) > 0) {
      mtu = std::atoll(t->c_str());
    }
    const long long cable = s.cable_length.value_or(kDefaultCableLength);
    const long long xoff = (301 + 216 * cable / 100) * speed / 1000 + 272 * mtu / 100;
    const long long need = xoff + 9978 + 128;
    const unsigned pfc = BitmapOfPriorities(s.pfc);
    for (int b = 0; b < 8; ++b) {
      if (!Lossless(s.buffer->prio2buffer, pfc, b)) continue;
      if (s.buffer->sizes[static_cast<size_t>(b)] < need) {
        return ErrnoToStatus(
            ENOMEM, "set " + what + " of " + ifname + ": lossless buffer " + std::to_string(b) +
                        " of " + std::to_string(s.buffer->sizes[static_cast<size_t>(b)]) +
                        " bytes is not enough for xoff " + std::to_string(xoff) + " (cable " +
                        std::to_string(cable) + " m) + MTU: " + std::to_string(need) + " needed");
      }
    }
    return OkStatus();
  }

  Status Write(const std::string& ifname, const DcbState& s) {
    return fs_.WriteFileAtomic(DcbCapturePath(ifname), RenderDcbCapture(s))
        .WithContext("set DCB of " + ifname);
  }

  HostFs& fs_;
};

}  // namespace

std::string DcbCapturePath(const std::string& ifname) { return "/run/provisioner/dcb/" + ifname; }

std::string RenderDcbCapture(const DcbState& s) {
  json j = {{"trust", s.trust}, {"pfc", PrioritiesOfBitmap(BitmapOfPriorities(s.pfc))}};
  if (s.dcbx) j["dcbx"] = *s.dcbx;
  if (s.trust == kTrustDscp) {
    json diff = json::object();
    for (const auto& [d, p] : s.dscp_map) {
      if (p != DefaultDscpPriority(d)) diff[std::to_string(d)] = p;
    }
    if (!diff.empty()) j["dscpMap"] = diff;
  }
  if (s.cable_length) j["cableLength"] = *s.cable_length;
  if (s.buffer) {
    j["buffer"] = {{"prio2buffer", s.buffer->prio2buffer},
                   {"sizes", s.buffer->sizes},
                   {"total", s.buffer->total}};
    if (s.buffer->internal > 0) j["buffer"]["internal"] = s.buffer->internal;
  }
  if (s.manual_buffer) j["manualBuffer"] = true;
  if (s.xoff_cable_length) j["xoffCableLength"] = *s.xoff_cable_length;
  return j.dump() + "\n";
}

StatusOr<DcbState> ParseDcbCapture(const std::string& text) {
  ASSIGN_OR_RETURN(json j,
                   ParseCaptureObject(text, "DCB", "{\"trust\":\"dscp\"|\"pcp\",\"pfc\":[...]}",
                                      {"trust", "pfc", "dcbx", "dscpMap", "cableLength", "buffer",
                                       "manualBuffer", "xoffCableLength"}));
  DcbState s;
  auto trust = j.find("trust");
  if (trust == j.end() || !trust->is_string() || (*trust != kTrustDscp && *trust != kTrustPcp)) {
    return InvalidArgumentError("\"trust\" must be \"dscp\" or \"pcp\"");
  }
  s.trust = trust->get<std::string>();
  auto pfc = j.find("pfc");
  if (pfc == j.end() || !pfc->is_array()) return InvalidArgumentError("\"pfc\" must be a list");
  unsigned bitmap = 0;
  for (const auto& p : *pfc) {
    if (!p.is_number_integer() || p.get<long long>() < 0 || p.get<long long>() > 7) {
      return InvalidArgumentError("\"pfc\" holds " + p.dump() + ", not a priority 0..7");
    }
    bitmap |= 1U << p.get<int>();
  }
  s.pfc = PrioritiesOfBitmap(bitmap);
  if (auto dcbx = j.find("dcbx"); dcbx != j.end()) {
    if (!dcbx->is_string() || (*dcbx != kDcbxHost && *dcbx != kDcbxFirmware && *dcbx != kDcbxLld)) {
      return InvalidArgumentError("\"dcbx\" must be \"host\", \"firmware\" or \"lld\"");
    }
    s.dcbx = dcbx->get<std::string>();
  }
  if (s.trust == kTrustDscp) {
    for (int d = 0; d < 64; ++d) s.dscp_map[d] = DefaultDscpPriority(d);
  }
  if (auto map = j.find("dscpMap"); map != j.end()) {
    if (!map->is_object() || s.trust != kTrustDscp) {
      return InvalidArgumentError(
          "\"dscpMap\" must be an object {\"<dscp>\": <priority>} beside "
          "\"trust\":\"dscp\"");
    }
    for (const auto& [key, v] : map->items()) {
      const bool digits = !key.empty() && key.size() <= 2 &&
                          key.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::stoi(key) > 63 || !v.is_number_integer() || v.get<long long>() < 0 ||
          v.get<long long>() > 7) {
        return InvalidArgumentError("\"dscpMap\" entry \"" + key + "\": " + v.dump() +
                                    " is not DSCP 0..63 -> priority 0..7");
      }
      s.dscp_map[std::stoi(key)] = v.get<int>();
    }
  }
  if (auto cable = j.find("cableLength"); cable != j.end()) {
    if (!cable->is_number_integer() || cable->get<long long>() < 1 ||
        cable->get<long long>() > 65535) {
      return InvalidArgumentError("\"cableLength\" must be meters 1..65535 (ieee_pfc.delay)");
    }
    s.cable_length = cable->get<int>();
  }
  if (auto buf = j.find("buffer"); buf != j.end()) {
    const char* shape =
        "\"buffer\" must be {\"prio2buffer\":[8 buffers 0..7],\"sizes\":[8 byte counts],"
        "\"total\":<bytes>[,\"internal\":<bytes>]}";
    const size_t keys = buf->is_object() && buf->contains("internal") ? 4 : 3;
    if (!buf->is_object() || buf->size() != keys || !buf->contains("prio2buffer") ||
        !buf->contains("sizes") || !buf->contains("total")) {
      return InvalidArgumentError(shape);
    }
    const json& p2b = (*buf)["prio2buffer"];
    const json& sizes = (*buf)["sizes"];
    const json& total = (*buf)["total"];
    auto u32 = [](const json& v) {
      return v.is_number_integer() && v.get<long long>() >= 0 && v.get<long long>() <= 0xffffffffLL;
    };
    if (!p2b.is_array() || p2b.size() != 8 || !sizes.is_array() || sizes.size() != 8 ||
        !u32(total)) {
      return InvalidArgumentError(shape);
    }
    DcbBuffer b;
    b.total = total.get<long long>();
    if (keys == 4) {
      const json& internal = (*buf)["internal"];
      if (!u32(internal) || internal.get<long long>() > b.total) {
        return InvalidArgumentError("\"buffer\".\"internal\" must be bytes 0..total");
      }
      b.internal = internal.get<long long>();
    }
    for (size_t i = 0; i < 8; ++i) {
      if (!p2b[i].is_number_integer() || p2b[i].get<long long>() < 0 ||
          p2b[i].get<long long>() > 7 || !u32(sizes[i])) {
        return InvalidArgumentError(shape);
      }
      b.prio2buffer[i] = p2b[i].get<int>();
      b.sizes[i] = sizes[i].get<long long>();
    }
    s.buffer = b;
  }
  if (auto m = j.find("manualBuffer"); m != j.end()) {
    if (!m->is_boolean()) return InvalidArgumentError("\"manualBuffer\" must be true or false");
    s.manual_buffer = m->get<bool>();
  }
  if (auto x = j.find("xoffCableLength"); x != j.end()) {
    if (!x->is_number_integer() || x->get<long long>() < 1 || x->get<long long>() > 65535) {
      return InvalidArgumentError("\"xoffCableLength\" must be meters 1..65535");
    }
    s.xoff_cable_length = x->get<int>();
  }
  return s;
}

std::vector<int> PrioritiesOfBitmap(unsigned bitmap) {
  std::vector<int> out;
  for (int p = 0; p < 8; ++p) {
    if ((bitmap >> p) & 1U) out.push_back(p);
  }
  return out;
}

unsigned BitmapOfPriorities(const std::vector<int>& priorities) {
  unsigned bitmap = 0;
  for (int p : priorities) {
    if (p >= 0 && p < 8) bitmap |= 1U << p;
  }
  return bitmap;
}

std::unique_ptr<DcbBackend> NewTreeDcbBackend(HostFs& fs) { return std::make_unique<TreeDcb>(fs); }

}  // namespace provisioner
