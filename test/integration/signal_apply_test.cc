// SIGTERM in the middle of an apply (issue 18, item 9): systemd stopping the
// unit, a Ctrl-C, a closed ssh session. The change in progress completes,
// then everything applied is rolled back as for a failure, the journal is
// settled, the exit code is 1 and the message names the signal.
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

const char kPf0[] = "/sys/bus/pci/devices/0000:af:00.0";

std::string OnePfYaml(int num_vfs) {
  return WriteTempFile("host" + std::to_string(num_vfs) + ".yaml", Pf0Yaml(num_vfs));
}

// The apply is in its wait for the netdevs of PF0's `n` new VFs: they exist
// and the journal has the change "applying". The signal tests signal then,
// never after a fixed time: under load a timer fires before the change began.
bool WaitingForVfNetdevs(const std::string& root, int n) {
  return VfsMade(root, "0000:af:00.0", n) && ApplyingInJournal(root) > 0;
}

TEST(SignalApplyTest, SigtermDuringNumVfsRollsBackAndSaysSo) {
  std::string root = ExtractHost("cx5-roce");
  // The simulated kernel makes the VF netdevs appear 20 s after the write:
  // the numVfs change is still waiting for them when SIGTERM comes.
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/20000);
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("host.yaml", Pf0Yaml(4, R"(      mtu: 9000
)"));
  Interrupted r = InterruptWhen(
      {"apply", yaml, "--root", root, "--settle-timeout", "20"},
      [&] { return WaitingForVfNetdevs(root, 4); }, SIGTERM);
  ASSERT_TRUE(r.reached) << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("apply interrupted by SIGTERM"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rolled back, as for a failure"), std::string::npos) << r.err;
  // Back as it was: no VFs, mtu 1500, and no journal left to recover.
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "0\n") << r.err;
  EXPECT_FALSE(Exists(root + kPf0 + "/virtfn0"));
  EXPECT_EQ(ReadFile(root + "/sys/class/net/ens6f0np0/mtu"), "1500\n");
  EXPECT_FALSE(Exists(JournalPath(root))) << "journal left behind";
  EXPECT_EQ(sim.Refused(), "");
  // The next plan is the same as before the interrupted apply.
  RunResult plan = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(plan.exit_code, 2) << plan.out << plan.err;
  EXPECT_NE(plan.out.find("numVfs: 0 -> 4"), std::string::npos) << plan.out;
}

// Issue 26 item 7: the rollback of a VF count change re-created the VFs,
// whose netdevs the kernel registers administratively down, and reported
// "rolled back" with them down where they were up before. Now the rollback
// brings them up again and verifies it.
TEST(SignalApplyTest, SigtermDuringACountChangeRestoresTheVfNetdevsAdminState) {
  std::string root = ExtractHost("cx5-roce");
  std::vector<std::string> vf_flags;  // the VF netdevs' flags files
  {
    // A host whose 4 VF netdevs are up (brought up by NetworkManager, say).
    KernelSimDaemon sim(root, /*netdev_delay_ms=*/50);
    ASSERT_TRUE(sim.ready());
    RunResult four = Provisioner({"apply", OnePfYaml(4), "--root", root});
    ASSERT_EQ(four.exit_code, 0) << four.out << four.err;
  }
  for (int i = 0; i < 4; ++i) {
    const std::string net = root + kPf0 + "/virtfn" + std::to_string(i) + "/net";
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(net))
      names.push_back(e.path().string());
    ASSERT_EQ(names.size(), 1u) << net;
    vf_flags.push_back(names[0] + "/flags");
    std::ofstream(vf_flags.back(), std::ios::trunc) << "0x1003\n";  // IFF_UP
  }
  // Now a kernel that registers new VF netdevs down, as Linux does; SIGTERM
  // while 4 -> 8 waits for its netdevs: rolled back to the 4 VFs, up.
  // (Their netdevs 3 s after each write: the new ones are not there yet when
  // the signal comes, the re-created 4's come during the rollback.)
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/3000, {"--vf-netdevs-down"});
  ASSERT_TRUE(sim.ready());
  Interrupted r = InterruptWhen(
      {"apply", OnePfYaml(8), "--root", root, "--settle-timeout", "20"},
      [&] { return WaitingForVfNetdevs(root, 8); }, SIGTERM);
  ASSERT_TRUE(r.reached) << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("rolled back, as for a failure"), std::string::npos) << r.err;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "4\n");
  for (int i = 0; i < 4; ++i) {
    const std::string net = root + kPf0 + "/virtfn" + std::to_string(i) + "/net";
    for (const auto& e : std::filesystem::directory_iterator(net)) {
      EXPECT_EQ(ReadFile(e.path().string() + "/flags"), "0x1003\n")
          << e.path() << ": the VF netdev was up before the interrupted apply";
    }
  }
  EXPECT_FALSE(Exists(JournalPath(root))) << "journal left behind";
  EXPECT_EQ(sim.Refused(), "");
}

// Issue 26 item 14: a SIGTERM in the first milliseconds killed the process
// (exit by signal, no word) instead of exit 1. Made deterministic here: the
// signal is pending, blocked, when provisioner starts (as a supervisor may
// start it); main unblocks it right after its guard is in place.
int RunWithPendingSigterm(const std::vector<std::string>& args) {
  pid_t pid = ::fork();
  if (pid == 0) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    ::sigprocmask(SIG_BLOCK, &set, nullptr);
    ::kill(::getpid(), SIGTERM);
    int devnull = ::open("/dev/null", O_WRONLY);
    ::dup2(devnull, 1);
    ::dup2(devnull, 2);
    std::vector<char*> argv;
    std::string bin = ProvisionerBinary();
    argv.push_back(bin.data());
    std::vector<std::string> copy = args;
    for (std::string& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(bin.c_str(), argv.data());
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST(SignalApplyTest, SigtermBeforeApplyStartsIsExit1AndNothingApplied) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = WriteTempFile("host.yaml", HostYaml(R"(  kernelModules: [mlx5_ib]
)"));
  EXPECT_EQ(RunWithPendingSigterm({"apply", yaml, "--root", root}), 1);
  EXPECT_FALSE(Exists(root + "/etc/modules-load.d/provisioner.conf")) << "applied anyway";
  EXPECT_FALSE(Exists(JournalPath(root))) << "journal left behind";
  EXPECT_EQ(RunWithPendingSigterm({"discover", "--root", root}), 1);
}

// Issues 36 item 2 and 38 item 2: a signal ends a wait that would never end
// (VFs whose netdevs never appear) at once, instead of when --settle-timeout
// (300 s) runs out: the write is done, the rollback starts at once.
class StuckWaitSignalTest : public ::testing::TestWithParam<int> {};

TEST_P(StuckWaitSignalTest, EndsTheWaitAndRollsBackWithinTwoSeconds) {
  const int sig = GetParam();
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/3600 * 1000);  // netdevs never come
  ASSERT_TRUE(sim.ready());
  // The default --settle-timeout: 300 s.
  Interrupted r = InterruptWhen(
      {"apply", OnePfYaml(4), "--root", root}, [&] { return WaitingForVfNetdevs(root, 4); }, sig);
  ASSERT_TRUE(r.reached) << r.err;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_LT(r.elapsed_ms, 2000) << "the wait went on after the signal";
  const std::string& text = r.err;
  EXPECT_NE(text.find("apply interrupted by " + std::string(sig == SIGINT ? "SIGINT" : "SIGTERM") +
                      " during sriov/0000:af:00.0/numVfs"),
            std::string::npos)
      << text;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "0\n");
  EXPECT_FALSE(Exists(root + kPf0 + "/virtfn0"));
  EXPECT_FALSE(Exists(JournalPath(root))) << "journal left behind";
  EXPECT_EQ(sim.Refused(), "");
}

INSTANTIATE_TEST_SUITE_P(Signals, StuckWaitSignalTest, ::testing::Values(SIGTERM, SIGINT),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return info.param == SIGINT ? "sigint" : "sigterm";
                         });

// The rollback of 4 -> 8 waits for the 4 re-created VFs' netdevs (4 s away
// here, 300 s of --settle-timeout): a second SIGINT ends the process at
// once, keeps the journal and says that `apply --rollback` undoes it; which
// it then does (the same simulated kernel: the netdevs come).
TEST(SignalApplyTest, SecondSigintExitsAtOnceAndKeepsTheJournal) {
  std::string root = ExtractHost("cx5-roce");
  {
    KernelSimDaemon sim(root, /*netdev_delay_ms=*/20);
    ASSERT_TRUE(sim.ready());
    RunResult four = Provisioner({"apply", OnePfYaml(4), "--root", root});
    ASSERT_EQ(four.exit_code, 0) << four.out << four.err;
  }
  const std::string journal = JournalPath(root);
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/4000);
  ASSERT_TRUE(sim.ready());
  const std::string err = WriteTempFile("second.err", "");
  pid_t pid =
      SpawnToFiles({ProvisionerBinary(), "apply", OnePfYaml(8), "--root", root}, "/dev/null", err);
  ASSERT_GT(pid, 0);
  ASSERT_TRUE(WaitUntil([&] { return WaitingForVfNetdevs(root, 8); })) << ReadFile(err);
  ::kill(pid, SIGINT);
  // The rollback: back to 4 VFs, waiting for their netdevs; the first
  // SIGINT acknowledged (a second one within 100 ms would be the same).
  ASSERT_TRUE(WaitUntil([&] {
    return ReadFile(root + kPf0 + "/sriov_numvfs") == "4\n" && Exists(root + kPf0 + "/virtfn3") &&
           !Exists(root + kPf0 + "/virtfn7") &&
           ReadFile(err).find("SIGINT received") != std::string::npos;
  }))
      << ReadFile(err);
  ::kill(pid, SIGINT);
  long long ms = 0;
  EXPECT_EQ(WaitExit(pid, 10000, &ms), 1) << ReadFile(err);
  EXPECT_LT(ms, 1000) << "the second SIGINT did not end the process at once";
  const std::string text = ReadFile(err);
  EXPECT_NE(text.find("second SIGINT: exiting now"), std::string::npos) << text;
  EXPECT_NE(text.find("provisioner apply --rollback --root " + root), std::string::npos) << text;
  EXPECT_TRUE(Exists(journal)) << "the journal is what --rollback undoes";
  RunResult back = Provisioner({"apply", "--rollback", OnePfYaml(8), "--root", root});
  EXPECT_EQ(back.exit_code, 0) << back.out << back.err;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "4\n");
  EXPECT_FALSE(Exists(journal));
}

// Ctrl-C at the [y/N] prompt (a pseudo-terminal: ^C is the terminal's
// SIGINT) cancels at once; nothing is changed.
TEST(SignalApplyTest, CtrlCAtThePromptCancelsAtOnce) {
  std::string root = ExtractHost("cx5-roce");
  int master = -1;
  const std::string yaml = OnePfYaml(4);
  pid_t pid = ::forkpty(&master, nullptr, nullptr, nullptr);
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const std::string bin = ProvisionerBinary();
    ::execl(bin.c_str(), bin.c_str(), "--no-color", "apply", yaml.c_str(), "--root", root.c_str(),
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::string shown;
  auto read_some = [&] {
    struct pollfd p = {master, POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) {
      char buf[4096];
      const ssize_t got = ::read(master, buf, sizeof buf);
      if (got > 0) shown.append(buf, static_cast<size_t>(got));
    }
    return shown.find("[y/N]") != std::string::npos;
  };
  ASSERT_TRUE(WaitUntil(read_some)) << shown;
  ASSERT_EQ(::write(master, "\x03", 1), 1);  // Ctrl-C
  long long ms = 0;
  const int code = WaitExit(pid, 10000, &ms);
  WaitUntil([&] { return read_some() && shown.find("cancelled") != std::string::npos; }, 1000);
  ::close(master);
  EXPECT_EQ(code, 1) << shown;
  EXPECT_LT(ms, 2000) << shown;
  EXPECT_NE(shown.find("apply cancelled; nothing was changed"), std::string::npos) << shown;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "0\n");
  EXPECT_FALSE(Exists(JournalPath(root)));
}

}  // namespace
}  // namespace provisioner::testing
