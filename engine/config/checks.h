// The rules of host.yaml that a JSON Schema cannot express: names unique,
// references resolve, addresses inside their subnet, CNI types that fit the
// NIC's link type and the RDMA netns mode, valid Linux interface names.
// Every problem is reported, not just the first.
#ifndef PROVISIONER_ENGINE_CONFIG_CHECKS_H_
#define PROVISIONER_ENGINE_CONFIG_CHECKS_H_

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/model/desired.h"

namespace provisioner::config {

// Runs every rule on `state` (its marks give "first at line N" hints). A rule
// is skipped when a field it reads is in `tainted` or below a tainted path:
// the schema check has already reported that field.
std::vector<Diagnostic> CheckDesiredState(const DesiredState& state,
                                          const std::set<std::string>& tainted = {});

// Why `name` is not a valid Linux interface name (the kernel's
// dev_valid_name), or nullopt when it is.
std::optional<std::string> InterfaceNameProblem(std::string_view name);

// DNS-1123 label (<= 63 lower-case alphanumerics and '-', alphanumeric at
// both ends) and subdomain (dot-separated labels, <= 253): Kubernetes object
// names and namespaces.
bool IsDnsLabel(std::string_view s);
// A Kubernetes label value (also a selector's): "" or up to 63 characters.
bool IsLabelValue(std::string_view s);
bool IsDnsSubdomain(std::string_view s);

// Kubernetes label key: [prefix/]name, prefix a DNS-1123 subdomain (<= 253),
// name <= 63 alphanumerics, '-', '_', '.', starting and ending alphanumeric.
bool IsLabelKey(std::string_view key);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_CHECKS_H_
