// The capture format and the tree backend of roce_backend.h.
#include <cerrno>

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
    RETURN_IF_ERROR(CheckNetdev(ifname));
    auto text = fs_.ReadFile(DcbCapturePath(ifname));
    if (!text.ok()) {
      if (text.status().err() == ENOENT) {
        // A host without DCB support answers EOPNOTSUPP live: a tree without
        // the capture says as much, and how to make one.
        return Status(StatusCode::kFailedPrecondition,
                      DcbCapturePath(ifname) + ": ENOENT: DCB state of " + ifname +
                          " not captured (provisioner snapshot writes it from dcbnl)",
                      ENOENT);
      }
      return text.status();
    }
    auto parsed = ParseDcbCapture(*text);
    if (!parsed.ok()) return parsed.status().WithContext(DcbCapturePath(ifname));
    return parsed;
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

  Status SetPfc(const std::string& ifname, const std::vector<int>& priorities) override {
    ASSIGN_OR_RETURN(DcbState s, Read(ifname));
    s.pfc = PrioritiesOfBitmap(BitmapOfPriorities(priorities));
    return Write(ifname, s);
  }

 private:
  Status CheckNetdev(const std::string& ifname) const {
    if (!IsValidIfname(ifname)) return InvalidArgumentError("bad interface name " + ifname);
    if (!fs_.Exists("/sys/class/net/" + ifname)) {
      return Status(StatusCode::kNotFound, "/sys/class/net/" + ifname + ": ENODEV: no such netdev",
                    ENODEV);
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
  return j.dump() + "\n";
}

StatusOr<DcbState> ParseDcbCapture(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError(
        "not a DCB capture: expected {\"trust\":\"dscp\"|\"pcp\",\"pfc\":[...]}");
  }
  for (const auto& [key, v] : j.items()) {
    (void)v;
    if (key != "trust" && key != "pfc" && key != "dcbx" && key != "dscpMap") {
      return InvalidArgumentError("unknown key \"" + key + "\"");
    }
  }
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
