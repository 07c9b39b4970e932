// The kernel_sim daemon, driven the way the real binary writes sysfs files.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "test/support/files.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"

extern char** environ;

namespace provisioner::testing {
namespace {

const std::string kPf0 = "/sys/bus/pci/devices/0000:af:00.0";
const std::string kPf1 = "/sys/bus/pci/devices/0000:af:00.1";

class Daemon {
 public:
  Daemon(const std::string& root, std::vector<std::string> extra = {}) {
    std::string ready = MakeTempDir("ready") + "/ready";
    std::vector<std::string> argv = {RunfilePath("test/sim/kernel_sim"),
                                     "--root",
                                     root,
                                     "--netdev-delay-ms",
                                     "400",
                                     "--ready-file",
                                     ready};
    argv.insert(argv.end(), extra.begin(), extra.end());
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    if (posix_spawn(&pid_, args[0], nullptr, nullptr, args.data(), environ) != 0) pid_ = -1;
    ready_ = pid_ > 0 && WaitFor([&] { return Exists(ready); });
  }
  ~Daemon() { Stop(); }
  bool ready() const { return ready_; }
  // SIGTERM; returns the exit status (-1 if killed or not running).
  int Stop() {
    if (pid_ <= 0) return -1;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  bool ready_ = false;
};

class KernelSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = MakeTempDir("root");
    pristine_ = MakeTempDir("pristine");
    ASSERT_TRUE(BuildHostTree(Cx5RoceHost(), root_).ok());
    ASSERT_TRUE(BuildHostTree(Cx5RoceHost(), pristine_).ok());
  }
  std::string Diff() const {
    TreeDiffOptions o;
    o.ignore = {"run/kernel-sim"};
    return DiffTreesText(pristine_, root_, o);
  }
  std::string Refused() const { return ReadFile(root_ + "/run/kernel-sim/refused"); }

  std::string root_;
  std::string pristine_;
};

TEST_F(KernelSimTest, EnableRefuseDisable) {
  Daemon d(root_);
  ASSERT_TRUE(d.ready());
  const std::string numvfs = root_ + kPf0 + "/sriov_numvfs";

  KernelWrite(numvfs, "4");
  ASSERT_TRUE(WaitFor([&] { return Exists(root_ + kPf0 + "/virtfn3"); }));
  EXPECT_TRUE(Exists(root_ + "/sys/bus/pci/devices/0000:af:00.5/physfn"));
  EXPECT_FALSE(Exists(root_ + "/sys/class/net/ens6f0v0")) << "netdevs come later";
  ASSERT_TRUE(WaitFor([&] { return Exists(root_ + "/sys/class/infiniband/mlx5_5"); }));
  EXPECT_TRUE(Exists(root_ + "/sys/class/net/ens6f0v3"));
  EXPECT_TRUE(WaitFor([&] { return ReadFile(numvfs) == "4\n"; })) << "file shows the kernel's value";
  EXPECT_EQ(Refused(), "");

  // 4 -> 8 directly: EBUSY, the file gets 4 back.
  KernelWrite(numvfs, "8");
  ASSERT_TRUE(WaitFor([&] { return !Refused().empty(); }));
  EXPECT_EQ(Refused(), "/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/sriov_numvfs EBUSY\n");
  EXPECT_TRUE(WaitFor([&] { return ReadFile(numvfs) == "4\n"; }));
  EXPECT_FALSE(Exists(root_ + kPf0 + "/virtfn4"));

  // Garbage and out of range.
  KernelWrite(numvfs, "lots");
  KernelWrite(root_ + kPf1 + "/sriov_numvfs", "500\n");
  ASSERT_TRUE(WaitFor([&] { return Refused().find("ERANGE") != std::string::npos; }));
  ASSERT_TRUE(WaitFor([&] { return Refused().find("EINVAL") != std::string::npos; }));
  EXPECT_TRUE(WaitFor([&] { return ReadFile(root_ + kPf1 + "/sriov_numvfs") == "0\n"; }));

  // 0 removes everything: the tree is the original again.
  KernelWrite(numvfs, "0");
  ASSERT_TRUE(WaitFor([&] { return Diff().empty(); })) << Diff();

  // And a fresh enable on the other PF works.
  KernelWrite(root_ + kPf1 + "/sriov_numvfs", "2\n");
  ASSERT_TRUE(WaitFor([&] { return Exists(root_ + "/sys/class/net/ens6f1v1"); }));
  EXPECT_TRUE(Exists(root_ + "/sys/bus/pci/devices/0000:af:10.2"));
  EXPECT_EQ(d.Stop(), 0);
}

TEST_F(KernelSimTest, ZeroBeforeNetdevsAppearCancelsThem) {
  Daemon d(root_);
  ASSERT_TRUE(d.ready());
  const std::string numvfs = root_ + kPf0 + "/sriov_numvfs";
  KernelWrite(numvfs, "2");
  ASSERT_TRUE(WaitFor([&] { return ReadFile(numvfs) == "2\n"; }));
  KernelWrite(numvfs, "0");
  ASSERT_TRUE(WaitFor([&] { return Diff().empty(); })) << Diff();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // past the netdev delay
  EXPECT_EQ(Diff(), "");
}

// A writer between its open(O_TRUNC) and its write(): the file reads empty
// when another close (here an open for writing without a write) wakes the
// simulator. That is no write to refuse: the count written next is taken,
// nothing is logged as refused.
TEST_F(KernelSimTest, EmptyFileMidWriteIsNotAWrite) {
  Daemon d(root_);
  ASSERT_TRUE(d.ready());
  const std::string numvfs = root_ + kPf0 + "/sriov_numvfs";
  int writer = ::open(numvfs.c_str(), O_WRONLY | O_TRUNC);
  ASSERT_GE(writer, 0);
  int other = ::open(numvfs.c_str(), O_WRONLY);
  ASSERT_GE(other, 0);
  ::close(other);  // IN_CLOSE_WRITE while the file is empty
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the simulator looks
  ASSERT_EQ(::write(writer, "2", 1), 1);
  ::close(writer);
  ASSERT_TRUE(WaitFor([&] { return Exists(root_ + kPf0 + "/virtfn1"); }));
  EXPECT_TRUE(WaitFor([&] { return ReadFile(numvfs) == "2\n"; })) << ReadFile(numvfs);
  EXPECT_EQ(Refused(), "");
}

TEST_F(KernelSimTest, InjectedFaultsRefuseWithThatErrno) {
  Daemon d(root_, {"--fault", "0000:af:00.1/sriov_numvfs=ENOMEM"});
  ASSERT_TRUE(d.ready());
  KernelWrite(root_ + kPf1 + "/sriov_numvfs", "4");
  ASSERT_TRUE(WaitFor([&] { return !Refused().empty(); }));
  EXPECT_EQ(Refused(), "/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.1/sriov_numvfs ENOMEM\n");
  ASSERT_TRUE(WaitFor([&] { return Diff().empty(); })) << Diff();
  KernelWrite(root_ + kPf0 + "/sriov_numvfs", "1");
  EXPECT_TRUE(WaitFor([&] { return Exists(root_ + kPf0 + "/virtfn0"); }));
}

TEST(KernelSimCliTest, BadUsageExits1) {
  std::string bin = RunfilePath("test/sim/kernel_sim");
  char* args[] = {bin.data(), nullptr};
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, bin.c_str(), nullptr, nullptr, args, environ), 0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
}

}  // namespace
}  // namespace provisioner::testing
