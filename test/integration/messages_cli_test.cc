// Issue 38: mistakes get the right message (item 7), warnings go to stderr
// with one prefix and -q silences them (item 6), and the command line's
// small things (item 12), end to end with the real binary.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

TEST(MessagesCliTest, UnknownCommandSaysSoAndSuggests) {
  RunResult r = Provisioner({"dicover"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("unknown command \"dicover\"; did you mean \"discover\"?"),
            std::string::npos)
      << r.err;
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{"help", "foo"}, std::vector<std::string>{"foo", "--help"}}) {
    RunResult h = Provisioner(argv);
    EXPECT_EQ(h.exit_code, 1) << argv[0] << " " << argv[1] << "\n" << h.out;
    EXPECT_NE(h.err.find("unknown command \"foo\""), std::string::npos) << h.err;
  }
  EXPECT_EQ(Provisioner({"help", "plan"}).exit_code, 0);
}

TEST(MessagesCliTest, MistypedOptionsGetTheNearestOne) {
  RunResult dry = Provisioner({"apply", "host.yaml", "--dryrun"});
  EXPECT_EQ(dry.exit_code, 1);
  EXPECT_NE(dry.err.find("did you mean --dry-run?"), std::string::npos) << dry.err;
  RunResult code = Provisioner({"plan", "host.yaml", "--detailed-exit-code"});
  EXPECT_EQ(code.exit_code, 1);
  EXPECT_NE(code.err.find("did you mean --detailed-exitcode?"), std::string::npos) << code.err;
}

TEST(MessagesCliTest, DurationsInSecondsOrWithAUnit) {
  // Accepted: parsing gets past the option to the missing file.
  for (const char* d : {"300", "5m", "30s", "1m30s"}) {
    RunResult r = Provisioner({"apply", "/nonexistent/host.yaml", "--settle-timeout", d});
    EXPECT_EQ(r.err.find("--settle-timeout"), std::string::npos) << d << ": " << r.err;
  }
  RunResult bad = Provisioner({"apply", "host.yaml", "--settle-timeout", "5 minutes"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("--settle-timeout: expected seconds"), std::string::npos) << bad.err;
  RunResult huge = Provisioner({"apply", "host.yaml", "--settle-timeout", "1e400"});
  EXPECT_EQ(huge.exit_code, 1);
  EXPECT_LT(huge.err.size(), 200u) << huge.err;  // not a 309-digit range
  RunResult zero = Provisioner({"apply", "host.yaml", "--settle-timeout", "0"});
  EXPECT_EQ(zero.exit_code, 1);
}

TEST(MessagesCliTest, VerboseWithQuietIsAnError) {
  RunResult r = Provisioner({"-v", "-q", "discover", "--root", ExtractHost("cx5-roce")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("excludes"), std::string::npos) << r.err;
}

TEST(MessagesCliTest, HostYamlMistakesSayTheFix) {
  std::string yaml = WriteTempFile("mistakes.yaml", HostYaml(R"(  rdma:
    netnsMode: Exclusive
  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.9"] }
      numVfs: "12"
)"));
  RunResult r = Provisioner({"validate", yaml});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(":7:16: spec.rdma.netnsMode: \"Exclusive\" is not one of: shared, "
                       "exclusive (did you mean \"exclusive\"?)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(the function is 0\u20137, not 9)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(":11:15: spec.nics[0].numVfs: expected an integer, got string \"12\" "
                       "(remove the quotes: 12)"),
            std::string::npos)
      << r.err;

  // A key without its colon: reported on its own line (7), not on line 8.
  std::string colon = WriteTempFile("colon.yaml", HostYaml(R"(  nics:
    - name pf0
      numVfs: 4
)"));
  RunResult c = Provisioner({"validate", colon});
  EXPECT_EQ(c.exit_code, 1);
  EXPECT_NE(c.err.find("colon.yaml:7:11: invalid YAML: \"name pf0\" has no colon after its key: "
                       "write \"name: pf0\""),
            std::string::npos)
      << c.err;
}

// Item 6 and the lock holder of item 7: while an apply runs, plan's warning
// is on stderr with the one prefix (not in the table on stdout), -q hides
// it, and a second apply's refusal names the holder's pid and start time.
// It says "in progress", not "interrupted" (ux item 9), until the holder is
// killed.
TEST(MessagesCliTest, LockWarningsOnStderrAndTheHolderNamed) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/20000);  // VFs come, netdevs do not
  ASSERT_TRUE(sim.ready());
  std::string yaml = Example("roce-sriov.yaml");
  pid_t pid = Spawn({ProvisionerBinary(), "apply", yaml, "--root", root, "--settle-timeout", "60"});
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitUntil([&] { return ApplyingInJournal(root) > 0; }));
  const std::string holder = "an apply is in progress (pid " + std::to_string(pid) + ", since ";
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.out.find("in progress"), std::string::npos) << p.out;
  EXPECT_EQ((p.out + p.err).find("interrupted"), std::string::npos) << p.out << p.err;
  EXPECT_NE(p.err.find("provisioner: warning: " + holder), std::string::npos) << p.err;
  RunResult q = Provisioner({"plan", yaml, "--root", root, "-q"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.err.find("warning"), std::string::npos) << q.err;
  EXPECT_EQ(q.out.find("warning"), std::string::npos) << q.out;
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a.exit_code, 1);
  EXPECT_NE(a.err.find(holder), std::string::npos) << a.err;
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  // The journal left behind: the interrupted apply's warning, on stderr too.
  RunResult after = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(after.out.find("interrupted"), std::string::npos) << after.out;
  EXPECT_NE(after.err.find("provisioner: warning: an earlier apply was interrupted"),
            std::string::npos)
      << after.err;
}

// Item 8: a selector that matches nothing suggests only what could match:
// the field that excludes every function is named with what the host has,
// and a name is suggested only among the functions the other fields allow.
TEST(MessagesCliTest, SelectorsThatMatchNothingSuggestWhatCouldMatch) {
  const std::string root = ExtractHost("cx5-roce");  // two 15b3:1017 PFs
  const std::string device = WriteTempFile("device.yaml", HostYaml(R"(  nics:
    - name: pf0
      nicSelector: { vendor: "15b3", deviceID: "1021", pfNames: [ens6f0np0] }
      numVfs: 4
)"));
  RunResult d = Provisioner({"validate", device, "--root", root});
  EXPECT_EQ(d.exit_code, 1);
  EXPECT_NE(d.err.find("device.yaml:8:20: note: spec.nics[0].nicSelector: no function has "
                       "deviceID 1021 here (vendor 15b3); deviceIDs here: 1017 \u00d72"),
            std::string::npos)
      << d.err;
  EXPECT_EQ(d.err.find("did you mean"), std::string::npos) << d.err;
  // pfNames with a typo, on the right card: the nearest name among them.
  const std::string typo = WriteTempFile("typo.yaml", HostYaml(R"(  nics:
    - name: pf0
      nicSelector: { deviceID: "1017", pfNames: [ens6f1np] }
      numVfs: 4
)"));
  RunResult t = Provisioner({"validate", typo, "--root", root});
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("; did you mean ens6f1np1?"), std::string::npos) << t.err;
}

// Item 12: apply --dry-run ends with a footer naming the root (it came
// first, without the root).
TEST(MessagesCliTest, DryRunFooterNamesTheRoot) {
  const std::string root = ExtractHost("cx5-roce");
  RunResult r = Provisioner({"apply", Example("roce-sriov.yaml"), "--root", root, "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const size_t footer = r.out.find("Dry run: nothing was changed under " + root + ".");
  ASSERT_NE(footer, std::string::npos) << r.out;
  EXPECT_GT(footer, r.out.find("Plan: ")) << r.out;
}

}  // namespace
}  // namespace provisioner::testing
