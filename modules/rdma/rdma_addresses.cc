// The interface addresses the rdma module reads: the capture file
// (run/provisioner/addresses) of a tree, else /proc/net's if_inet6, fib_trie
// and route.
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

std::string RenderAddressCapture(const std::vector<std::pair<std::string, std::string>>& addrs) {
  std::string out;
  for (const auto& [ifname, addr] : addrs) {
    out += ifname + (addr.find(':') != std::string::npos ? " inet6 " : " inet ") + addr + "\n";
  }
  return out;
}

void ParseAddressCapture(std::string_view text, RdmaFacts& facts) {
  for (const auto& line : SplitLines(text)) {
    std::vector<std::string> f = SplitWhitespace(line);
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
    for (const auto& line : SplitLines(*t)) {
      std::vector<std::string> f = SplitWhitespace(line);
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
  for (const auto& line : SplitLines(*trie)) {
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
  for (const auto& line : SplitLines(*route)) {
    std::vector<std::string> f = SplitWhitespace(line);
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

}  // namespace provisioner::rdma
