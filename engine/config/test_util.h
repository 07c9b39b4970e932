// Helpers for the loader tests: load a YAML string as "host.yaml" and get
// the diagnostics as the CLI prints them.
#ifndef PROVISIONER_ENGINE_CONFIG_TEST_UTIL_H_
#define PROVISIONER_ENGINE_CONFIG_TEST_UTIL_H_

#include <string>
#include <string_view>
#include <vector>

#include "engine/config/loader.h"
#include "gmock/gmock.h"

namespace provisioner::config::testing {

// The matchers the loader tests' tables use: with these, a test's one
// `using namespace testing;` (inside provisioner::config) brings the whole
// vocabulary below.
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;

// Every diagnostic of LoadDesiredStateFromString(yaml, "host.yaml", options),
// formatted ("host.yaml:14:7: spec.nics[0].numVfs: ...").
std::vector<std::string> Diagnose(std::string_view yaml, const LoadOptions& options = {});

// A minimal valid header (apiVersion, kind, metadata) followed by `spec`
// (text starting with "spec:"); lines 1-4 are the header, spec is line 5.
std::string WithHeader(std::string_view spec);

// WithHeader of a spec with one nic `name` whose nicSelector is `selector`
// (a flow mapping like "{pfNames: [ens6f0np0]}") on lines 5-8, and `rest`
// from line 9 on: the nic's further fields ("      numVfs: 4\n"), then any
// other spec keys ("  multusConfigs:\n...").
std::string OneNicSpec(std::string_view name, std::string_view selector, std::string_view rest);

// The same with the selector as a block, `vendor: "15b3"` on its own line 9,
// and `rest` from line 10 on.
std::string VendorNicSpec(std::string_view name, std::string_view rest);

// One document and what its diagnostics must match: IsEmpty() for a clean
// one, ElementsAre("host.yaml:line:column: path: message", ...) for exact
// diagnostics in order.
struct DiagnosisCase {
  std::string yaml;
  ::testing::Matcher<std::vector<std::string>> want;
};

// Expects Diagnose(c.yaml) to match c.want for every case, in one test; a
// failure names the case by its index and prints its document.
void ExpectDiagnoses(const std::vector<DiagnosisCase>& cases);

}  // namespace provisioner::config::testing

#endif  // PROVISIONER_ENGINE_CONFIG_TEST_UTIL_H_
