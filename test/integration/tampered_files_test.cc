// Saved plans and journals come back from disk (issue 18, item 9): a change
// edited to leave the root, or to another value, is refused before anything
// is applied, and the tree stays as it was.
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/tree_diff.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const char kHostYaml[] = R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: worker1
spec:
  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
      mtu: 9000
)";

json ReadJson(const std::string& path) {
  json j = json::parse(ReadFile(path), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << path;
  return j;
}

void WriteJson(const std::string& path, const json& j) {
  std::ofstream(path, std::ios::trunc) << j.dump(2) << "\n";
}

class TamperedFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ExtractHost("cx5-roce");
    pristine_ = ExtractHost("cx5-roce");
    // apply makes run/provisioner for its lock file (ignored in Diff()).
    std::filesystem::create_directories(pristine_ + "/run/provisioner");
    yaml_ = WriteTempFile("host.yaml", kHostYaml);
    plan_ = WriteTempFile("plan.json", "");
    RunResult p = Provisioner({"plan", yaml_, "--root", root_, "--out", plan_});
    ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  }
  // apply of the edited plan: exit 1 naming the edit, the tree unchanged.
  void ExpectRefused(const json& edited, const std::string& why) {
    WriteJson(plan_, edited);
    RunResult a = Provisioner({"apply", plan_, "--root", root_});
    EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
    EXPECT_NE(a.err.find(why), std::string::npos) << a.err;
    EXPECT_EQ(Diff(), "") << "the tree changed";
  }
  // The trees compared, without the apply lock file that apply creates and
  // keeps (run/provisioner/lock).
  std::string Diff() const {
    TreeDiffOptions o;
    o.ignore = {"run/provisioner/lock"};
    return DiffTreesText(pristine_, root_, o);
  }
  std::string root_, pristine_, yaml_, plan_;
};

TEST_F(TamperedFilesTest, PlanWithATargetLeavingTheRootIsRefused) {
  json plan = ReadJson(plan_);
  ASSERT_FALSE(plan["changes"].empty());
  plan["changes"].back()["target"] = "../../../../../../etc";
  ExpectRefused(plan, "the plan file was edited; run plan again");
}

TEST_F(TamperedFilesTest, PlanWithAnotherValueIsRefused) {
  json plan = ReadJson(plan_);
  ASSERT_FALSE(plan["changes"].empty());
  plan["changes"][0]["after"] = 127;
  ExpectRefused(plan, "is not what");
}

TEST_F(TamperedFilesTest, PlanWithAnAddedChangeIsRefused) {
  json plan = ReadJson(plan_);
  plan["changes"].push_back(plan["changes"][0]);
  ExpectRefused(plan, "the plan file was edited");
}

// A journal (what an interrupted apply leaves for --rollback) whose change
// points outside the root: the rollback is refused, nothing is written.
TEST_F(TamperedFilesTest, JournalWithATargetLeavingTheRootIsRefused) {
  json plan = ReadJson(plan_);
  json journal;
  journal["formatVersion"] = 1;
  journal["pid"] = 1;
  journal["startedAt"] = "2026-11-25T00:00:00Z";
  journal["changes"] = plan["changes"];
  for (json& c : journal["changes"]) {
    c["step"] = "applied";
    c["target"] = "../../../../../../etc";
  }
  std::filesystem::create_directories(root_ + "/run/provisioner");
  std::filesystem::create_directories(pristine_ + "/run/provisioner");
  WriteJson(root_ + "/run/provisioner/journal.json", journal);
  WriteJson(pristine_ + "/run/provisioner/journal.json", journal);
  RunResult a = Provisioner({"apply", yaml_, "--root", root_, "--rollback"});
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  EXPECT_NE(a.err.find("refused, nothing applied"), std::string::npos) << a.err;
  EXPECT_EQ(Diff(), "") << "the tree changed (the journal stays, for inspection)";
}

}  // namespace
}  // namespace provisioner::testing
