#include "modules/rdma/rdma_module.h"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <vector>

#include "engine/core/engine.h"
#include "engine/host/forwarding_host_fs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/rdma/netns_plan.h"
#include "test/sim/engine_on_sim.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/files.h"
#include "test/support/tree_diff.h"

namespace provisioner::rdma {
namespace {

using provisioner::testing::ReadFile;

using ::provisioner::testing::ExtractedHostTree;
using ::testing::HasSubstr;

// A tree that claims to be the live root: the module then uses its netlink
// client (a fake here) instead of the ib_core parameter.
class LiveLookingFs : public ForwardingHostFs {
 public:
  explicit LiveLookingFs(std::string tree) : ForwardingHostFs(NewLocalHostFs(std::move(tree))) {}
  const std::string& root() const override { return slash_; }

 private:
  std::string slash_ = "/";
};

struct FakeKernel {
  std::string mode = "shared";
  int set_errno = 0;  // refuse every SET with this errno
  int gets = 0, sets = 0;
};

class FakeClient : public NetnsModeClient {
 public:
  explicit FakeClient(FakeKernel* k) : k_(k) {}
  StatusOr<std::string> Get() override {
    ++k_->gets;
    return k_->mode;
  }
  Status Set(const std::string& mode) override {
    ++k_->sets;
    if (k_->set_errno != 0)
      return ErrnoToStatus(k_->set_errno, "RDMA netlink SYS_SET netns_mode " + mode);
    k_->mode = mode;
    return OkStatus();
  }

 private:
  FakeKernel* k_;
};

using testing::FakeClock;

RdmaModuleOptions Options(FakeKernel* k) {
  RdmaModuleOptions o;
  o.netns_client = [k] { return std::make_unique<FakeClient>(k); };
  o.cross_check_rdma_core = false;
  return o;
}

DesiredState Exclusive(bool persist = true) {
  DesiredState d;
  d.rdma = RdmaSpec{"exclusive", persist};
  return d;
}

// The module on a host layer, with a fake kernel (k_) and a clock that
// moves only when it sleeps. Set k_ before Start.
class RdmaModuleTest : public ::testing::Test {
 protected:
  // Makes the module over `fs` and discovers (false: discovery failed).
  bool Start(HostFs* fs) {
    m_ = std::make_unique<RdmaModule>(Options(&k_));
    ctx_.fs = fs;
    ctx_.clock = &clock_;
    return m_->Discover(ctx_, f_).ok();
  }
  // The module's plan for netnsMode exclusive; fails the test unless it has
  // `want` changes.
  std::vector<Change> PlanExclusive(bool persist, size_t want) {
    PlanSink sink;
    m_->Plan(Exclusive(persist), f_, sink);
    EXPECT_EQ(sink.changes().size(), want);
    return sink.changes();
  }

  FakeKernel k_;
  std::unique_ptr<RdmaModule> m_;
  FakeClock clock_;
  HostContext ctx_;
  HostFacts f_;
};

// Discover, plan and apply netnsMode exclusive through the engine over `fs`
// with the kernel `k` (two changes: the live mode and ib_core.conf).
ApplyReport ApplyExclusiveThroughEngine(HostFs* fs, FakeKernel* k) {
  std::vector<std::unique_ptr<Module>> modules;
  modules.push_back(std::make_unique<RdmaModule>(Options(k)));
  FakeClock clock;
  HostContext ctx;
  ctx.fs = fs;
  ctx.clock = &clock;
  auto facts = Discover(modules, ctx);
  EXPECT_TRUE(facts.ok());
  if (!facts.ok()) {
    ApplyReport failed;
    failed.status = facts.status();
    return failed;
  }
  DesiredState d = Exclusive();
  PlanResult plan = BuildPlan(modules, d, *facts);
  EXPECT_EQ(plan.plan.changes.size(), 2u);
  return ApplyPlan(modules, plan.plan, d, ctx);
}

TEST_F(RdmaModuleTest, DiscoverTree) {
  auto fs = NewLocalHostFs(ExtractedHostTree("cx5-roce"));
  ASSERT_TRUE(Start(fs.get()));
  EXPECT_TRUE(f_.rdma.discovered);
  EXPECT_EQ(f_.rdma.devices.size(), 2u);
  EXPECT_EQ(f_.rdma_netns_mode, "shared");
  EXPECT_EQ(f_.rdma.netns_mode_source, "/sys/module/ib_core/parameters/netns_mode");
  EXPECT_EQ(k_.gets, 0);  // a tree is never asked over netlink
}

TEST_F(RdmaModuleTest, DiscoverLiveUsesNetlinkThenTheParameter) {
  LiveLookingFs fs(ExtractedHostTree("cx5-roce"));
  k_.mode = "exclusive";
  ASSERT_TRUE(Start(&fs));
  EXPECT_EQ(f_.rdma_netns_mode, "exclusive");
  EXPECT_THAT(f_.rdma.netns_mode_source, HasSubstr("RDMA netlink"));
  EXPECT_TRUE(f_.rdma.addresses_known);  // getifaddrs of this process
}

TEST_F(RdmaModuleTest, TreeApplyWritesTheParameterAndVerifies) {
  std::string root = ExtractedHostTree("cx5-roce");
  auto fs = NewLocalHostFs(root);
  ASSERT_TRUE(Start(fs.get()));
  std::vector<Change> changes = PlanExclusive(true, 2);
  ASSERT_EQ(changes.size(), 2u);
  for (const Change& c : changes) {
    ASSERT_TRUE(m_->Apply(c, ctx_).ok()) << c.id;
    ASSERT_TRUE(m_->Verify(c, ctx_).ok()) << c.id;
  }
  EXPECT_EQ(ReadFile(root + "/sys/module/ib_core/parameters/netns_mode"), "N\n");
  EXPECT_EQ(ReadFile(root + "/etc/modprobe.d/ib_core.conf"), "options ib_core netns_mode=0\n");
  // Applying the same change again writes nothing.
  uint64_t writes = fs->stats().files_opened_for_write;
  ASSERT_TRUE(m_->Apply(changes[1], ctx_).ok());
  EXPECT_EQ(fs->stats().files_opened_for_write, writes);
  // Verify sees a mismatch.
  Change wrong = changes[0];
  wrong.after = "shared";
  Status v = m_->Verify(wrong, ctx_);
  EXPECT_FALSE(v.ok());
  EXPECT_THAT(v.message(), HasSubstr("spec.rdma.netnsMode: desired shared, current exclusive"));
}

// The tree stand-in follows the kernel: EBUSY while named network
// namespaces exist, but setting the current mode always succeeds (rollback).
TEST_F(RdmaModuleTest, TreeStandInRefusesWhileOtherNamespacesExist) {
  std::string root = ExtractedHostTree("cx5-roce");
  ASSERT_EQ(
      std::system(
          ("mkdir -p '" + root + "/run/netns' && touch '" + root + "/run/netns/blue'").c_str()),
      0);
  auto fs = NewLocalHostFs(root);
  ASSERT_TRUE(Start(fs.get()));
  std::vector<Change> changes = PlanExclusive(true, 2);
  ASSERT_EQ(changes.size(), 2u);
  ASSERT_TRUE(m_->Apply(changes[0], ctx_).ok());
  EXPECT_THAT(ctx_.deferred_to_reboot, HasSubstr("EBUSY"));
  EXPECT_THAT(ctx_.deferred_to_reboot, HasSubstr("/run/netns/blue"));
  EXPECT_EQ(ReadFile(root + "/sys/module/ib_core/parameters/netns_mode"), "Y\n");
  ctx_.deferred_to_reboot.clear();
  Change same = changes[0];
  same.after = "shared";
  uint64_t writes = fs->stats().files_opened_for_write;
  ASSERT_TRUE(m_->Apply(same, ctx_).ok());
  EXPECT_TRUE(ctx_.deferred_to_reboot.empty());
  EXPECT_EQ(fs->stats().files_opened_for_write, writes);
}

// A tree whose parameter file cannot be written is an error, not "the
// kernel refused": even EBUSY from the write is not deferred.
TEST_F(RdmaModuleTest, TreeWriteFailureIsAnError) {
  std::string root = ExtractedHostTree("cx5-roce");
  provisioner::testing::SimOptions opt;
  opt.faults = {{0, "netns_mode", EBUSY, -1}};
  provisioner::testing::SimulatedHostFs fs(root, opt);
  ASSERT_TRUE(Start(&fs));
  std::vector<Change> changes = PlanExclusive(true, 2);
  ASSERT_EQ(changes.size(), 2u);
  Status s = m_->Apply(changes[0], ctx_);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.err(), EBUSY);
  EXPECT_TRUE(ctx_.deferred_to_reboot.empty());
}

TEST_F(RdmaModuleTest, LiveSwitchRetriesThenDefersToReboot) {
  LiveLookingFs fs(ExtractedHostTree("cx5-roce"));
  k_.set_errno = EBUSY;
  ASSERT_TRUE(Start(&fs));
  std::vector<Change> changes = PlanExclusive(true, 2);
  ASSERT_EQ(changes.size(), 2u);
  Status s = m_->Apply(changes[0], ctx_);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(k_.sets, 3);
  EXPECT_EQ(clock_.sleeps(), 2);
  EXPECT_THAT(ctx_.deferred_to_reboot, HasSubstr("EBUSY"));
  EXPECT_THAT(ctx_.deferred_to_reboot, HasSubstr("next boot"));
}

TEST_F(RdmaModuleTest, RefusedWithoutPersistIsAnError) {
  LiveLookingFs fs(ExtractedHostTree("cx5-roce"));
  k_.set_errno = EBUSY;
  ASSERT_TRUE(Start(&fs));
  std::vector<Change> changes = PlanExclusive(/*persist=*/false, 1);
  ASSERT_EQ(changes.size(), 1u);
  Status s = m_->Apply(changes[0], ctx_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), EBUSY);
  EXPECT_THAT(s.message(), HasSubstr("persist is false"));
  EXPECT_TRUE(ctx_.deferred_to_reboot.empty());
  // EPERM is never "wait for a reboot".
  k_.set_errno = EPERM;
  std::vector<Change> again = PlanExclusive(true, 2);
  ASSERT_FALSE(again.empty());
  Status perm = m_->Apply(again[0], ctx_);
  EXPECT_EQ(perm.err(), EPERM);
}

// The engine path: a refused live switch is applied as "at the next boot",
// the file is written, apply reports a reboot, and convergence accepts it.
TEST(RdmaModule, EngineReportsDeferredChangeAsRebootRequired) {
  std::string root = ExtractedHostTree("cx5-roce");
  LiveLookingFs fs(root);
  FakeKernel k;
  k.set_errno = EBUSY;
  ApplyReport r = ApplyExclusiveThroughEngine(&fs, &k);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_TRUE(r.reboot_required);
  ASSERT_EQ(r.deferred.size(), 1u);
  EXPECT_EQ(r.deferred[0].first, "rdma/system/netnsMode");
  EXPECT_EQ(ReadFile(root + "/etc/modprobe.d/ib_core.conf"), "options ib_core netns_mode=0\n");
  EXPECT_EQ(k.mode, "shared");
}

TEST_F(RdmaModuleTest, ChecksComeFromTheModule) {
  auto fs = NewLocalHostFs(ExtractedHostTree("cx5-ib"));
  ASSERT_TRUE(Start(fs.get()));
  CheckSink sink;
  m_->Check(nullptr, f_, sink);
  bool ib_ok = false;
  for (const auto& c : sink.results())
    ib_ok = ib_ok || (c.id == "rdma.ib-port" && c.verdict == Verdict::kOk);
  EXPECT_TRUE(ib_ok);
}

// Every write of the netns changes failing, in turn: apply fails and the
// tree is back to what it was, byte for byte (with ib_core.conf seeded, so
// that restoring it means keeping the site's lines).
TEST(RdmaModule, EveryWriteFailingLeavesTheTreeAsItWas) {
  auto fresh = [] {
    std::string root = ExtractedHostTree("cx5-roce");
    std::ofstream(root + "/etc/modprobe.d/ib_core.conf") << "options ib_core recv_queue_size=512\n";
    return root;
  };
  const std::string pristine = fresh();
  auto run = [&](const std::string& root, std::vector<provisioner::testing::WriteFault> faults) {
    provisioner::testing::SimOptions opt;
    opt.faults = std::move(faults);
    provisioner::testing::SimulatedHostFs fs(root, opt);
    FakeKernel k;
    ApplyReport r = ApplyExclusiveThroughEngine(&fs, &k);
    return std::make_pair(r.status, fs.writes());
  };
  std::string clean = fresh();
  auto [ok, writes] = run(clean, {});
  ASSERT_TRUE(ok.ok()) << ok.message();
  ASSERT_EQ(writes, 2);
  ASSERT_FALSE(provisioner::testing::DiffTrees(pristine, clean).empty());
  for (int n = 1; n <= writes; ++n) {
    for (int err : {EIO, ENOSPC, EBUSY}) {
      std::string root = fresh();
      auto [status, w] = run(root, {{n, "", err, 1}});
      EXPECT_FALSE(status.ok()) << "write " << n << " errno " << err;
      EXPECT_EQ(status.err(), err) << status.message();
      EXPECT_EQ(provisioner::testing::DiffTreesText(pristine, root), "")
          << "write " << n << " errno " << err;
    }
  }
}

}  // namespace
}  // namespace provisioner::rdma
