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

std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> Fields(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  std::string f;
  while (in >> f) out.push_back(f);
  return out;
}

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

// IPv4 from /proc/net/route's little-endian hex ("000051AC" -> 172.81.0.0).
std::optional<uint32_t> RouteHex(const std::string& s) {
  if (s.size() != 8) return std::nullopt;
  char* end = nullptr;
  unsigned long v = std::strtoul(s.c_str(), &end, 16);
  if (*end != '\0') return std::nullopt;
  uint32_t le = static_cast<uint32_t>(v);
  // Bytes in memory order are the address in network order.
  return ((le & 0xff) << 24) | ((le >> 8 & 0xff) << 16) | ((le >> 16 & 0xff) << 8) | (le >> 24);
}

std::optional<uint32_t> ParseIpv4(const std::string& s) {
  in_addr a{};
  if (inet_pton(AF_INET, s.c_str(), &a) != 1) return std::nullopt;
  return ntohl(a.s_addr);
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

std::optional<std::string> NetnsModeFromParam(std::string_view value) {
  std::string v = Trim(value);
  if (v == "Y" || v == "1" || v == "y") return "shared";
  if (v == "N" || v == "0" || v == "n") return "exclusive";
  return std::nullopt;
}

std::optional<std::string> NetnsModeFromModprobe(std::string_view text) {
  std::optional<std::string> mode;
  for (const auto& line : Lines(text)) {
    std::vector<std::string> f = Fields(line);
    if (f.size() < 3 || f[0] != "options" || f[1] != "ib_core") continue;
    for (size_t i = 2; i < f.size(); ++i) {
      if (f[i].rfind('#', 0) == 0) break;
      if (f[i].rfind("netns_mode=", 0) != 0) continue;
      std::string v = f[i].substr(11);
      if (v == "0" || v == "N" || v == "n") mode = "exclusive";
      if (v == "1" || v == "Y" || v == "y") mode = "shared";
    }
  }
  return mode;
}

std::string EditModprobeNetnsMode(std::string_view text, const std::string& mode) {
  const bool set = mode == "exclusive";
  std::string out;
  bool written = false;
  for (const auto& line : Lines(text)) {
    std::vector<std::string> f = Fields(line);
    bool ours = f.size() >= 2 && f[0] == "options" && f[1] == "ib_core";
    // Options end where a '#' token starts a comment (as NetnsModeFromModprobe reads them).
    size_t end = f.size();
    for (size_t i = 2; ours && i < f.size(); ++i) {
      if (f[i].rfind('#', 0) == 0) {
        end = i;
        break;
      }
    }
    bool has = false;
    for (size_t i = 2; ours && i < end; ++i) has = has || f[i].rfind("netns_mode=", 0) == 0;
    if (!has) {
      out += line + "\n";
      continue;
    }
    std::string comment;
    for (size_t i = end; i < f.size(); ++i) comment += (comment.empty() ? "" : " ") + f[i];
    // Rebuild the line without netns_mode; the one wanted value goes once.
    std::string rebuilt = "options ib_core";
    int kept = 0;
    for (size_t i = 2; i < end; ++i) {
      if (f[i].rfind("netns_mode=", 0) == 0) {
        if (set && !written) {
          rebuilt += " netns_mode=0";
          written = true;
          ++kept;
        }
        continue;
      }
      rebuilt += " " + f[i];
      ++kept;
    }
    if (kept > 0) {
      out += rebuilt + (comment.empty() ? "" : " " + comment) + "\n";
    } else if (!comment.empty()) {
      out += comment + "\n";  // the line's comment stays, on its own
    }
  }
  if (set && !written) out += "options ib_core netns_mode=0\n";
  return out;
}

std::optional<std::pair<int, int>> KernelVersion(std::string_view release) {
  int major = 0, minor = 0;
  if (std::sscanf(std::string(release).c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::make_pair(major, minor);
}

std::string OfedVersionFrom(std::string_view text) {
  const std::string_view key = "MLNX_OFED_LINUX-";
  size_t p = text.find(key);
  if (p == std::string_view::npos) return "";
  size_t b = p + key.size(), e = b;
  while (e < text.size() &&
         (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '.' || text[e] == '-')) {
    ++e;
  }
  return std::string(text.substr(b, e - b));
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

std::optional<std::string> ReadNetnsModeParam(const HostFs& fs) {
  auto v = fs.ReadAttr(kNetnsModeParam);
  if (!v.ok()) return std::nullopt;
  return NetnsModeFromParam(*v);
}

void ReadPersistentNetnsMode(const HostFs& fs, RdmaFacts& facts) {
  PersistentNetnsModeFrom(ModprobeOptionsByFile(fs), facts);
}

void PersistentNetnsModeFrom(const std::vector<ModprobeFileOptions>& files, RdmaFacts& facts) {
  // modprobe.d through libkmod, as modprobe reads it (ib-core is ib_core,
  // continued lines are one line); the last file setting it wins.
  for (const ModprobeFileOptions& file : files) {
    for (const ModprobeEntry& o : file.options) {
      if (o.module != "ib_core") continue;
      if (auto m = NetnsModeFromModprobe("options ib_core " + o.value)) {
        facts.persistent_netns_mode = *m;
        facts.persistent_netns_source = file.path;
        if (file.path == kIbCoreConf) facts.ib_core_conf_netns_mode = *m;
      }
    }
  }
}

void ReadOfed(const HostFs& fs, RdmaFacts& facts) {
  facts.ofed = fs.Exists("/sys/module/mlx_compat");
  if (auto v = fs.ReadAttr("/sys/module/mlx_compat/version"); v.ok() && !v->empty()) {
    facts.ofed_version = *v;
  }
  if (auto t = fs.ReadFile("/usr/bin/ofed_info"); t.ok()) {
    facts.ofed = true;
    if (std::string v = OfedVersionFrom(*t); !v.empty()) facts.ofed_version = v;
  }
}

void ReadDevFiles(const HostFs& fs, RdmaFacts& facts) {
  auto names = fs.ListDir("/dev/infiniband");
  if (names.ok()) facts.dev_files = *names;
  // The live root always has /dev; a tree may not have captured it, or only
  // part of it (hwloc's dev/cpuset): device files count as captured when the
  // tree has /dev/infiniband or the device nodes every host has.
  facts.dev_captured = fs.Captured("/dev/infiniband") || fs.Captured("/dev/null");
}

std::string RenderAddressCapture(const std::vector<std::pair<std::string, std::string>>& addrs) {
  std::string out;
  for (const auto& [ifname, addr] : addrs) {
    out += ifname + (addr.find(':') != std::string::npos ? " inet6 " : " inet ") + addr + "\n";
  }
  return out;
}

void ParseAddressCapture(std::string_view text, RdmaFacts& facts) {
  for (const auto& line : Lines(text)) {
    std::vector<std::string> f = Fields(line);
    if (f.size() != 3) continue;
    if (f[1] == "inet") {
      facts.addresses[f[0]].ipv4.push_back(f[2]);
    } else if (f[1] == "inet6") {
      facts.addresses[f[0]].ipv6.push_back(f[2]);
    }
  }
}

void ReadAddressesFromProc(const HostFs& fs, RdmaFacts& facts) {
  if (auto t = fs.ReadFile("/proc/net/if_inet6"); t.ok()) {
    facts.addresses_known = true;
    for (const auto& line : Lines(*t)) {
      std::vector<std::string> f = Fields(line);
      if (f.size() < 6 || f[0].size() != 32) continue;
      std::string gid;
      for (size_t i = 0; i < 32; i += 4) gid += (i ? ":" : "") + f[0].substr(i, 4);
      if (auto a = Ipv6FromGid(gid)) facts.addresses[f[5]].ipv6.push_back(*a);
    }
  }
  auto trie = fs.ReadFile("/proc/net/fib_trie");
  auto route = fs.ReadFile("/proc/net/route");
  if (!trie.ok() || !route.ok()) return;
  facts.addresses_known = true;
  // Local addresses: a leaf "|-- a.b.c.d" followed by "/32 host LOCAL".
  std::set<std::string> local;
  std::string leaf;
  for (const auto& line : Lines(*trie)) {
    std::string t = Trim(line);
    if (t.rfind("|-- ", 0) == 0) {
      leaf = t.substr(4);
    } else if (t.find("/32 host LOCAL") != std::string::npos && !leaf.empty()) {
      local.insert(leaf);
    }
  }
  struct LinkRoute {
    std::string iface;
    uint32_t dst = 0, mask = 0;
  };
  std::vector<LinkRoute> routes;
  for (const auto& line : Lines(*route)) {
    std::vector<std::string> f = Fields(line);
    if (f.size() < 8 || f[0] == "Iface") continue;
    auto dst = RouteHex(f[1]), gw = RouteHex(f[2]), mask = RouteHex(f[7]);
    if (!dst || !gw || !mask || *gw != 0 || *mask == 0) continue;
    routes.push_back({f[0], *dst, *mask});
  }
  for (const auto& a : local) {
    auto ip = ParseIpv4(a);
    if (!ip) continue;
    const LinkRoute* best = nullptr;
    for (const auto& r : routes) {
      if ((*ip & r.mask) == r.dst && (best == nullptr || r.mask > best->mask)) best = &r;
    }
    if (best != nullptr) facts.addresses[best->iface].ipv4.push_back(a);
  }
}

namespace {

// ib_core itself, or a module that depends on it (modprobe loads it first).
bool NeedsIbCore(const std::string& m) {
  static const char* const kUsers[] = {"ib_core", "ib_uverbs", "ib_umad",  "ib_cm",     "iw_cm",
                                       "rdma_cm", "rdma_ucm",  "ib_ipoib", "mlx5_ib",   "mlx4_ib",
                                       "irdma",   "bnxt_re",   "efa",      "rdma_rxe",  "siw",
                                       "ib_iser", "ib_isert",  "ib_srp",   "nvme_rdma", "rpcrdma"};
  std::string n = m;
  for (char& c : n) {
    if (c == '-') c = '_';
  }
  for (const char* u : kUsers) {
    if (n == u) return true;
  }
  return false;
}

// The words of `line` after `key` (`add_drivers+=" mlx5_ib ib_core "`).
std::vector<std::string> DracutWords(const std::string& line, const std::string& key) {
  std::vector<std::string> out;
  const size_t at = line.find_first_not_of(" \t");
  if (at == std::string::npos || line.compare(at, key.size(), key) != 0) return out;
  const size_t after = at + key.size();
  if (after >= line.size() || (line[after] != '=' && line[after] != '+')) return out;
  const size_t eq = line.find('=', after);
  if (eq == std::string::npos) return out;
  std::string rest = line.substr(eq + 1);
  for (char& c : rest) {
    if (c == '"' || c == '\'') c = ' ';
  }
  std::istringstream in(rest);
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

}  // namespace

void ReadInitramfs(const HostFs& fs, const std::string& release, RdmaFacts& facts) {
  const bool dracut = fs.Exists("/etc/dracut.conf") || fs.IsDir("/etc/dracut.conf.d");
  const bool tools = fs.IsDir("/etc/initramfs-tools");
  if (!release.empty()) {
    if (tools) {
      facts.initramfs_rebuild = "update-initramfs -u -k " + release;
    } else if (dracut) {
      facts.initramfs_rebuild = "dracut -f --kver " + release;
    }
    // A capture of the image's file list (what lsinitramfs / lsinitrd print).
    const std::string list = "/run/provisioner/initramfs/" + release + ".list";
    if (auto text = fs.ReadFile(list); text.ok()) {
      std::istringstream in(*text);
      std::string line;
      while (std::getline(in, line)) {
        const size_t slash = line.rfind('/');
        const std::string base = line.substr(slash == std::string::npos ? 0 : slash + 1);
        if (base == "ib_core.ko" || base == "ib_core.ko.xz" || base == "ib_core.ko.zst" ||
            base == "ib_core.ko.gz") {
          facts.ib_core_initramfs_evidence = list + " lists " + line;
          return;
        }
      }
      return;  // the list says: not in it
    }
  }
  if (tools) {
    if (auto text = fs.ReadFile("/etc/initramfs-tools/modules"); text.ok()) {
      std::istringstream in(*text);
      std::string line;
      while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string m;
        if (!(words >> m) || m[0] == '#') continue;
        if (NeedsIbCore(m)) {
          facts.ib_core_initramfs_evidence = "/etc/initramfs-tools/modules lists " + m;
          return;
        }
      }
    }
  }
  if (!dracut) return;
  std::vector<std::string> files = {"/etc/dracut.conf"};
  for (const std::string& n : ListDirIfPresent(fs, "/etc/dracut.conf.d")) {
    if (n.size() > 5 && n.compare(n.size() - 5, 5, ".conf") == 0) {
      files.push_back("/etc/dracut.conf.d/" + n);
    }
  }
  for (const std::string& f : files) {
    auto text = fs.ReadFile(f);
    if (!text.ok()) continue;
    std::istringstream in(*text);
    std::string line;
    while (std::getline(in, line)) {
      for (const char* key : {"add_drivers", "force_drivers", "drivers"}) {
        for (const std::string& m : DracutWords(line, key)) {
          if (NeedsIbCore(m)) {
            facts.ib_core_initramfs_evidence = f + ": " + key + " has " + m;
            return;
          }
        }
      }
      for (const std::string& m : DracutWords(line, "add_dracutmodules")) {
        if (m == "rdma") {
          facts.ib_core_initramfs_evidence = f + ": add_dracutmodules has rdma";
          return;
        }
      }
    }
  }
}

}  // namespace provisioner::rdma
