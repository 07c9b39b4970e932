// Golden plans: every examples/*.yaml planned in process (engine/core/session.h,
// every registered module) against its bundled host tree, as the table and
// the JSON `provisioner plan` prints: test/golden_plans/golden/<example>.txt
// (what a terminal shows: the diagnostics `plan` prints on stderr, then the
// table) and .json. The JSON's root is "examples/hosts/<tree>" (the tree as
// the examples' comments materialize it), not the test's temporary directory.
// Regenerate after an intended change with
//   UPDATE_GOLDEN=1 bazel run //test/golden_plans:golden_plans_test
// (bazel run sets BUILD_WORKSPACE_DIRECTORY: the files are written there).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/core/session.h"
#include "engine/output/render.h"
#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

// Which bundled tree (examples/hosts/<tree>.ttar) each example is written for.
const std::map<std::string, std::string>& TreeOf() {
  static const auto* trees = new std::map<std::string, std::string>{
      {"firmware-reset", "cx5-ib"},
      {"firmware-update", "cx5-ib"},
      {"gpudirect-tuned", "hgx-h100-pcie"},
      {"ib-firmware", "cx5-ib"},
      {"ib-sriov", "cx5-ib"},
      {"ipoib", "cx5-ib"},
      {"ipoib-host", "cx5-ib"},
      {"kernel-cmdline", "hgx-h100-pcie"},
      {"rails", "hgx-h100"},
      {"rails-8gpu", "hgx-h100"},
      {"rails-hostnet", "hgx-h100"},
      {"roce-lossless", "cx5-roce-qos"},
      {"roce-shared-macvlan", "cx5-roce"},
      {"roce-sriov", "cx5-roce"},
      {"vf-groups", "cx5-roce"},
      {"roce-sriov-jumbo", "cx5-roce"},
      {"roce-switchdev", "cx5-roce"},
  };
  return *trees;
}

std::vector<std::string> Examples() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(RunfilePath("examples"), ec)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Each tree extracted once.
std::string TreeDir(const std::string& tree) {
  static auto* dirs = new std::map<std::string, std::string>();
  auto it = dirs->find(tree);
  if (it != dirs->end()) return it->second;
  std::string dir = MakeTempDir("golden-" + tree);
  Status s = ExtractTtar(RunfilePath("examples/hosts/" + tree + ".ttar"), dir);
  EXPECT_TRUE(s.ok()) << tree << ": " << s.message();
  return (*dirs)[tree] = dir;
}

// Compares `got` with golden/<name>, or rewrites it (UPDATE_GOLDEN=1 under bazel run).
void CheckGolden(const std::string& name, const std::string& got) {
  const std::string rel = "test/golden_plans/golden/" + name;
  const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (std::getenv("UPDATE_GOLDEN") != nullptr && ws != nullptr) {
    std::ofstream out(std::string(ws) + "/" + rel, std::ios::trunc);
    out << got;
    EXPECT_TRUE(out.good()) << "could not write " << rel;
    return;
  }
  std::ifstream in(RunfilePath(rel));
  ASSERT_TRUE(in) << rel << " missing: run with UPDATE_GOLDEN=1 (see the top of this file)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(got, want.str()) << rel << " differs: if intended, UPDATE_GOLDEN=1";
}

TEST(GoldenPlansTest, EveryExampleHasItsTree) {
  std::vector<std::string> examples = Examples();
  ASSERT_FALSE(examples.empty()) << "no examples/*.yaml in the runfiles";
  for (const auto& e : examples) EXPECT_EQ(TreeOf().count(e), 1u) << e << ": add it to TreeOf()";
}

TEST(GoldenPlansTest, EveryExamplePlansAsItsGolden) {
  for (const auto& example : Examples()) {
    SCOPED_TRACE(example);
    auto tree = TreeOf().find(example);
    if (tree == TreeOf().end()) continue;  // EveryExampleHasItsTree fails
    PlanRequest request;
    request.file = RunfilePath("examples/" + example + ".yaml");
    request.host.root = TreeDir(tree->second);
    PlanOutcome p = PlanFile(request);
    ASSERT_TRUE(p.status.ok()) << p.status.message();
    std::string text;
    for (const auto& batch : p.diagnostics) {
      for (const auto& d : batch.items) {
        text += FormatDiagnostic("examples/" + example + ".yaml", batch.marks, d) + "\n";
      }
    }
    EXPECT_FALSE(p.plan.changes.empty()) << "a golden plan worth having changes";
    std::string json = PlanToJson(p.plan, "examples/hosts/" + tree->second).dump(2) + "\n";
    EXPECT_EQ(json.find(request.host.root), std::string::npos) << "the temporary root leaked";
    CheckGolden(example + ".txt", text + RenderPlanTable(p.plan, /*color=*/false));
    CheckGolden(example + ".json", json);
  }
}

}  // namespace
}  // namespace provisioner::testing
