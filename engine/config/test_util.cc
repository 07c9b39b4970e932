#include "engine/config/test_util.h"

namespace provisioner::config::testing {

std::vector<std::string> Diagnose(std::string_view yaml) {
  LoadResult r = LoadDesiredStateFromString(yaml, "host.yaml");
  std::vector<std::string> out;
  for (const auto& d : r.diagnostics) out.push_back(FormatDiagnostic("host.yaml", r.marks, d));
  return out;
}

std::string WithHeader(std::string_view spec) {
  return "apiVersion: provisioner/v1alpha1\n"
         "kind: HostConfig\n"
         "metadata:\n"
         "  name: worker1\n" +
         std::string(spec);
}

}  // namespace provisioner::config::testing
