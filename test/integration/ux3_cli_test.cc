// Issue 38, what remained after ux2, end to end with the real binary: a
// missing colon before a flow mapping is reported where it is (item 7);
// `apply --rollback` without FILE on a journal an older provisioner wrote
// (item 12); natural order in the lists a person reads (item 12).
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/integration/pty_run.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Example(const std::string& name) { return RunfilePath("examples/" + name); }

// Item 7: "nicSelector { vendor: ... }" (a space, no colon) and
// "nicSelector {vendor: 15b3}": yaml-cpp read the first as an indentation
// error lines later and the second as a key "nicSelector {vendor". Both are
// the missing colon, at the column just after the key.
TEST(Ux3CliTest, MissingColonBeforeAFlowMappingIsReportedOnItsLine) {
  const std::string spaced = WriteTempFile("spaced.yaml", HostYaml(R"(  nics:
    - name: pf0
      nicSelector { vendor: "15b3", deviceID: "1017" }
      numVfs: 4
)"));
  RunResult s = Provisioner({"validate", spaced});
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_THAT(s.err,
              HasSubstr(spaced + ":8:18: invalid YAML: missing ':' after nicSelector: write "
                                 "\"nicSelector: { vendor: \"15b3\", deviceID: \"1017\" }\""));
  EXPECT_THAT(s.err, Not(HasSubstr("indentation")));

  const std::string tight = WriteTempFile("tight.yaml", HostYaml(R"(  nics:
    - name: pf0
      nicSelector {vendor: 15b3}
      numVfs: 4
)"));
  RunResult t = Provisioner({"plan", tight, "--root", ExtractHost("cx5-roce")});
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_THAT(t.err, HasSubstr(tight + ":8:18: invalid YAML: missing ':' after nicSelector"));
  EXPECT_THAT(t.err, Not(HasSubstr("nicSelector {vendor\"")));

  // A list too; text inside a block scalar is text.
  const std::string list = WriteTempFile("list.yaml", HostYaml(R"(  nics:
    - name: pf0
      nicSelector:
        rootDevices ["0000:af:00.0"]
      numVfs: 4
)"));
  RunResult l = Provisioner({"validate", list, "-o", "json"});
  EXPECT_EQ(l.exit_code, 1);
  const json doc = json::parse(l.out);
  ASSERT_FALSE(doc["diagnostics"].empty()) << l.out;
  EXPECT_EQ(doc["diagnostics"][0]["line"], 9) << l.out;
  EXPECT_EQ(doc["diagnostics"][0]["column"], 20) << l.out;
  EXPECT_THAT(doc["diagnostics"][0]["message"].get<std::string>(),
              HasSubstr("missing ':' after rootDevices"));
}

// An apply of roce-sriov.yaml killed (-9) in its VF wait, its journal then
// made as an older provisioner wrote it: no "hostYaml". `edit` changes it more.
std::string KilledApplyWithAnOldJournal(const std::string& root,
                                        const std::function<void(json&)>& edit = nullptr) {
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/20000);  // VFs come, netdevs do not
  EXPECT_TRUE(sim.ready());
  // Killed once the PF's 12 VFs exist and apply waits for their netdevs (its
  // numVfs change "applying"), not at the first "applying" entry: under load
  // that is an earlier change, and the sriov one would not be in the journal.
  Interrupted killed = InterruptWhen(
      {"apply", Example("roce-sriov.yaml"), "--root", root, "--settle-timeout", "60"},
      [&] { return VfsMade(root, "0000:af:00.0", 12) && ApplyingInJournal(root) > 0; }, SIGKILL);
  EXPECT_TRUE(killed.reached);
  EXPECT_EQ(killed.exit_code, -1) << "not ended by the signal";
  const std::string journal = JournalPath(root);
  json j = json::parse(ReadFile(journal));
  EXPECT_TRUE(j.contains("hostYaml")) << j.dump();
  j.erase("hostYaml");
  if (edit) edit(j);
  std::ofstream(journal) << j.dump(2) << "\n";
  return journal;
}

// Item 12: a journal an older provisioner wrote has no "hostYaml": apply
// --rollback without FILE undoes it from the journal's own entries.
TEST(Ux3CliTest, RollbackOfAnOldJournalNeedsNoFile) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string before = ReadFile(root + "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs");
  const std::string journal = KilledApplyWithAnOldJournal(root);
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  RunResult r = Provisioner({"apply", "--rollback", "--root", root});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.err, HasSubstr(journal + " does not name its host.yaml (an older provisioner "
                                         "wrote it): rolling back from its "));
  EXPECT_THAT(r.out, HasSubstr("Rollback complete"));
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs"), before);
  EXPECT_FALSE(WaitUntil([&] { return ::access(journal.c_str(), F_OK) == 0; }, 0));
  // And nothing is left to do.
  RunResult again = Provisioner({"apply", "--rollback", "--root", root});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_THAT(again.out, HasSubstr("Nothing to roll back"));
}

// When that rollback fails (here: the journal's PF is gone) it is not
// "complete", the journal stays, and the next step names the journal and
// the command with FILE.
TEST(Ux3CliTest, AFailedRollbackOfAnOldJournalSaysWhatToRun) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string journal = KilledApplyWithAnOldJournal(root, [](json& j) {
    for (json& c : j["changes"]) {
      if (c["module"] != "sriov") continue;
      c["target"] = "0000:5e:00.0";  // no such function under the root
      c["id"] = "sriov/0000:5e:00.0/numVfs";
    }
  });
  RunResult r = Provisioner({"apply", "--rollback", "--root", root});
  EXPECT_EQ(r.exit_code, 1) << r.err << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("Rollback complete")));
  EXPECT_THAT(r.out, HasSubstr("Rollback incomplete: 0 of 1 changes undone under " + root));
  EXPECT_THAT(r.err, HasSubstr("provisioner: next: the interrupted apply's journal " + journal +
                               " is kept; roll back with its host.yaml: provisioner apply "
                               "--rollback FILE --root " +
                               root));
  EXPECT_TRUE(Exists(journal));
}

// Item 12, natural order: `apply -v` lists each VF's step in VF order
// (ens6f0v2 before ens6f0v10; the virtfnN links came in ListDir's bytewise
// order, v10 and v11 between v1 and v2).
TEST(Ux3CliTest, VerboseApplyListsVfsInNaturalOrder) {
  const std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  const std::string yaml = Example("roce-sriov.yaml");
  RunResult made = Provisioner({"apply", yaml, "--root", root, "--settle-timeout", "60"});
  ASSERT_EQ(made.exit_code, 0) << made.err << made.out;
  // Every VF netdev down (IFF_UP cleared): apply brings each up, one step each.
  for (int n = 0; n < 12; ++n) {
    std::ofstream(root + "/sys/class/net/ens6f0v" + std::to_string(n) + "/flags") << "0x1002\n";
  }
  RunResult r = Provisioner({"apply", yaml, "--root", root, "-v", "--settle-timeout", "60"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  std::vector<size_t> at;
  for (int n = 0; n < 12; ++n) {
    at.push_back(r.err.find("ens6f0v" + std::to_string(n) + " up"));
    ASSERT_NE(at.back(), std::string::npos) << n << "\n" << r.err;
  }
  EXPECT_TRUE(std::is_sorted(at.begin(), at.end())) << r.err;
}

// Item 12, natural order: `manifests DIR` takes node2.yaml before
// node10.yaml (each host's problems are reported in that order), and the
// files an earlier run left in the output directory are named in it too.
TEST(Ux3CliTest, ManifestsReadsAndNamesFilesInNaturalOrder) {
  const std::string dir = MakeTempDir("fleet");
  for (const char* node : {"node10", "node2", "node1"}) {
    std::ofstream(dir + "/" + node + ".yaml") << HostYaml(R"(  nics:
    - name: pf0
      nicSelector: { vendor: "15b3", deviceID: "1017" }
      numVfs: "4"
)",
                                                          node);
  }
  RunResult r = Provisioner({"manifests", dir});
  EXPECT_EQ(r.exit_code, 1);
  const size_t one = r.err.find("/node1.yaml:"), two = r.err.find("/node2.yaml:"),
               ten = r.err.find("/node10.yaml:");
  ASSERT_NE(one, std::string::npos) << r.err;
  ASSERT_NE(two, std::string::npos) << r.err;
  ASSERT_NE(ten, std::string::npos) << r.err;
  EXPECT_LT(one, two) << r.err;
  EXPECT_LT(two, ten) << r.err;

  const std::string out = MakeTempDir("out");
  for (const char* stale : {"x10.yaml", "x2.yaml"}) std::ofstream(out + "/" + stale) << "{}\n";
  RunResult w = Provisioner({"manifests", Example("roce-sriov.yaml"), "--root",
                             ExtractHost("cx5-roce"), "--output-dir", out});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  const size_t x2 = w.err.find("/x2.yaml was not written"),
               x10 = w.err.find("/x10.yaml was not written");
  ASSERT_NE(x2, std::string::npos) << w.err;
  ASSERT_NE(x10, std::string::npos) << w.err;
  EXPECT_LT(x2, x10) << w.err;
}

// Item 5's Done-when, on a pseudo-terminal 80 columns wide (a BMC serial
// console) with the real binary: every status line fits in 79 columns, and
// the VF wait's line keeps its count and its clock against the limit.
TEST(Ux3CliTest, AtEightyColumnsTheStatusLineKeepsTheCountAndTheClock) {
  const std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/3000);
  ASSERT_TRUE(sim.ready());
  PtyResult r = RunInPty({ProvisionerBinary(), "apply", Example("roce-sriov.yaml"), "--root", root,
                          "-y", "--settle-timeout", "20"},
                         "", "", {{"NO_COLOR", "1"}, {"TERM", "xterm"}}, /*columns=*/80);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  bool saw_wait = false;
  for (size_t at = r.out.find("\r\033[K"); at != std::string::npos;
       at = r.out.find("\r\033[K", at + 1)) {
    const size_t start = at + 4;
    const std::string line = r.out.substr(start, r.out.find_first_of("\r\n\033", start) - start);
    // Status lines start with the spinner; the permanent lines may wrap.
    if (line.size() < 2 || line[1] != ' ' ||
        std::string("|/-\\").find(line[0]) == std::string::npos)
      continue;
    size_t columns = 0;
    for (char ch : line) columns += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    EXPECT_LE(columns, 79u) << line;
    if (line.find("/12 VFs") == std::string::npos) continue;
    saw_wait = true;
    EXPECT_NE(line.find(" s of 20 s)"), std::string::npos) << line;
  }
  EXPECT_TRUE(saw_wait) << r.out;
}

// Item 7: an option only another subcommand has (`plan --dryrun`: plan
// changes nothing, apply has --dry-run) says where it is, instead of a bare
// "unexpected argument".
TEST(Ux3CliTest, AnOptionOfAnotherSubcommandSaysWhichHasIt) {
  RunResult r = Provisioner({"plan", Example("roce-sriov.yaml"), "--dryrun"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("provisioner: unexpected argument: --dryrun; --dry-run is an option "
                               "of `provisioner apply`"));
  RunResult b = Provisioner({"plan", Example("roce-sriov.yaml"), "--rollback"});
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_THAT(b.err, HasSubstr("--rollback is an option of `provisioner apply`"));
  // The subcommand's own nearest option first, as before.
  RunResult a = Provisioner({"apply", Example("roce-sriov.yaml"), "--dryrun"});
  EXPECT_THAT(a.err, HasSubstr("did you mean --dry-run?"));
}

// An apply on a new pseudo-terminal (its controlling terminal: Ctrl-C is
// the terminal's SIGINT to it), with what it showed so far.
class PtyApply {
 public:
  explicit PtyApply(const std::vector<std::string>& args) {
    pid_ = ::forkpty(&master_, nullptr, nullptr, nullptr);
    if (pid_ != 0) return;
    std::vector<std::string> argv = {ProvisionerBinary(), "--no-color"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  ~PtyApply() {
    if (master_ >= 0) ::close(master_);
  }
  pid_t pid() const { return pid_; }
  // Reads what is there (50 ms at most); true when `what` has been shown.
  bool Shown(const std::string& what) {
    struct pollfd p = {master_, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      char buf[4096];
      const ssize_t got = ::read(master_, buf, sizeof buf);
      if (got > 0) shown_.append(buf, static_cast<size_t>(got));
    }
    return shown_.find(what) != std::string::npos;
  }
  bool CtrlC() { return ::write(master_, "\x03", 1) == 1; }
  const std::string& text() const { return shown_; }

 private:
  pid_t pid_ = -1;
  int master_ = -1;
  std::string shown_;
};

const char kPf0[] = "/sys/bus/pci/devices/0000:af:00.0";

// Item 2's Done-when on a pseudo-terminal: Ctrl-C typed while the VFs'
// netdevs never come ends the wait within 2 s, everything rolled back.
TEST(Ux3CliTest, CtrlCOnATerminalEndsAStuckWaitWithinTwoSeconds) {
  const std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/3600 * 1000);  // netdevs never come
  ASSERT_TRUE(sim.ready());
  const std::string yaml = WriteTempFile("four.yaml", Pf0Yaml(4));
  PtyApply apply({"apply", yaml, "--root", root, "-y"});  // the default --settle-timeout, 300 s
  ASSERT_GT(apply.pid(), 0);
  ASSERT_TRUE(WaitUntil([&] {
    apply.Shown("");
    return VfsMade(root, "0000:af:00.0", 4) && ApplyingInJournal(root) > 0;
  })) << apply.text();
  ASSERT_TRUE(apply.CtrlC());
  long long ms = 0;
  const int code = WaitExit(apply.pid(), 10000, &ms);
  WaitUntil([&] { return apply.Shown("rolled back"); }, 1000);
  EXPECT_EQ(code, 1) << apply.text();
  EXPECT_LT(ms, 2000) << apply.text();
  EXPECT_NE(apply.text().find("apply interrupted by SIGINT"), std::string::npos) << apply.text();
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "0\n") << apply.text();
  EXPECT_FALSE(Exists(JournalPath(root))) << apply.text();
}

// And a second Ctrl-C during that rollback (4 -> 8 undone: back to 4, whose
// netdevs take 4 s) exits within 1 s, keeping the journal, and says what
// undoes it.
TEST(Ux3CliTest, SecondCtrlCOnATerminalExitsAtOnceKeepingTheJournal) {
  const std::string root = ExtractHost("cx5-roce");
  {
    KernelSimDaemon sim(root, /*netdev_delay_ms=*/20);
    ASSERT_TRUE(sim.ready());
    RunResult four =
        Provisioner({"apply", WriteTempFile("four.yaml", Pf0Yaml(4)), "--root", root});
    ASSERT_EQ(four.exit_code, 0) << four.out << four.err;
  }
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/4000);
  ASSERT_TRUE(sim.ready());
  PtyApply apply({"apply", WriteTempFile("eight.yaml", Pf0Yaml(8)), "--root", root, "-y"});
  ASSERT_GT(apply.pid(), 0);
  ASSERT_TRUE(WaitUntil([&] {
    apply.Shown("");
    return VfsMade(root, "0000:af:00.0", 8) && ApplyingInJournal(root) > 0;
  })) << apply.text();
  ASSERT_TRUE(apply.CtrlC());
  ASSERT_TRUE(WaitUntil([&] {
    return apply.Shown("SIGINT received") && ReadFile(root + kPf0 + "/sriov_numvfs") == "4\n" &&
           Exists(root + kPf0 + "/virtfn3") && !Exists(root + kPf0 + "/virtfn7");
  })) << apply.text();
  ASSERT_TRUE(apply.CtrlC());
  long long ms = 0;
  EXPECT_EQ(WaitExit(apply.pid(), 10000, &ms), 1) << apply.text();
  EXPECT_LT(ms, 1000) << apply.text();
  WaitUntil([&] { return apply.Shown("--rollback"); }, 1000);
  EXPECT_NE(apply.text().find("second SIGINT: exiting now"), std::string::npos) << apply.text();
  EXPECT_TRUE(Exists(JournalPath(root)));
}

}  // namespace
}  // namespace provisioner::testing
