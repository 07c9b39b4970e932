// Saved plans and journals come back from disk (issue 18, item 9): a change
// edited to leave the root, or to another value, is refused before anything
// is applied, and the tree stays as it was.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kHostYaml = Pf0Yaml(4, R"(      mtu: 9000
)");

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
  // The trees compared, all of them (issue 26, item 14: a refused plan left
  // run/provisioner/lock, and the directories above it, in the tree).
  std::string Diff() const { return DiffTreesText(pristine_, root_, TreeDiffOptions()); }
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
  // Issue 26 item 13: the change, the field and both values are named.
  ExpectRefused(
      plan, "change 1 (\"" + plan["changes"][0]["id"].get<std::string>() + "\") differs from what");
  ExpectRefused(plan, "\"after\": \"127\" in the plan file, \"4\" when planned again");
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

// Issue 26 item 6: the desiredFile a saved plan names is read as host.yaml
// is: a FIFO there hung apply, /dev/zero read gigabytes (bad_alloc).
TEST_F(TamperedFilesTest, PlanWhoseDesiredFileIsAFifoOrADeviceIsRefusedInBoundedTime) {
  const std::string fifo = WriteTempFile("fifo-dir-marker", "") + ".fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  for (const std::string& target : {fifo, std::string("/dev/zero")}) {
    SCOPED_TRACE(target);
    json plan = ReadJson(plan_);
    plan["desiredFile"] = target;
    WriteJson(plan_, plan);
    std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL", "30"};
    for (const std::string& w : MemoryLimitPrefix()) argv.push_back(w);
    for (const std::string& w :
         {ProvisionerBinary(), std::string("apply"), plan_, std::string("--root"), root_}) {
      argv.push_back(w);
    }
    RunResult a = provisioner::testing::Run(argv);
    EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
    EXPECT_NE(a.err.find("not a regular file: refused"), std::string::npos) << a.err;
    EXPECT_EQ(Diff(), "") << "the tree changed";
  }
  // The plan file itself a FIFO: refused, not waited on.
  RunResult a = provisioner::testing::Run({"/usr/bin/timeout", "-s", "KILL", "30",
                                           ProvisionerBinary(), "apply", fifo, "--root", root_});
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  EXPECT_NE(a.err.find("a FIFO, not a regular file: refused"), std::string::npos) << a.err;
}

// Issue 26 item 14: a saved plan of another formatVersion, and a saved plan
// that is not valid JSON (its error is JSON's, not "invalid YAML").
TEST_F(TamperedFilesTest, PlanOfAnotherFormatVersionOrBrokenJsonIsRefusedAsAPlan) {
  json plan = ReadJson(plan_);
  plan["formatVersion"] = 2;
  ExpectRefused(plan, "formatVersion: 2, this provisioner reads saved plans of formatVersion 1");
  plan.erase("formatVersion");
  ExpectRefused(plan, "formatVersion: missing");
  std::string text = ReadJson(plan_).dump(2);
  text = ReadFile(plan_);
  std::ofstream(plan_, std::ios::trunc) << text.substr(0, text.size() / 2);
  RunResult a = Provisioner({"apply", plan_, "--root", root_});
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  EXPECT_NE(a.err.find("is malformed: not valid JSON: parse error at line"), std::string::npos)
      << a.err;
  EXPECT_EQ(a.err.find("YAML"), std::string::npos) << a.err;
  EXPECT_EQ(Diff(), "");
}

// Issue 26 item 5: every change record goes through the plan file and back
// unchanged: `plan --out` then `apply PLAN` of an unedited plan is never
// refused as edited. Every bundled example on every bundled host it plans
// for (a kernelModules change, with "detail": null, was always refused).
TEST(SavedPlanRoundTripTest, EveryExampleOnEveryHostAppliesItsUneditedPlan) {
  int round_trips = 0;
  std::set<std::string> modules;
  for (const char* host : {"cx5-roce", "cx5-ib", "hgx-h100", "hgx-h100-pcie", "cx5-roce-qos"}) {
    const std::string root = ExtractHost(host);
    for (const auto& e : std::filesystem::directory_iterator(RunfilePath("examples"))) {
      if (e.path().extension() != ".yaml") continue;
      SCOPED_TRACE(std::string(host) + " " + e.path().filename().string());
      const std::string plan = WriteTempFile("plan.json", "");
      RunResult p = Provisioner({"plan", e.path().string(), "--root", root, "--out", plan});
      if (p.exit_code != 0) continue;  // the example is for another host
      json saved = ReadJson(plan);
      if (saved["changes"].empty()) continue;
      for (const json& c : saved["changes"]) modules.insert(c["module"].get<std::string>());
      RunResult a = Provisioner({"apply", plan, "--root", root, "--dry-run"});
      EXPECT_EQ(a.exit_code, 0) << a.out << a.err;
      EXPECT_EQ(a.err.find("the plan file was edited"), std::string::npos) << a.err;
      ++round_trips;
    }
  }
  EXPECT_GE(round_trips, 3);
  EXPECT_EQ(modules.count("kmod"), 1u) << "no example plans a kernelModules change";
}

// Issue 26 item 14: a journal replaced by an absolute link said "Nothing to
// roll back", exit 0.
TEST_F(TamperedFilesTest, JournalThatIsALinkIsRefusedNotIgnored) {
  const std::string outside = WriteTempFile("outside-journal.json", "{}\n");
  std::filesystem::create_directories(root_ + "/run/provisioner");
  ASSERT_EQ(::symlink(outside.c_str(), (JournalPath(root_)).c_str()), 0);
  RunResult a = Provisioner({"apply", yaml_, "--root", root_, "--rollback"});
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  EXPECT_NE(a.err.find("journal.json is a symbolic link"), std::string::npos) << a.err;
  EXPECT_EQ(a.out.find("Nothing to roll back"), std::string::npos) << a.out;
  EXPECT_EQ(ReadFile(outside), "{}\n");
}

}  // namespace
}  // namespace provisioner::testing
