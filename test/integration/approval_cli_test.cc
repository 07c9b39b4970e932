// Issue 38 item 1: apply asks whenever a person typed the command. The
// decision is on stdin (a terminal) and the controlling terminal, never on
// stdout: `apply host.yaml | tee apply.log` and `apply -o json > out.json`
// typed at a console show the plan and ask; `-y` shows the plan and goes
// on; a saved plan is the approval and is applied without a question.
// Each case runs on a real pseudo-terminal (forkpty).
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/integration/harness.h"
#include "test/integration/pty_run.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

const std::string kPf0 = "/sys/bus/pci/devices/0000:af:00.0";

// cx5-roce-vfs (4 VFs on af:00.0) asked for 8: a replacement.
std::string EightVfs() { return WriteTempFile("host.yaml", Pf0Yaml(8)); }

std::string Quoted(const std::string& s) { return "'" + s + "'"; }

// `apply host.yaml | cat` at a terminal: stdout is a pipe, stdin the
// terminal. Today it changed the host with no plan and no question.
TEST(ApprovalCliTest, ApplyIntoAPipeAsksOnTheTerminal) {
  std::string root = ExtractHost("cx5-roce-vfs");
  std::string yaml = EightVfs();
  const std::string cmd = "set -o pipefail; " + Quoted(ProvisionerBinary()) + " apply " +
                          Quoted(yaml) + " --root " + Quoted(root) +
                          " --settle-timeout 20 | cat";
  PtyResult r = RunInPty({"/bin/bash", "-c", cmd}, "[y/N] ", "n\n", {{"NO_COLOR", "1"}});
  EXPECT_TRUE(r.answered) << r.out;
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("-/+ sriov 0000:af:00.0 numVfs: 4 -> 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Apply 1 change to " + root + "? [y/N] "), std::string::npos) << r.out;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "4\n");

  // -o json into a file: the plan and the question on stderr (the terminal),
  // and the file gets no document when the answer is no.
  const std::string result = WriteTempFile("result.json", "");
  const std::string json_cmd = Quoted(ProvisionerBinary()) + " apply " + Quoted(yaml) +
                               " --root " + Quoted(root) + " -o json > " + Quoted(result);
  PtyResult j = RunInPty({"/bin/bash", "-c", json_cmd}, "[y/N] ", "n\n", {{"NO_COLOR", "1"}});
  EXPECT_TRUE(j.answered) << j.out;
  EXPECT_EQ(j.exit_code, 1) << j.out;
  EXPECT_NE(j.out.find("-/+ sriov 0000:af:00.0 numVfs: 4 -> 8"), std::string::npos) << j.out;
  EXPECT_EQ(ReadFile(result), "");
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "4\n");
}

// A saved plan is the approval (terraform): `apply PLAN` at a terminal does
// not ask again (nothing is typed here: a question would never be answered).
TEST(ApprovalCliTest, ApplyOfASavedPlanDoesNotAskAgain) {
  std::string root = ExtractHost("cx5-roce-vfs");
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  std::string yaml = EightVfs();
  const std::string saved = WriteTempFile("plan.json", "");
  RunResult p = Provisioner({"plan", yaml, "--root", root, "--out", saved});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  PtyResult r = RunInPty({ProvisionerBinary(), "apply", saved, "--settle-timeout", "20"}, "", "",
                         {{"NO_COLOR", "1"}});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("[y/N]"), std::string::npos) << r.out;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "8\n");
}

// -y at a terminal shows the plan first, as terraform's -auto-approve does.
TEST(ApprovalCliTest, AutoApproveShowsThePlanFirst) {
  std::string root = ExtractHost("cx5-roce-vfs");
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  PtyResult r = RunInPty(
      {ProvisionerBinary(), "apply", EightVfs(), "--root", root, "-y", "--settle-timeout", "20"},
      "", "", {{"NO_COLOR", "1"}});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("[y/N]"), std::string::npos) << r.out;
  const size_t shown = r.out.find("-/+ sriov 0000:af:00.0 numVfs: 4 -> 8");
  const size_t done = r.out.find("Apply complete");
  ASSERT_NE(shown, std::string::npos) << r.out;
  ASSERT_NE(done, std::string::npos) << r.out;
  EXPECT_LT(shown, done) << r.out;
  EXPECT_NE(r.out.find("Apply 1 change to " + root + " (--auto-approve)."), std::string::npos)
      << r.out;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "8\n");
}

}  // namespace
}  // namespace provisioner::testing
