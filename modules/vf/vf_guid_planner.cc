// IB VF GUIDs: parsing and formatting the two forms, DeriveVfGuid, and the
// ibGuids change for nics an ib-sriov multus config uses.
#include <cstdio>
#include <utility>

#include "engine/base/strings.h"
#include "modules/vf/vf_plan_parts.h"

namespace provisioner {

using nlohmann::json;

std::optional<uint64_t> ParseGuid(const std::string& text) {
  uint64_t v = 0;
  int digits = 0;
  // Either 4 groups of 4 or 8 groups of 2 hex digits, ':'-separated.
  size_t group = 0;
  int group_len = -1;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == ':') {
      if (group == 0) return std::nullopt;
      if (group_len < 0) group_len = static_cast<int>(group);
      if (static_cast<int>(group) != group_len) return std::nullopt;
      group = 0;
      continue;
    }
    int d = HexDigitValue(text[i]);
    if (d < 0) return std::nullopt;
    v = v << 4 | static_cast<uint64_t>(d);
    ++digits;
    ++group;
  }
  if (digits != 16 || (group_len != 4 && group_len != 2)) return std::nullopt;
  return v;
}

std::string FormatGuid(uint64_t g) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%04x:%04x:%04x:%04x", static_cast<unsigned>(g >> 48 & 0xffff),
                static_cast<unsigned>(g >> 32 & 0xffff), static_cast<unsigned>(g >> 16 & 0xffff),
                static_cast<unsigned>(g & 0xffff));
  return buf;
}

std::string FormatGuidBytes(uint64_t g) {
  std::string out;
  for (int i = 7; i >= 0; --i) {
    char buf[4];
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned>(g >> (8 * i) & 0xff));
    out += buf;
    if (i) out += ':';
  }
  return out;
}

uint64_t DeriveVfGuid(uint64_t pf_guid, int vf_index) {
  uint64_t g = pf_guid;
  g |= 0x02ULL << 56;     // locally administered
  g &= ~(0x01ULL << 56);  // unicast
  g &= ~(0xffffULL << 24);
  g |= (static_cast<uint64_t>(vf_index + 1) & 0xffff) << 24;
  return g;
}

namespace vf_plan {

void PlanIbGuids(const PfView& v, const std::string& mpath,
                 std::map<uint64_t, std::string>& guid_owner, PlanSink& sink) {
  const PciFunction* pf = v.pf;
  const SriovInfo& s = *pf->sriov;
  const int count = v.count;
  const std::string& path = v.path;
  auto pf_guid = ParseGuid(s.ib_node_guid);
  if (!pf_guid) {
    sink.Warning(mpath + ".cniType",
                 "ib-sriov: " + pf->pci_address +
                     " has no InfiniBand port now (linkType change pending a reboot?): "
                     "VF GUIDs are not planned");
  } else {
    json after = json::array();
    bool same = !v.recreated && static_cast<int>(s.vfs.size()) == count;
    bool collision = false;
    for (int n = 0; n < count; ++n) {
      uint64_t g = DeriveVfGuid(*pf_guid, n);
      const std::string who = "VF " + std::to_string(n) + " of " + pf->pci_address;
      auto [it, fresh] = guid_owner.emplace(g, who);
      if (!fresh) {
        sink.Error(path, "the GUID derived for " + who + " (" + FormatGuid(g) + ") is also " +
                             it->second + "'s");
        collision = true;
        break;
      }
      after.push_back(FormatGuid(g));
      if (same) {
        const VfInfo& vf = s.vfs[static_cast<size_t>(n)];
        same = ParseGuid(vf.ib_node_guid) == g && ParseGuid(vf.ib_port_guid) == g;
      }
    }
    if (!collision && !same) {
      Change c = NewChange(v, kIbGuidsAttribute, kPhaseVfSettings, mpath + ".cniType",
                           "nic " + v.nic +
                               " is used by ib-sriov: VF node/port GUIDs "
                               "derived from PF GUID " +
                               FormatGuid(*pf_guid));
      json before = json::array();
      for (const VfInfo& vf : s.vfs) {
        before.push_back(vf.ib_node_guid.empty() ? json(nullptr) : json(vf.ib_node_guid));
      }
      c.before = std::move(before);
      c.after = std::move(after);
      sink.AddChange(std::move(c));
    }
  }
}

}  // namespace vf_plan
}  // namespace provisioner
