// vfMac: "keep" (each VF netdev's own MAC into the PF's table) or
// "derived" (DeriveVfMac of the PF's burnt-in MAC), over a VF range.
#include <array>
#include <cstdio>
#include <map>
#include <vector>

#include "engine/base/strings.h"
#include "modules/vf/vf_plan_parts.h"

namespace provisioner {

using nlohmann::json;
using vf_plan::PlanVfRangeSetting;

std::optional<std::array<uint8_t, 6>> ParseMacAddress(const std::string& text) {
  std::array<uint8_t, 6> out{};
  if (text.size() != 17) return std::nullopt;
  for (size_t i = 0; i < 6; ++i) {
    int v = 0;
    for (size_t k = 0; k < 2; ++k) {
      const int d = HexDigitValue(text[3 * i + k]);
      if (d < 0) return std::nullopt;
      v = v * 16 + d;
    }
    if (i < 5 && text[3 * i + 2] != ':') return std::nullopt;
    out[i] = static_cast<uint8_t>(v);
  }
  return out;
}

std::string FormatMacAddress(const uint8_t* mac) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
                mac[4], mac[5]);
  return buf;
}

namespace {

// FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over
// `bytes`, then MurmurHash3's fmix64 finalizer: FNV-1a alone leaves the low
// bits of its result depending only on the low bits of the input bytes;
// fmix64 lets every input bit reach every output bit.
uint64_t MacHash(const uint8_t* bytes, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; ++i) {
    h ^= bytes[i];
    h *= 0x100000001b3ULL;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return h;
}

}  // namespace

std::string DeriveVfMac(const std::string& pf_mac, int vf_index) {
  const std::optional<std::array<uint8_t, 6>> pf = ParseMacAddress(pf_mac);
  if (!pf || vf_index < 0 || vf_index >= 0xffff) return "";
  // The input: the PF's six bytes, then the VF index big-endian (2 bytes).
  std::array<uint8_t, 8> in{};
  for (size_t i = 0; i < 6; ++i) in[i] = (*pf)[i];
  in[6] = static_cast<uint8_t>(static_cast<unsigned>(vf_index) >> 8);
  in[7] = static_cast<uint8_t>(static_cast<unsigned>(vf_index) & 0xff);
  const uint64_t h = MacHash(in.data(), in.size());
  std::array<uint8_t, 6> m{};
  for (size_t i = 0; i < 6; ++i) m[i] = static_cast<uint8_t>(h >> (8 * (5 - i)));  // low 48 bits
  m[0] = static_cast<uint8_t>((m[0] & 0xfc) | 0x02);  // unicast, locally administered
  return FormatMacAddress(m.data());
}

namespace {

bool ZeroMac(const std::string& mac) { return mac == "00:00:00:00:00:00"; }

}  // namespace

void PlanVfMac(const PciFunction& pf, const std::string& want, const VfRangeRef& r, PlanSink& sink,
               std::map<std::string, std::string>* mac_owner) {
  if (!pf.sriov || r.count <= 0) return;
  const SriovInfo& s = *pf.sriov;
  if (!s.ib_node_guid.empty()) {
    sink.Error(r.field_path, pf.pci_address +
                                 "'s port is InfiniBand: its VFs have GUIDs, not MACs (a "
                                 "linkType change waits for a reboot; until then vfMac cannot "
                                 "be planned)");
    return;
  }
  json after = want;
  std::string want_text = "kept: each VF netdev's own MAC into the PF's table";
  std::vector<std::string> derived;
  if (want == kVfMacDerived) {
    const std::string netdev = pf.netdevs.empty() ? "its netdev" : pf.netdevs.front();
    if (!ParseMacAddress(s.pf_mac)) {
      sink.Error(r.field_path, pf.pci_address + ": the MAC of " + netdev +
                                   " is unknown: derived VF MACs are computed from it");
      return;
    }
    if (s.pf_addr_assign_type.value_or(0) != 0) {
      sink.Error(r.field_path,
                 pf.pci_address + ": " + netdev + "'s address " + s.pf_mac +
                     " is not its burnt-in MAC (addr_assign_type " +
                     std::to_string(*s.pf_addr_assign_type) +
                     ": set by a bond or `ip link set address`), so MACs derived from it would "
                     "change with it; use vfMac: keep");
      return;
    }
    json macs = json::array();
    for (int n = r.first; n <= r.last && n < r.count; ++n) {
      derived.push_back(DeriveVfMac(s.pf_mac, n));
      macs.push_back(derived.back());
      if (mac_owner == nullptr) continue;
      const std::string who = "VF " + std::to_string(n) + " of " + pf.pci_address;
      auto [it, fresh] = mac_owner->emplace(derived.back(), who);
      if (!fresh) {
        sink.Error(r.field_path, "the MAC derived for " + who + " (" + derived.back() +
                                     ") is also " + it->second +
                                     "'s: two VFs of one host cannot share a MAC; use vfMac: "
                                     "keep for one of them");
        return;
      }
    }
    want_text = "derived from " + s.pf_mac + " (" + derived.front() +
                (derived.size() > 1 ? " .. " + derived.back() : "") + ")";
    after = json{{"mode", want}, {"macs", std::move(macs)}};
  } else {
    // keep copies the netdev's MAC: a VF on vfio-pci (no netdev) that has
    // none in the table has nothing to copy (the operator copies it before
    // it binds vfio-pci; so do we when the VFs are made by this plan).
    const bool recreated = r.count != s.num_vfs || static_cast<int>(s.vfs.size()) != r.count;
    if (recreated && !s.drivers_autoprobe.value_or(true)) {
      sink.Error(r.field_path, pf.pci_address +
                                   " has sriov_drivers_autoprobe 0: the VFs this plan makes have "
                                   "no netdev whose MAC keep could copy; use vfMac: derived");
      return;
    }
    for (int n = r.first; !recreated && n <= r.last && n < r.count; ++n) {
      const VfInfo& vf = s.vfs[static_cast<size_t>(n)];
      const bool has_mac = vf.mac && !ZeroMac(*vf.mac);
      if (!has_mac && vf.netdev_mac.empty() && IsUserspaceDriver(vf.driver)) {
        sink.Error(r.field_path, "VF " + std::to_string(n) + " (" + vf.pci_address + ") is on " +
                                     vf.driver +
                                     ": it has no netdev whose MAC keep could copy, and no MAC "
                                     "in the PF's table; use vfMac: derived");
        return;
      }
    }
  }
  const int first = r.first;
  PlanVfRangeSetting(
      pf, r, kMacAttribute, after,
      [](const VfInfo& vf) { return vf.mac ? json(*vf.mac) : json(nullptr); }, "MAC", sink,
      [&](const VfInfo& vf) {
        if (!vf.mac || ZeroMac(*vf.mac)) return false;
        if (!vf.netdev_mac.empty() && vf.netdev_mac != *vf.mac) return false;  // not rebound
        if (want != kVfMacDerived) return true;
        const size_t k = static_cast<size_t>(vf.vf_index - first);
        return k < derived.size() && *vf.mac == derived[k];
      },
      want_text);
}

}  // namespace provisioner
