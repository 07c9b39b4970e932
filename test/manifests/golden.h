// Golden files of the manifests tests: compare, or rewrite them when run as
//   UPDATE_GOLDEN=1 bazel run //test/manifests:<test>
// (bazel run sets BUILD_WORKSPACE_DIRECTORY: the files are written there).
#ifndef PROVISIONER_TEST_MANIFESTS_GOLDEN_H_
#define PROVISIONER_TEST_MANIFESTS_GOLDEN_H_

#include <string>

namespace provisioner::testing {

// `file` is workspace-relative ("test/manifests/golden/x.yaml").
void ExpectGolden(const std::string& file, const std::string& got);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_MANIFESTS_GOLDEN_H_
