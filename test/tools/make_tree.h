// Generates host trees: a preset (test/support/host_presets.h), then SR-IOV
// VFs enabled through the kernel simulator, exactly as a host would show them
// once settled. Backs //test/tools:make_tree and the freshness test of the
// checked-in trees.
#ifndef PROVISIONER_TEST_TOOLS_MAKE_TREE_H_
#define PROVISIONER_TEST_TOOLS_MAKE_TREE_H_

#include <string>
#include <utility>
#include <vector>

#include "engine/base/status.h"

namespace provisioner::testing {

struct TreeRequest {
  std::string preset;                            // "cx5-roce", "cx5-ib", "scaled-<P>"
  std::vector<std::pair<std::string, int>> vfs;  // PF BDF -> VFs to enable
  int all_vfs = 0;                               // VFs to enable on every SR-IOV PF (0 = none)
};

// Builds the tree into `dir` (created; must be empty or missing).
Status MakeTree(const TreeRequest& request, const std::string& dir);

// The ttar text of the tree, with a header comment naming the command that
// regenerates it.
StatusOr<std::string> MakeTreeTtar(const TreeRequest& request);

// "make_tree --preset cx5-roce --vfs 0000:af:00.0=4"
std::string MakeTreeCommand(const TreeRequest& request);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_TOOLS_MAKE_TREE_H_
