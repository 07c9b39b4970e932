// sriov_numvfs changes against a HostFs that answers like the kernel's
// drivers/pci/iov.c (ERANGE above total, EBUSY between non-zero counts, VFs
// created with the write, netdevs a few polls later), and a fake clock.
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/host/forwarding_host_fs.h"
#include "engine/host/host_fs.h"
#include "gtest/gtest.h"
#include "modules/pci/testing/sysfs_tree.h"
#include "modules/sriov/sriov_host.h"
#include "modules/sriov/sriov_module.h"
#include "test/sim/engine_on_sim.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using std::chrono::milliseconds;
using sysfs_testing::FunctionSpec;
using sysfs_testing::SysfsTree;

constexpr char kPf[] = "0000:af:00.0";
constexpr char kNumVfsPath[] = "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs";

using testing::FakeClock;

class RecordingProgress final : public Progress {
 public:
  void Step(std::string_view m) override { steps.emplace_back(m); }
  std::vector<std::string> steps;
};

struct KernelOptions {
  int netdev_after_polls = 3;  // PF listings after creation before netdevs show
  // PF listings between a netdev's directory and its /sys/class/net link
  // (device_add() makes the one, then the other).
  int class_link_after_polls = 0;
  bool never_netdevs = false;
  std::string vf_driver = "mlx5_core";
  int enable_at_most = -1;  // the driver enables fewer VFs (-1: all)
  int inject_errno = 0;     // the next sriov_numvfs write fails with it
  int empty_reads = 0;      // sriov_numvfs reads "" this often after a write
};

// Forwards to a LocalHostFs over a SysfsTree and plays the kernel for
// sriov_numvfs writes of one PF.
class FakeKernelFs final : public ForwardingHostFs {
 public:
  FakeKernelFs(SysfsTree* tree, KernelOptions options)
      : ForwardingHostFs(NewLocalHostFs(tree->root())), tree_(tree), options_(std::move(options)) {}
  StatusOr<std::string> ReadFile(std::string_view p) const override {
    if (p == kNumVfsPath && empty_reads_left_ > 0) {
      --empty_reads_left_;
      return std::string();
    }
    return inner()->ReadFile(p);
  }
  StatusOr<std::vector<std::string>> ListDir(std::string_view p) const override {
    if (p == PfPath() && pending_netdevs_ && !options_.never_netdevs) {
      const int polls = ++polls_since_create_;
      for (size_t i = 0; i < vfs_.size(); ++i) {
        const std::string name = "ens6f0v" + std::to_string(i);
        const std::string dir = tree_->DevicePath(vfs_[i]) + "/net/" + name;
        if (polls == options_.netdev_after_polls) {
          tree_->WriteFile(dir + "/ifindex", std::to_string(100 + i) + "\n");
        }
        if (polls == options_.netdev_after_polls + options_.class_link_after_polls) {
          tree_->Symlink("/sys/class/net/" + name, dir);
        }
      }
      if (polls >= options_.netdev_after_polls + options_.class_link_after_polls) {
        pending_netdevs_ = false;
      }
    }
    return inner()->ListDir(p);
  }

  Status WriteAttr(std::string_view path, std::string_view value) override {
    if (path != kNumVfsPath) return inner()->WriteAttr(path, value);
    writes.emplace_back(value);
    const std::string what = "write " + std::string(path);
    if (options_.inject_errno != 0) {
      int e = options_.inject_errno;
      options_.inject_errno = 0;
      return ErrnoToStatus(e, what);
    }
    char* end = nullptr;
    std::string v(value);
    long n = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || (*end != '\0' && *end != '\n')) return ErrnoToStatus(EINVAL, what);
    long total = std::strtol(inner()->ReadAttr(PfPath() + "/sriov_totalvfs")->c_str(), nullptr, 10);
    if (n > total) return ErrnoToStatus(ERANGE, what);
    int current = static_cast<int>(vfs_.size());
    if (n == current) return OkStatus();
    if (current != 0 && n != 0) return ErrnoToStatus(EBUSY, what);
    if (n == 0) {
      for (size_t i = 0; i < vfs_.size(); ++i) {
        tree_->Remove(tree_->DevicePath(vfs_[i]));
        tree_->Remove("/sys/bus/pci/devices/" + vfs_[i]);
        tree_->Remove(PfPath() + "/virtfn" + std::to_string(i));
        tree_->Remove("/sys/class/net/ens6f0v" + std::to_string(i));
      }
      vfs_.clear();
      pending_netdevs_ = false;
      tree_->WriteFile(PfPath() + "/sriov_numvfs", "0\n");
      return OkStatus();
    }
    int enabled = options_.enable_at_most >= 0 ? std::min<int>(n, options_.enable_at_most) : n;
    for (int i = 0; i < enabled; ++i) {
      int devfn = 2 + i;
      char addr[32];
      std::snprintf(addr, sizeof addr, "0000:af:%02x.%d", devfn >> 3, devfn & 7);
      tree_->AddVf(kPf, i, FunctionSpec::At(addr).Ids("15b3", "1018").Driver(options_.vf_driver));
      vfs_.push_back(addr);
    }
    tree_->WriteFile(PfPath() + "/sriov_numvfs", std::to_string(enabled) + "\n");
    pending_netdevs_ = true;
    polls_since_create_ = 0;
    empty_reads_left_ = options_.empty_reads;
    return OkStatus();
  }

  // Starts the PF with `n` VFs that already have netdevs.
  void Preset(int n) {
    ASSERT_TRUE(WriteAttr(kNumVfsPath, std::to_string(n)).ok());
    while (pending_netdevs_) (void)ListDir(PfPath());
    writes.clear();
  }

  std::vector<std::string> writes;

 private:
  static std::string PfPath() { return std::string("/sys/bus/pci/devices/") + kPf; }

  SysfsTree* tree_;
  KernelOptions options_;
  std::vector<std::string> vfs_;
  mutable bool pending_netdevs_ = false;
  mutable int polls_since_create_ = 0;
  mutable int empty_reads_left_ = 0;
};

class SriovApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("sriov-apply");
    ASSERT_FALSE(root_.empty());
    tree_ = std::make_unique<SysfsTree>(root_);
    tree_->AddFunction(FunctionSpec::At(kPf).Driver("mlx5_core").Net("ens6f0np0").Rdma("mlx5_0"));
    tree_->AddSriov(kPf, 16);
  }

  void MakeKernel(KernelOptions options = {}) {
    fs_ = std::make_unique<FakeKernelFs>(tree_.get(), std::move(options));
    ctx_.fs = fs_.get();
    ctx_.clock = &clock_;
    ctx_.progress = &progress_;
    ctx_.settle_timeout = std::chrono::seconds(20);
  }

  Change NumVfsChange(int before, int after) {
    Change c;
    c.id = std::string("sriov/") + kPf + "/numVfs";
    c.module = "sriov";
    c.target = kPf;
    c.attribute = "numVfs";
    c.before = before;
    c.after = after;
    c.field_path = "spec.nics[0].numVfs";
    c.detail = {{"nic", "gpu1-nic"}};
    return c;
  }

  int NetdevCount() {
    auto state = ReadNumVfsState(*fs_, kPf);
    EXPECT_TRUE(state.ok());
    int n = 0;
    for (const auto& vf : state->vfs) n += vf.has_netdev ? 1 : 0;
    return n;
  }

  std::string root_;
  std::unique_ptr<SysfsTree> tree_;
  std::unique_ptr<FakeKernelFs> fs_;
  FakeClock clock_;
  RecordingProgress progress_;
  HostContext ctx_;
  SriovModule module_;
};

TEST_F(SriovApplyTest, ZeroToFourCreatesVfsAndWaitsForNetdevs) {
  MakeKernel({.netdev_after_polls = 5});
  Status s = module_.Apply(NumVfsChange(0, 4), ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(fs_->writes, std::vector<std::string>{"4\n"});
  EXPECT_EQ(NetdevCount(), 4);
  EXPECT_GE(clock_.sleeps(), 4);  // it did wait, on the fake clock
  EXPECT_LT(clock_.Elapsed(), std::chrono::seconds(2));
  Status v = module_.Verify(NumVfsChange(0, 4), ctx_);
  EXPECT_TRUE(v.ok()) << v.message();
}

// A VF netdev's directory shows before /sys/class/net lists it: apply waits
// for the class link, which the link changes after it go by.
TEST_F(SriovApplyTest, WaitsForTheNetdevsInSysClassNetNotJustTheirDirectories) {
  MakeKernel({.netdev_after_polls = 2, .class_link_after_polls = 3});
  Status s = module_.Apply(NumVfsChange(0, 4), ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(fs_->Exists("/sys/class/net/ens6f0v" + std::to_string(i) + "/ifindex")) << i;
  }
  EXPECT_EQ(NetdevCount(), 4);
}

TEST_F(SriovApplyTest, FourToTwoWritesZeroFirst) {
  MakeKernel();
  fs_->Preset(4);
  Change c = NumVfsChange(4, 2);
  c.detail["resetFirst"] = true;
  Status s = module_.Apply(c, ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(fs_->writes, (std::vector<std::string>{"0\n", "2\n"}));
  EXPECT_EQ(NetdevCount(), 2);
  EXPECT_TRUE(module_.Verify(c, ctx_).ok());
}

TEST_F(SriovApplyTest, ReadsTheCurrentCountInsteadOfTrustingThePlan) {
  MakeKernel();
  fs_->Preset(4);
  // The plan believed 0; the host has 4 by now: still 0 first, no EBUSY.
  Status s = module_.Apply(NumVfsChange(0, 8), ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(fs_->writes, (std::vector<std::string>{"0\n", "8\n"}));
}

TEST_F(SriovApplyTest, NToZero) {
  MakeKernel();
  fs_->Preset(4);
  Status s = module_.Apply(NumVfsChange(4, 0), ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(fs_->writes, std::vector<std::string>{"0\n"});
  EXPECT_FALSE(tree_->DevicePath(kPf).empty());
  EXPECT_TRUE(module_.Verify(NumVfsChange(4, 0), ctx_).ok());
}

TEST_F(SriovApplyTest, AlreadyThereWritesNothing) {
  MakeKernel();
  fs_->Preset(4);
  Status s = module_.Apply(NumVfsChange(4, 4), ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(fs_->writes.empty());
}

TEST_F(SriovApplyTest, TimeoutWhenNetdevsNeverAppear) {
  MakeKernel({.never_netdevs = true});
  ctx_.settle_timeout = std::chrono::seconds(5);
  Status s = module_.Apply(NumVfsChange(0, 4), ctx_);
  ASSERT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.message();
  EXPECT_NE(s.message().find("apply 0000:af:00.0 numVfs"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("0/4 VFs have netdevs"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("0000:af:00.2 (mlx5_core)"), std::string::npos) << s.message();
  EXPECT_GE(clock_.Elapsed(), std::chrono::seconds(5));
  EXPECT_LT(clock_.Elapsed(), std::chrono::seconds(6));
  // Progress at most once a second, with counts.
  ASSERT_FALSE(progress_.steps.empty());
  EXPECT_LE(progress_.steps.size(), 5u);
  EXPECT_EQ(progress_.steps.back(), "0000:af:00.0: 0/4 VFs have netdevs");
}

TEST_F(SriovApplyTest, EmptyReadWhileTheTreeIsRewrittenIsRetried) {
  MakeKernel({.empty_reads = 2});
  Status s = module_.Apply(NumVfsChange(0, 4), ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(NetdevCount(), 4);
}

TEST_F(SriovApplyTest, VfsBoundToVfioNeedNoNetdev) {
  MakeKernel({.never_netdevs = true, .vf_driver = "vfio-pci"});
  Status s = module_.Apply(NumVfsChange(0, 3), ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
}

TEST_F(SriovApplyTest, DriverEnablingFewerVfsIsAClearError) {
  MakeKernel({.enable_at_most = 3});
  Status s = module_.Apply(NumVfsChange(0, 8), ctx_);
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.message();
  EXPECT_NE(s.message().find("the driver enabled only 3 of 8 VFs"), std::string::npos)
      << s.message();
  EXPECT_LT(clock_.Elapsed(), std::chrono::seconds(1));  // no waiting for what cannot come
}

TEST_F(SriovApplyTest, InjectedEbusyKeepsPathAndErrno) {
  MakeKernel({.inject_errno = EBUSY});
  Status s = module_.Apply(NumVfsChange(0, 4), ctx_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), EBUSY);
  EXPECT_EQ(s.message(),
            "apply 0000:af:00.0 numVfs <- write /sys/bus/pci/devices/0000:af:00.0/sriov_numvfs: "
            "EBUSY (Device or resource busy)");
}

TEST_F(SriovApplyTest, InjectedEnomemOnTheResetWrite) {
  MakeKernel();
  fs_->Preset(2);
  fs_ = std::make_unique<FakeKernelFs>(tree_.get(), KernelOptions{.inject_errno = ENOMEM});
  ctx_.fs = fs_.get();
  Status s = module_.Apply(NumVfsChange(2, 4), ctx_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), ENOMEM);
  EXPECT_NE(s.message().find("apply 0000:af:00.0 numVfs <- reset to 0 first <- write "
                             "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs: ENOMEM"),
            std::string::npos)
      << s.message();
}

TEST_F(SriovApplyTest, EnomemEnablingVfsHintsPciRealloc) {
  MakeKernel();
  fs_ = std::make_unique<FakeKernelFs>(tree_.get(), KernelOptions{.inject_errno = ENOMEM});
  ctx_.fs = fs_.get();
  Status s = module_.Apply(NumVfsChange(0, 4), ctx_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), ENOMEM);
  EXPECT_NE(s.message().find("sriov_numvfs: ENOMEM"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("boot with pci=realloc (spec.kernel.cmdline: [pci=realloc])"),
            std::string::npos)
      << s.message();
}

TEST_F(SriovApplyTest, AboveTotalGetsTheKernelsErange) {
  MakeKernel();
  Status s = ApplyNumVfs(kPf, 300, ctx_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), ERANGE);
}

TEST_F(SriovApplyTest, VerifyMismatchMessage) {
  MakeKernel();
  fs_->Preset(8);
  Status s = module_.Verify(NumVfsChange(0, 12), ctx_);
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(), "nics[gpu1-nic].numVfs: desired 12, current 8");
}

TEST_F(SriovApplyTest, RejectsChangesItDidNotPlan) {
  MakeKernel();
  Change c = NumVfsChange(0, 4);
  c.target = "../../../etc";
  EXPECT_EQ(module_.Apply(c, ctx_).code(), StatusCode::kInvalidArgument);
  c = NumVfsChange(0, 4);
  c.after = "four";
  EXPECT_EQ(module_.Apply(c, ctx_).code(), StatusCode::kInvalidArgument);
  c = NumVfsChange(0, 4);
  c.attribute = "mtu";
  EXPECT_EQ(module_.Verify(c, ctx_).code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(fs_->writes.empty());
}

// A plain tree, no kernel: the count lands in the file, no VF ever appears
// (what `apply --root` without a simulator sees), and the roll back to 0 works.
TEST_F(SriovApplyTest, PlainTreeTimesOutThenRollsBack) {
  auto plain = NewLocalHostFs(root_);
  ctx_.fs = plain.get();
  ctx_.clock = &clock_;
  ctx_.settle_timeout = std::chrono::seconds(1);
  Status s = module_.Apply(NumVfsChange(0, 12), ctx_);
  ASSERT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.message();
  EXPECT_NE(s.message().find("0/12 VFs present"), std::string::npos) << s.message();
  Status back = module_.Apply(NumVfsChange(12, 0), ctx_);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_TRUE(module_.Verify(NumVfsChange(12, 0), ctx_).ok());
  EXPECT_EQ(*plain->ReadFile(kNumVfsPath), "0\n");
}

// A write the kernel never answers (a VF held open by a VM) is time-boxed.
class BlockingFs final : public ForwardingHostFs {
 public:
  explicit BlockingFs(std::unique_ptr<HostFs> local) : ForwardingHostFs(std::move(local)) {}
  ~BlockingFs() override { Release(); }
  void Release() {
    std::lock_guard<std::mutex> l(mu_);
    released_ = true;
    cv_.notify_all();
  }
  Status WriteAttr(std::string_view, std::string_view) override {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return released_; });
    done_ = true;
    cv_.notify_all();
    return OkStatus();
  }
  void WaitDone() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [this] { return done_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  bool done_ = false;
};

TEST_F(SriovApplyTest, BlockedWriteIsTimeBoxed) {
  BlockingFs blocking(NewLocalHostFs(root_));
  ctx_.fs = &blocking;
  ctx_.clock = &clock_;
  NumVfsApplyOptions options;
  options.write_timeout = milliseconds(50);
  Status s = ApplyNumVfs(kPf, 4, ctx_, options);
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.message();
  EXPECT_NE(s.message().find("no answer from the kernel"), std::string::npos) << s.message();
  blocking.Release();
  blocking.WaitDone();
}

}  // namespace
}  // namespace provisioner
