// host.yaml rules of spec.ipPools[]: the subnet in CIDR notation, ips and
// excludeIPs (addresses or ranges) and the gateway inside it.
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "engine/config/check_context.h"
#include "engine/config/field_path.h"
#include "engine/config/ip.h"
#include "engine/config/text.h"

namespace provisioner::config {
namespace {

class IpPoolChecks : private CheckContext {
 public:
  explicit IpPoolChecks(const CheckContext& c) : CheckContext(c) {}

  // -- spec.ipPools ---------------------------------------------------------

  // Parsed subnets by pool index (nullopt: missing, invalid or tainted).
  std::vector<std::optional<IpPrefix>> subnets_;

  void CheckPools() {
    subnets_.assign(s_.ip_pools.size(), std::nullopt);
    for (size_t i = 0; i < s_.ip_pools.size(); ++i) {
      const IpPoolSpec& pool = s_.ip_pools[i];
      std::string path = PoolPath(i);
      std::string subnet_path = path + ".subnet";
      if (pool.subnet.empty() || Tainted(subnet_path)) continue;
      auto subnet = ParseCidr(pool.subnet);
      if (!subnet) {
        Error(subnet_path, Quote(pool.subnet) +
                               " is not a subnet in CIDR notation, like 172.16.11.0/24 or "
                               "fd00:11::/64");
        continue;
      }
      subnets_[i] = subnet;
      if (subnet->HasHostBits()) {
        Warning(subnet_path,
                Quote(pool.subnet) + " has host bits set; the subnet is " + subnet->ToString());
      }
      CheckAddresses(pool.ips, path + ".ips", *subnet);
      CheckAddresses(pool.exclude_ips, path + ".excludeIPs", *subnet);
      if (pool.gateway && !Tainted(path + ".gateway")) {
        std::string gw_path = path + ".gateway";
        auto gw = ParseIp(*pool.gateway);
        if (!gw) {
          Error(gw_path, Quote(*pool.gateway) + " is not an IP address");
        } else if (gw->version != subnet->address.version) {
          Error(gw_path, "gateway " + FormatIp(*gw) + " is " + IpVersionName(gw->version) +
                             " but subnet " + subnet->ToString() + " is " +
                             IpVersionName(subnet->address.version));
        } else if (!subnet->Contains(*gw)) {
          Error(gw_path, "gateway " + FormatIp(*gw) + " is outside subnet " + subnet->ToString());
        }
      }
    }
  }

  void CheckAddresses(const std::vector<std::string>& entries, const std::string& list_path,
                      const IpPrefix& subnet) {
    for (size_t k = 0; k < entries.size(); ++k) {
      std::string path = JoinIndex(list_path, k);
      const std::string& text = entries[k];
      if (text.empty() || Tainted(path)) continue;
      auto range = ParseIpRange(text);
      if (!range) {
        Error(path,
              Quote(text) + " is not an IP address or a range \"first-last\" of one IP version");
        continue;
      }
      if (range->first.version != subnet.address.version) {
        Error(path, Quote(text) + " is " + IpVersionName(range->first.version) + " but subnet " +
                        subnet.ToString() + " is " + IpVersionName(subnet.address.version));
        continue;
      }
      if (CompareIp(range->first, range->last) > 0) {
        Error(path, "range " + Quote(text) + " starts after it ends");
        continue;
      }
      bool single = CompareIp(range->first, range->last) == 0;
      for (const IpAddress* end : {&range->first, &range->last}) {
        if (subnet.Contains(*end)) continue;
        std::string which = single ? "" : (end == &range->first ? "range start " : "range end ");
        Error(path, which + FormatIp(*end) + " is outside subnet " + subnet.ToString());
        break;
      }
    }
  }
};

}  // namespace

std::vector<std::optional<IpPrefix>> CheckIpPools(const CheckContext& c) {
  IpPoolChecks p(c);
  p.CheckPools();
  return std::move(p.subnets_);
}

namespace {

// Spiderpool's AI guides give each rail a pool like 172.16.11.0/16,
// 172.16.12.0/16, ...: eight /16s that are one subnet. In a pod with all rails
// every rail then has a route to every peer; the coordinator's per-rail
// policy route (`from <rail address> lookup <100+n>`) is what keeps a bound
// socket on its rail, and anything unbound (a ping, an RDMA CM lookup without
// a source) leaves by whichever rail's route is first. A warning, not an
// error: one subnet for all rails is a layout the guides use on purpose.
class RailOverlapChecks : private CheckContext {
 public:
  explicit RailOverlapChecks(const CheckContext& c) : CheckContext(c) {}

  void Check(const std::vector<std::optional<IpPrefix>>& pool_subnets) const {
    const DesiredState& s = s_;
    std::map<std::string, size_t> pool_index;
    for (size_t i = 0; i < s.ip_pools.size(); ++i) pool_index.emplace(s.ip_pools[i].name, i);
    // Pool index -> the nics of the multus configs that use it.
    std::map<size_t, std::set<std::string>> nics_of;
    for (const MultusConfigSpec& m : s.multus_configs) {
      for (const auto* refs : {&m.ippools.ipv4, &m.ippools.ipv6}) {
        for (const std::string& name : *refs) {
          auto it = pool_index.find(name);
          if (it != pool_index.end() && !m.nic.empty()) nics_of[it->second].insert(m.nic);
        }
      }
    }
    std::set<size_t> said;
    for (auto a = nics_of.begin(); a != nics_of.end(); ++a) {
      for (auto b = std::next(a); b != nics_of.end(); ++b) {
        const size_t i = a->first, j = b->first;
        if (i >= pool_subnets.size() || j >= pool_subnets.size()) continue;
        if (!pool_subnets[i] || !pool_subnets[j] || said.count(j)) continue;
        const IpPrefix& p = *pool_subnets[i];
        const IpPrefix& q = *pool_subnets[j];
        if (!p.Contains(q.Network()) && !q.Contains(p.Network())) continue;
        // Only pools of different nics: two pools of one rail may overlap.
        std::set<std::string> nics = a->second;
        nics.insert(b->second.begin(), b->second.end());
        if (nics.size() < 2) continue;
        said.insert(j);
        const std::string nic_list = Join(std::vector<std::string>(nics.begin(), nics.end()), ", ");
        Warning(PoolPath(j) + ".subnet",
                q.ToString() + " overlaps " + PoolPath(i) + ".subnet " + p.ToString() +
                    ": the rails of nics " + nic_list +
                    " share one subnet in every pod, so only the Spiderpool coordinator's "
                    "per-rail policy routes keep each rail's traffic on its own NIC (bound "
                    "sockets only); give each rail its own subnet unless that layout is meant");
      }
    }
  }
};

}  // namespace

void CheckRailSubnetOverlaps(const CheckContext& c,
                             const std::vector<std::optional<IpPrefix>>& pool_subnets) {
  RailOverlapChecks(c).Check(pool_subnets);
}

}  // namespace provisioner::config
