// What every host.yaml rule (engine/config/*_checks.cc) works with: the
// document, the paths the schema check already reported (a rule that reads
// one is skipped), and the list the diagnostics go to. Each area's rules are
// a class deriving from CheckContext; CheckDesiredState (checks.cc) runs
// them in the order below.
#ifndef PROVISIONER_ENGINE_CONFIG_CHECK_CONTEXT_H_
#define PROVISIONER_ENGINE_CONFIG_CHECK_CONTEXT_H_

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/config/ip.h"
#include "engine/model/desired.h"

namespace provisioner::config {

class CheckContext {
 public:
  // `diags` outlives the context and every copy of it.
  CheckContext(const DesiredState& s, const std::set<std::string>& tainted,
               std::vector<Diagnostic>* diags)
      : s_(s), tainted_(tainted), diags_(diags) {}

 protected:
  void Error(std::string path, std::string message) const;
  void Warning(std::string path, std::string message) const;

  // True when `path` or a path above it has already been reported.
  bool Tainted(const std::string& path) const;
  // True when `path`, a path above it or a path below it has been reported:
  // for rules that read a whole subtree.
  bool TaintedWithin(const std::string& path) const;

  // "spec.nics[0], line 7"
  std::string Where(const std::string& path) const;
  // "host.yaml:12:15" of `path`, for a message about two fields.
  std::string At(const std::string& path) const;

  static std::string NicPath(size_t i);
  static std::string PoolPath(size_t i);
  static std::string MultusPath(size_t i);

  const DesiredState& s_;
  const std::set<std::string>& tainted_;

 private:
  std::vector<Diagnostic>* diags_;
};

// "a, b, c"
std::string Join(const std::vector<std::string>& items, const char* sep);
// "IPv4" / "IPv6"
std::string IpVersionName(int version);
extern const char kNotLabelValue[];

// The areas, in the order CheckDesiredState runs them.
// spec.nics[] (nic_checks.cc); calls the two VF rules of vf_checks.cc.
void CheckNics(const CheckContext& c);
void CheckNicVfSettings(const CheckContext& c, const NicSpec& nic, const std::string& nic_path);
void CheckVfGroups(const CheckContext& c, const NicSpec& nic, const std::string& nic_path);
// Names, duplicates and spec.kernelModules (name_checks.cc).
void CheckNames(const CheckContext& c);
// spec.ipPools[] (ip_pool_checks.cc): the parsed subnet of each pool, by
// index (nullopt: missing, invalid or tainted), for CheckMultusConfigs.
std::vector<std::optional<IpPrefix>> CheckIpPools(const CheckContext& c);
// Subnets of the pools of two multus configs on different nics that overlap
// (ip_pool_checks.cc): a warning, the rails of a pod share a route.
void CheckRailSubnetOverlaps(const CheckContext& c,
                             const std::vector<std::optional<IpPrefix>>& pool_subnets);
// spec.multusConfigs[] (multus_checks.cc).
void CheckMultusConfigs(const CheckContext& c,
                        const std::vector<std::optional<IpPrefix>>& pool_subnets);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_CHECK_CONTEXT_H_
