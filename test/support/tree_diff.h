// Compares two directory trees entry by entry (type, mode, file bytes, link
// targets), for "the tree is back to what it was" assertions.
#ifndef PROVISIONER_TEST_SUPPORT_TREE_DIFF_H_
#define PROVISIONER_TEST_SUPPORT_TREE_DIFF_H_

#include <string>
#include <vector>

namespace provisioner::testing {

struct TreeDiffOptions {
  // Relative paths (and everything below them) left out of the comparison,
  // e.g. "run/kernel-sim".
  std::vector<std::string> ignore;
  bool compare_modes = true;
};

// One line per difference, sorted by path:
//   "only in a: sys/x"            "only in b: sys/y"
//   "type differs: sys/z (file vs symlink)"
//   "content differs: sys/f: \"0\\n\" vs \"4\\n\""
//   "link differs: sys/l: ../a vs ../b"      "mode differs: sys/f: 644 vs 444"
// Empty when the trees are equal. A missing tree reads as empty.
std::vector<std::string> DiffTrees(const std::string& a, const std::string& b,
                                   const TreeDiffOptions& options = {});

// DiffTrees joined with newlines, at most `max_lines` lines (then "... N more").
std::string DiffTreesText(const std::string& a, const std::string& b,
                          const TreeDiffOptions& options = {}, size_t max_lines = 40);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_TREE_DIFF_H_
