// host.yaml rules of spec.ipPools[]: the subnet in CIDR notation, ips and
// excludeIPs (addresses or ranges) and the gateway inside it.
#include <optional>
#include <vector>

#include "engine/config/check_context.h"
#include "engine/config/field_path.h"
#include "engine/config/text.h"
#include "engine/config/ip.h"

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
        Warning(subnet_path, Quote(pool.subnet) + " has host bits set; the subnet is " +
                                 subnet->ToString());
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
          Error(gw_path,
                "gateway " + FormatIp(*gw) + " is outside subnet " + subnet->ToString());
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
        Error(path, Quote(text) +
                        " is not an IP address or a range \"first-last\" of one IP version");
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

}  // namespace provisioner::config
