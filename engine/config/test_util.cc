#include "engine/config/test_util.h"

#include "gtest/gtest.h"

namespace provisioner::config::testing {

std::vector<std::string> Diagnose(std::string_view yaml, const LoadOptions& options) {
  LoadResult r = LoadDesiredStateFromString(yaml, "host.yaml", options);
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

namespace {

// Lines 5-8 of a one-nic spec, up to the nic's "nicSelector:".
std::string NicHead(std::string_view name) {
  return WithHeader(
      "spec:\n"    // 5
      "  nics:\n"  // 6
      "    - name: " +
      std::string(name) +
      "\n"                    // 7
      "      nicSelector:");  // 8
}

}  // namespace

std::string OneNicSpec(std::string_view name, std::string_view selector, std::string_view rest) {
  return NicHead(name) + " " + std::string(selector) + "\n" + std::string(rest);
}

std::string VendorNicSpec(std::string_view name, std::string_view rest) {
  return NicHead(name) + "\n        vendor: \"15b3\"\n" + std::string(rest);  // 9; 10...
}

void ExpectDiagnoses(const std::vector<DiagnosisCase>& cases) {
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i) + ":\n" + cases[i].yaml);
    EXPECT_THAT(Diagnose(cases[i].yaml), cases[i].want);
  }
}

}  // namespace provisioner::config::testing
