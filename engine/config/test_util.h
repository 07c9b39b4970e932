// Helpers for the loader tests: load a YAML string as "host.yaml" and get
// the diagnostics as the CLI prints them.
#ifndef PROVISIONER_ENGINE_CONFIG_TEST_UTIL_H_
#define PROVISIONER_ENGINE_CONFIG_TEST_UTIL_H_

#include <string>
#include <string_view>
#include <vector>

#include "engine/config/loader.h"

namespace provisioner::config::testing {

// Every diagnostic of LoadDesiredStateFromString(yaml, "host.yaml"),
// formatted ("host.yaml:14:7: spec.nics[0].numVfs: ...").
std::vector<std::string> Diagnose(std::string_view yaml);

// A minimal valid header (apiVersion, kind, metadata) followed by `spec`
// (text starting with "spec:"); lines 1-4 are the header, spec is line 5.
std::string WithHeader(std::string_view spec);

}  // namespace provisioner::config::testing

#endif  // PROVISIONER_ENGINE_CONFIG_TEST_UTIL_H_
