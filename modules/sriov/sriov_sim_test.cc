// The pci and sriov modules end to end against the in-process kernel
// simulator (test/sim): discover, plan, apply, verify, re-discover.
#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/host/host_fs.h"
#include "gtest/gtest.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/planner.h"
#include "modules/sriov/sriov_host.h"
#include "modules/sriov/sriov_module.h"
#include "test/sim/engine_on_sim.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using std::chrono::milliseconds;

constexpr char kPf[] = "0000:af:00.0";

using testing::FakeClock;

class RecordingProgress final : public Progress {
 public:
  void Step(std::string_view m) override { steps.emplace_back(m); }
  std::vector<std::string> steps;
};

testing::SimOptions SettleAfter(int reads) {
  testing::SimOptions o;
  o.settle_reads = reads;
  return o;
}

class SriovSimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("sriov-sim");
    ASSERT_FALSE(root_.empty());
    Status s = testing::BuildHostTree(testing::Cx5RoceHost(), root_);
    ASSERT_TRUE(s.ok()) << s.message();
  }

  void MakeSim(testing::SimOptions options = {}) {
    fs_ = testing::NewSimulatedHostFs(root_, std::move(options));
    sim_ = static_cast<testing::SimulatedHostFs*>(fs_.get());
    ctx_.fs = fs_.get();
    ctx_.clock = &clock_;
    ctx_.progress = &progress_;
    ctx_.settle_timeout = std::chrono::seconds(30);
  }

  HostFacts Discover() {
    HostFacts facts;
    PciModule pci;
    Status s = pci.Discover(ctx_, facts);
    EXPECT_TRUE(s.ok()) << s.message();
    s = module_.Discover(ctx_, facts);
    EXPECT_TRUE(s.ok()) << s.message();
    return facts;
  }

  PlanSink Plan(int num_vfs) {
    DesiredState d;
    NicSpec nic;
    nic.name = "gpu1-nic";
    nic.selector.vendor = "15b3";
    nic.selector.pf_names = {"ens6f0np0"};
    nic.num_vfs = num_vfs;
    d.nics.push_back(nic);
    PlanSink sink;
    module_.Plan(d, Discover(), sink);
    return sink;
  }

  // Plans `num_vfs`, applies and verifies every change.
  Status Converge(int num_vfs) {
    PlanSink sink = Plan(num_vfs);
    if (!sink.diagnostics().empty()) return InvalidArgumentError(sink.diagnostics()[0].message);
    for (const Change& c : sink.changes()) {
      RETURN_IF_ERROR(module_.Apply(c, ctx_));
      RETURN_IF_ERROR(module_.Verify(c, ctx_));
    }
    return OkStatus();
  }

  std::string root_;
  std::unique_ptr<HostFs> fs_;
  testing::SimulatedHostFs* sim_ = nullptr;
  FakeClock clock_;
  RecordingProgress progress_;
  HostContext ctx_;
  SriovModule module_;
};

TEST_F(SriovSimTest, DiscoversTheGeneratedHost) {
  MakeSim();
  HostFacts facts = Discover();
  const PciFunction* pf = facts.FindPci(kPf);
  ASSERT_NE(pf, nullptr);
  EXPECT_EQ(pf->driver, "mlx5_core");
  EXPECT_EQ(pf->numa_node, 1);
  EXPECT_EQ(pf->netdevs, std::vector<std::string>{"ens6f0np0"});
  EXPECT_EQ(pf->rdma_devices, std::vector<std::string>{"mlx5_0"});
  ASSERT_TRUE(pf->sriov.has_value());
  EXPECT_EQ(pf->sriov->total_vfs, 127);
  EXPECT_EQ(pf->sriov->num_vfs, 0);
  EXPECT_EQ(pf->sriov->vf_device, "1018");
  EXPECT_EQ(facts.kernel.release, "6.1.0-18-amd64");
}

TEST_F(SriovSimTest, ZeroToFourThenIdempotent) {
  MakeSim(SettleAfter(40));
  Status s = Converge(4);
  ASSERT_TRUE(s.ok()) << s.message();
  HostFacts facts = Discover();
  const SriovInfo& sriov = *facts.FindPci(kPf)->sriov;
  EXPECT_EQ(sriov.num_vfs, 4);
  ASSERT_EQ(sriov.vfs.size(), 4u);
  for (const VfInfo& vf : sriov.vfs) {
    EXPECT_EQ(vf.driver, "mlx5_core");
    EXPECT_EQ(vf.netdevs.size(), 1u) << vf.pci_address;
  }
  EXPECT_EQ(sriov.vfs[3].netdevs[0], "ens6f0v3");
  // Nothing left to do: no change, no write.
  int writes = sim_->writes();
  PlanSink again = Plan(4);
  EXPECT_TRUE(again.changes().empty());
  EXPECT_TRUE(again.diagnostics().empty());
  EXPECT_EQ(sim_->writes(), writes);
}

TEST_F(SriovSimTest, FourToEightGoesThroughZero) {
  MakeSim(SettleAfter(5));
  ASSERT_TRUE(Converge(4).ok());
  PlanSink sink = Plan(8);
  ASSERT_EQ(sink.changes().size(), 1u);
  EXPECT_EQ(sink.changes()[0].detail["resetFirst"], true);
  Status s = Converge(8);  // the simulator answers EBUSY to 4 -> 8
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Discover().FindPci(kPf)->sriov->vfs.size(), 8u);
  ASSERT_TRUE(Converge(0).ok());
  EXPECT_TRUE(Discover().FindPci(kPf)->sriov->vfs.empty());
}

TEST_F(SriovSimTest, NetdevsThatNeverComeTimeOut) {
  MakeSim(SettleAfter(-1));
  ctx_.settle_timeout = std::chrono::seconds(10);
  Status s = Converge(4);
  ASSERT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s.message();
  EXPECT_NE(s.message().find("0/4 VFs have netdevs"), std::string::npos) << s.message();
  EXPECT_GE(clock_.Elapsed(), std::chrono::seconds(10));
  EXPECT_FALSE(progress_.steps.empty());
  EXPECT_LE(progress_.steps.size(), 10u);
}

TEST_F(SriovSimTest, UnboundVfsNeedNoNetdev) {
  // sriov_drivers_autoprobe=0: the VFs come up without a driver.
  testing::TreeWriter w(root_);
  auto dev = w.RealPath(std::string("/sys/bus/pci/devices/") + kPf);
  ASSERT_TRUE(dev.ok()) << dev.status().message();
  Status written = w.WriteFile(*dev + "/sriov_drivers_autoprobe", "0\n", 0644);
  ASSERT_TRUE(written.ok()) << written.message();
  MakeSim(SettleAfter(-1));
  Status s = Converge(3);
  ASSERT_TRUE(s.ok()) << s.message();
  HostFacts facts = Discover();
  ASSERT_EQ(facts.FindPci(kPf)->sriov->vfs.size(), 3u);
  EXPECT_EQ(facts.FindPci(kPf)->sriov->vfs[0].driver, "");
}

TEST_F(SriovSimTest, DriverEnablingFewer) {
  testing::SimOptions options;
  options.sriov.max_enable = 2;
  MakeSim(options);
  Status s = Converge(4);
  ASSERT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.message();
  EXPECT_NE(s.message().find("only 2 of 4"), std::string::npos) << s.message();
}

TEST_F(SriovSimTest, EnableFailureKeepsErrno) {
  testing::SimOptions options;
  options.sriov.enable_error = ENOMEM;
  MakeSim(options);
  Status s = Converge(4);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), ENOMEM);
  EXPECT_NE(s.message().find("apply 0000:af:00.0 numVfs <- write "
                             "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs: ENOMEM"),
            std::string::npos)
      << s.message();
}

TEST_F(SriovSimTest, InjectedEbusyKeepsErrno) {
  testing::SimOptions options;
  testing::WriteFault fault;
  fault.path_substring = "sriov_numvfs";
  fault.err = EBUSY;
  fault.times = 1;
  options.faults.push_back(fault);
  MakeSim(options);
  Status s = Converge(4);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), EBUSY);
  EXPECT_NE(s.message().find("sriov_numvfs: EBUSY (Device or resource busy)"), std::string::npos)
      << s.message();
  // The fault fired once: a retry goes through.
  EXPECT_TRUE(Converge(4).ok());
}

}  // namespace
}  // namespace provisioner
