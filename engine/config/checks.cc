#include "engine/config/checks.h"

#include <cctype>

#include "engine/config/check_context.h"
#include "engine/config/field_path.h"
#include "engine/config/text.h"

// The rules per area of host.yaml: nic_checks.cc (spec.nics[]), vf_checks.cc
// (a nic's VFs and vfGroups), name_checks.cc (names, duplicates,
// spec.kernelModules), ip_pool_checks.cc (spec.ipPools[]), multus_checks.cc
// (spec.multusConfigs[]); spec.kubernetes and the Kubernetes name rules here.

namespace provisioner::config {
namespace {

bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool IsQualifiedName(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

class KubernetesChecks : private CheckContext {
 public:
  explicit KubernetesChecks(const CheckContext& c) : CheckContext(c) {}

  // -- spec.kubernetes ------------------------------------------------------

  void CheckKubernetes() {
    if (!s_.kubernetes) return;
    const KubernetesSpec& k = *s_.kubernetes;
    bool selector_clean = !Tainted("spec.kubernetes.nodeSelector");
    for (const auto& [key, value] : k.node_selector) {
      if (!selector_clean) break;
      // The key is checked even when its value is bad: the schema cannot
      // report keys (valijson's propertyNames fails without an error).
      std::string path = "spec.kubernetes.nodeSelector." + key;
      if (!IsLabelKey(key)) {
        Error(path, Quote(key) +
                        " is not a valid label key ([prefix/]name: name up to 63 letters, "
                        "digits, '-', '_' or '.', prefix a DNS subdomain)");
      } else if (!IsLabelValue(value) && !Tainted(path)) {
        Error(path, Quote(value) + " " + kNotLabelValue);
      }
    }
    if (k.rdma_shared_device_plugin && s_.rdma && s_.rdma->netns_mode == "exclusive" &&
        !Tainted("spec.rdma.netnsMode")) {
      Warning("spec.kubernetes.rdmaSharedDevicePlugin",
              "the RDMA shared device plugin shares RDMA devices between pods, which needs "
              "spec.rdma.netnsMode shared, but it is exclusive (" +
                  Where("spec.rdma.netnsMode") + ")");
    }
  }
};

}  // namespace

bool IsLabelValue(std::string_view s) {
  // k8s.io/apimachinery validation.IsValidLabelValue: empty, or at most 63
  // characters, alphanumeric at both ends, '-', '_' or '.' between.
  if (s.empty()) return true;
  if (s.size() > 63) return false;
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  for (char c : s) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return alnum(s.front()) && alnum(s.back());
}

bool IsDnsLabel(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return s.front() != '-' && s.back() != '-';
}

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!IsDnsLabel(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}


std::optional<std::string> InterfaceNameProblem(std::string_view name) {
  if (name.empty()) return "it is empty";
  if (name.size() > 15) return "it is longer than 15 characters";
  if (name == "." || name == "..") return "\".\" and \"..\" are reserved";
  for (char c : name) {
    if (c == '/') return "it contains '/'";
    if (c == ':') return "it contains ':'";
    if (std::isspace(static_cast<unsigned char>(c)) || c == '\0') {
      return "it contains whitespace";
    }
  }
  return std::nullopt;
}

bool IsLabelKey(std::string_view key) {
  size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsQualifiedName(key);
  return IsDnsSubdomain(key.substr(0, slash)) && IsQualifiedName(key.substr(slash + 1));
}

std::vector<Diagnostic> CheckDesiredState(const DesiredState& state,
                                          const std::set<std::string>& tainted) {
  std::vector<Diagnostic> diags;
  const CheckContext c(state, tainted, &diags);
  CheckNics(c);
  CheckNames(c);
  const std::vector<std::optional<IpPrefix>> subnets = CheckIpPools(c);
  CheckMultusConfigs(c, subnets);
  CheckRailSubnetOverlaps(c, subnets);
  KubernetesChecks(c).CheckKubernetes();
  return diags;
}

}  // namespace provisioner::config
