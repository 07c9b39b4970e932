// The RDMA devices of /sys/class/infiniband (ports, GIDs, their netdevs),
// read in parallel; the stack's files are rdma_stack_files.cc's, the
// interface addresses rdma_addresses.cc's.
#include "modules/rdma/rdma_sysfs.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "engine/base/strings.h"
#include "engine/host/parallel_reads.h"
#include "engine/model/ipoib_facts.h"
#include "modules/kmod/kmod_host.h"
#include "spdlog/spdlog.h"

namespace provisioner::rdma {
namespace {

bool IsNumber(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Names sorted numerically ("2" before "10").
std::vector<int> NumericEntries(const std::vector<std::string>& names) {
  std::vector<int> out;
  for (const auto& n : names) {
    if (IsNumber(n) && n.size() < 8) out.push_back(std::atoi(n.c_str()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// 16 bytes of a GID in sysfs text (8 groups of 4 hex digits).
std::optional<std::array<uint8_t, 16>> GidBytes(std::string_view gid) {
  std::string hex;
  for (char c : gid) {
    if (c == ':') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return std::nullopt;
    hex += c;
  }
  if (hex.size() != 32) return std::nullopt;
  std::array<uint8_t, 16> b{};
  for (size_t i = 0; i < 16; ++i)
    b[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  return b;
}

// What HostFs::ReadAttr does to a file's contents: trailing whitespace off.
std::string TrimAttr(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\0')) {
    s.pop_back();
  }
  return s;
}

// Reads an attribute; empty when missing or unreadable (optional facts).
std::string Attr(const HostFs& fs, const std::string& path) {
  auto v = fs.ReadAttr(path);
  return v.ok() ? *v : "";
}

// dev_port of a netdev (0-based port of its PCI function); 0 when unknown.
int DevPort(const HostFs& fs, const std::string& netdev) {
  std::string v = Attr(fs, "/sys/class/net/" + netdev + "/dev_port");
  return IsNumber(v) ? std::atoi(v.c_str()) : 0;
}

StatusOr<RdmaPort> ReadPort(const HostFs& fs, const std::string& dir, int port,
                            const std::vector<std::string>& pci_netdevs) {
  RdmaPort p;
  p.port = port;
  p.link_layer = Attr(fs, dir + "/link_layer");
  p.state = StripEnumPrefix(Attr(fs, dir + "/state"));
  p.phys_state = StripEnumPrefix(Attr(fs, dir + "/phys_state"));
  p.rate = Attr(fs, dir + "/rate");
  p.lid = ParseHexLid(Attr(fs, dir + "/lid"));
  p.sm_lid = ParseHexLid(Attr(fs, dir + "/sm_lid"));
  auto slots = fs.ListDir(dir + "/gids");
  p.gids_captured = slots.ok() || fs.Captured(dir + "/gids");
  if (slots.ok()) {
    // Whole tables at a time (ReadFilesIn resolves each directory once): a
    // port has 256 slots, most of them empty.
    std::vector<std::string> names;
    std::vector<int> indexes = NumericEntries(*slots);
    names.reserve(indexes.size());
    for (int i : indexes) names.push_back(std::to_string(i));
    auto gids = fs.ReadFilesIn(dir + "/gids", names);
    std::vector<std::string> used;
    for (size_t k = 0; k < gids.size(); ++k) {
      if (!gids[k].ok()) {
        // A slot the kernel cannot show right now: skip it, keep the rest.
        spdlog::debug("{}/gids/{}: {}", dir, names[k], gids[k].status().message());
        continue;
      }
      std::string gid = TrimAttr(std::move(*gids[k]));
      if (IsEmptyGidSlot(gid)) continue;
      RdmaGid g;
      g.index = indexes[k];
      g.gid = std::move(gid);
      p.gids.push_back(std::move(g));
      used.push_back(names[k]);
    }
    // types/ndevs fail with EINVAL on slots being updated and ndevs on IB.
    auto types = fs.ReadFilesIn(dir + "/gid_attrs/types", used);
    auto ndevs = fs.ReadFilesIn(dir + "/gid_attrs/ndevs", used);
    for (size_t k = 0; k < used.size(); ++k) {
      if (types[k].ok()) p.gids[k].type = TrimAttr(std::move(*types[k]));
      if (ndevs[k].ok()) p.gids[k].netdev = TrimAttr(std::move(*ndevs[k]));
    }
  }
  if (p.link_layer == "InfiniBand") {
    if (auto slots = fs.ListDir(dir + "/pkeys"); slots.ok()) {
      std::vector<std::string> names;
      for (int i : NumericEntries(*slots)) names.push_back(std::to_string(i));
      std::vector<std::string> keys;
      for (auto& v : fs.ReadFilesIn(dir + "/pkeys", names)) {
        if (!v.ok()) continue;
        auto pkey = ParsePkey(TrimAttr(std::move(*v)));
        if (pkey && (*pkey & ~kPkeyFullMember) != 0) keys.push_back(PkeyText(*pkey));
      }
      p.pkeys = std::move(keys);
    }
  }
  // The port's netdev in this namespace. The GID table names the netdevs
  // whose addresses it holds (the uplink, or a macvlan in a pod); one that
  // exists here (/sys/class/net is per namespace) is the one verbs will use,
  // preferably the PCI function's own. Else, for InfiniBand (no ndevs), the
  // PCI function's netdev (by dev_port when it has several ports; IPoIB).
  std::string any_gid_netdev;
  for (const auto& g : p.gids) {
    if (g.netdev.empty() || !fs.Exists("/sys/class/net/" + g.netdev)) continue;
    if (any_gid_netdev.empty()) any_gid_netdev = g.netdev;
    if (std::find(pci_netdevs.begin(), pci_netdevs.end(), g.netdev) != pci_netdevs.end()) {
      p.netdev = g.netdev;
      break;
    }
  }
  if (p.netdev.empty()) p.netdev = any_gid_netdev;
  if (p.netdev.empty()) {
    for (const auto& n : pci_netdevs) {
      if (pci_netdevs.size() == 1 || DevPort(fs, n) == port - 1) {
        p.netdev = n;
        break;
      }
    }
  }
  p.roce_v2 = RoceV2Addresses(p.gids);
  return p;
}

}  // namespace

std::string StripEnumPrefix(std::string_view s) {
  size_t colon = s.find(':');
  if (colon == std::string_view::npos) return Trim(s);
  return Trim(s.substr(colon + 1));
}

std::optional<int> ParseHexLid(std::string_view s) {
  std::string t = Trim(s);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(t.c_str(), &end, 0);
  if (*end != '\0' || v < 0 || v > 0xffff) return std::nullopt;
  return static_cast<int>(v);
}

bool IsEmptyGidSlot(std::string_view gid) {
  // Fast path for the usual unused slot, without parsing.
  if (gid == "0000:0000:0000:0000:0000:0000:0000:0000") return true;
  auto b = GidBytes(gid);
  if (!b) return false;
  return std::all_of(b->begin() + 8, b->end(), [](uint8_t x) { return x == 0; });
}

std::optional<std::string> Ipv4FromGid(std::string_view gid) {
  auto b = GidBytes(gid);
  if (!b) return std::nullopt;
  for (int i = 0; i < 10; ++i) {
    if ((*b)[i] != 0) return std::nullopt;
  }
  if ((*b)[10] != 0xff || (*b)[11] != 0xff) return std::nullopt;
  return std::to_string((*b)[12]) + "." + std::to_string((*b)[13]) + "." +
         std::to_string((*b)[14]) + "." + std::to_string((*b)[15]);
}

std::optional<std::string> Ipv6FromGid(std::string_view gid) {
  auto b = GidBytes(gid);
  if (!b) return std::nullopt;
  char buf[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, b->data(), buf, sizeof buf) == nullptr) return std::nullopt;
  return std::string(buf);
}

std::vector<RoceAddress> RoceV2Addresses(const std::vector<RdmaGid>& gids) {
  std::vector<RoceAddress> out;
  for (const auto& g : gids) {
    if (g.type != "RoCE v2" || g.netdev.empty()) continue;
    RoceAddress a;
    a.netdev = g.netdev;
    a.gid_index = g.index;
    if (auto v4 = Ipv4FromGid(g.gid)) {
      a.family = 4;
      a.address = *v4;
    } else if (auto v6 = Ipv6FromGid(g.gid)) {
      a.family = 6;
      a.address = *v6;
    } else {
      continue;
    }
    out.push_back(std::move(a));
  }
  std::stable_sort(out.begin(), out.end(), [](const RoceAddress& a, const RoceAddress& b) {
    return std::tie(a.netdev, a.family) < std::tie(b.netdev, b.family);
  });
  return out;
}

namespace {

// Fewer devices than this per thread do not pay for starting one (a device of
// mlx5 is ~800 reads: 16 devices are a few ms).
constexpr size_t kRdmaDevicesPerThread = 16;

StatusOr<RdmaDevice> ReadRdmaDevice(const HostFs& fs, const std::string& dir,
                                    const std::string& name) {
  RdmaDevice d;
  d.name = name;
  d.node_guid = Attr(fs, dir + "/node_guid");
  d.fw_ver = Attr(fs, dir + "/fw_ver");
  d.hca_type = Attr(fs, dir + "/hca_type");
  std::vector<std::string> pci_netdevs;
  d.device_captured = fs.Captured(dir + "/device");
  if (fs.Exists(dir + "/device")) {
    auto pci = fs.LinkBasename(dir + "/device");
    if (pci.ok() && fs.Exists(dir + "/device/vendor")) {
      d.pci_address = *pci;
      d.is_vf = fs.Exists(dir + "/device/physfn");
    }
    if (auto nets = fs.ListDir(dir + "/device/net"); nets.ok()) pci_netdevs = *nets;
  }
  auto ports = fs.ListDir(dir + "/ports");
  if (ports.ok()) {
    for (int p : NumericEntries(*ports)) {
      ASSIGN_OR_RETURN(RdmaPort port,
                       ReadPort(fs, dir + "/ports/" + std::to_string(p), p, pci_netdevs));
      d.ports.push_back(std::move(port));
    }
  }
  return d;
}

}  // namespace

StatusOr<std::vector<RdmaDevice>> ReadRdmaDevices(const HostFs& fs) {
  const std::string cls = "/sys/class/infiniband";
  if (!fs.Exists(cls)) return std::vector<RdmaDevice>{};
  auto names = fs.ListDir(cls);
  if (!names.ok()) return names.status().WithContext("list " + cls);
  // Listed to the user by name as rdma-core's ibv_devices does not (readdir
  // order) but `ls -v` would: mlx5_10 after mlx5_9.
  std::sort(names->begin(), names->end(),
            [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  // Devices are independent directories of ~800 files each (256 GID slots
  // per port): on a host with hundreds of VFs, read them on every core.
  return ReadEach<RdmaDevice>(fs, names->size(), kRdmaDevicesPerThread, [&](size_t i) {
    return ReadRdmaDevice(fs, cls + "/" + (*names)[i], (*names)[i]);
  });
}

}  // namespace provisioner::rdma
