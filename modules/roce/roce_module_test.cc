// The roce module through the engine (discover, plan, apply, verify,
// rollback) with a fake DCB backend standing in for dcbnl (these machines
// have no DCB-capable NIC) and ECN files in a temporary tree.
#include "modules/roce/roce_module.h"

#include <cerrno>
#include <map>

#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/roce/roce_ecn.h"
#include "modules/roce/roce_planner.h"
#include "modules/roce/roce_tos.h"
#include "test/support/fake_pci_module.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using ::testing::HasSubstr;

// DCB state in memory, as a driver keeps it; SetPfc can be made to fail.
struct FakeDcbState {
  std::map<std::string, DcbState> netdevs;
  int pfc_error = 0;  // errno SetPfc fails with (0 = none)
  int sets = 0;
};

class FakeDcb final : public DcbBackend {
 public:
  explicit FakeDcb(FakeDcbState* s) : s_(s) {}
  std::string Name() const override { return "fake"; }
  StatusOr<DcbState> Read(const std::string& ifname) override {
    auto it = s_->netdevs.find(ifname);
    if (it == s_->netdevs.end()) return ErrnoToStatus(EOPNOTSUPP, "fake dcbnl " + ifname);
    return it->second;
  }
  Status SetTrust(const std::string& ifname, const std::string& trust) override {
    ++s_->sets;
    s_->netdevs[ifname].trust = trust;
    return OkStatus();
  }
  Status SetPfc(const std::string& ifname, const std::vector<int>& priorities) override {
    ++s_->sets;
    if (s_->pfc_error != 0) return ErrnoToStatus(s_->pfc_error, "fake dcbnl set PFC " + ifname);
    s_->netdevs[ifname].pfc = priorities;
    return OkStatus();
  }
  Status SetDscpMap(const std::string& ifname,
                    const std::map<int, std::optional<int>>& entries) override {
    ++s_->sets;
    for (const auto& [d, p] : entries) {
      if (p)
        s_->netdevs[ifname].dscp_map[d] = *p;
      else
        s_->netdevs[ifname].dscp_map.erase(d);
    }
    return OkStatus();
  }
  Status SetDcbx(const std::string& ifname, const std::string& mode) override {
    ++s_->sets;
    s_->netdevs[ifname].dcbx = mode;
    return OkStatus();
  }
  Status SetCableLength(const std::string& ifname, int meters) override {
    ++s_->sets;
    s_->netdevs[ifname].cable_length = meters;
    return OkStatus();
  }
  Status SetBuffer(const std::string& ifname, const DcbBuffer& buffer) override {
    ++s_->sets;
    s_->netdevs[ifname].buffer = buffer;
    return OkStatus();
  }

 private:
  FakeDcbState* s_;
};

class RoceModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("roce-module");
    testing::TreeWriter w(root_);
    for (const char* point : {kEcnNp, kEcnRp}) {
      for (int p = 0; p < 8; ++p) {
        ASSERT_TRUE(w.WriteFile(EcnPath("ens6f0np0", point, p), "0\n", 0644).ok());
      }
    }
    ASSERT_TRUE(w.WriteFile("/etc/nccl.conf", "# site\nNCCL_IB_TC=106\n", 0644).ok());
    fs_ = NewLocalHostFs(root_);
    ctx_.fs = fs_.get();
    dcb_.netdevs["ens6f0np0"] = DcbState{"pcp", {}};
    // One ConnectX PF with netdev ens6f0np0.
    modules_.push_back(std::make_unique<testing::FakePciModule>(
        std::vector<PciFunction>{testing::NetworkPf("0000:af:00.0", "ens6f0np0")}));
    RoceModuleOptions options;
    options.dcb = [this](HostFs&) { return std::make_unique<FakeDcb>(&dcb_); };
    options.nccl_ib_tc_env = []() -> const char* { return nullptr; };
    modules_.push_back(std::make_unique<RoceModule>(options));
    want_.nics.push_back(NicSpec());
    want_.nics[0].name = "rail0";
    want_.nics[0].selector.pf_names = {"ens6f0np0"};
    want_.nics[0].roce =
        NicRoceSpec{"dscp", std::vector<int>{3}, std::vector<int>{3}, std::nullopt};
  }

  std::string Ecn(const char* point, int p) {
    return *fs_->ReadFile(EcnPath("ens6f0np0", point, p));
  }

  std::string root_;
  std::unique_ptr<HostFs> fs_;
  HostContext ctx_;
  FakeDcbState dcb_;
  std::vector<std::unique_ptr<Module>> modules_;
  DesiredState want_;
};

TEST_F(RoceModuleTest, DiscoverReadsDcbEcnAndNcclConf) {
  auto facts = Discover(modules_, ctx_);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const RoceNetdevFacts& n = facts->roce.netdevs.at("ens6f0np0");
  EXPECT_EQ(n.trust, std::optional<std::string>("pcp"));
  EXPECT_TRUE(n.ecn_dir);
  EXPECT_EQ(n.ecn_np.size(), 8u);
  EXPECT_EQ(facts->roce.nccl_ib_tc, std::optional<int>(106));
  EXPECT_EQ(facts->roce.nccl_ib_tc_source, "/etc/nccl.conf");
}

TEST_F(RoceModuleTest, PlanApplyVerifyThenNothingLeft) {
  auto facts = Discover(modules_, ctx_, want_);
  ASSERT_TRUE(facts.ok());
  PlanResult plan = BuildPlan(modules_, want_, *facts);
  ASSERT_TRUE(plan.diagnostics.empty()) << plan.diagnostics[0].message;
  ASSERT_EQ(plan.plan.changes.size(), 4u);
  ApplyReport report = ApplyPlan(modules_, plan.plan, want_, ctx_);
  ASSERT_TRUE(report.status.ok()) << report.status.message();
  EXPECT_EQ(dcb_.netdevs["ens6f0np0"].trust, "dscp");
  EXPECT_EQ(dcb_.netdevs["ens6f0np0"].pfc, (std::vector<int>{3}));
  EXPECT_EQ(Ecn(kEcnNp, 3), "1\n");
  EXPECT_EQ(Ecn(kEcnRp, 3), "1\n");
  EXPECT_EQ(Ecn(kEcnRp, 4), "0\n");
  auto again = Discover(modules_, ctx_, want_);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(BuildPlan(modules_, want_, *again).plan.changes.empty());
  // A second apply of the same plan writes nothing.
  const int sets = dcb_.sets;
  ApplyReport second = ApplyPlan(modules_, plan.plan, want_, ctx_);
  ASSERT_TRUE(second.status.ok()) << second.status.message();
  EXPECT_EQ(dcb_.sets, sets);
}

TEST_F(RoceModuleTest, ARefusedPfcRollsTheTrustBack) {
  dcb_.pfc_error = EINVAL;
  auto facts = Discover(modules_, ctx_, want_);
  ASSERT_TRUE(facts.ok());
  PlanResult plan = BuildPlan(modules_, want_, *facts);
  ApplyReport report = ApplyPlan(modules_, plan.plan, want_, ctx_);
  ASSERT_FALSE(report.status.ok());
  EXPECT_THAT(report.status.message(), HasSubstr("roce/ens6f0np0/pfc"));
  EXPECT_THAT(report.status.message(), HasSubstr("EINVAL"));
  // In reverse order, the refused change first (it may have half happened).
  ASSERT_EQ(report.rolled_back.size(), 2u);
  EXPECT_EQ(report.rolled_back[0].change.id, "roce/ens6f0np0/pfc");
  EXPECT_EQ(report.rolled_back[1].change.id, "roce/ens6f0np0/trust");
  EXPECT_TRUE(report.rolled_back[1].status.ok());
  EXPECT_EQ(dcb_.netdevs["ens6f0np0"].trust, "pcp");
  EXPECT_EQ(Ecn(kEcnNp, 3), "0\n");  // never reached
}

TEST_F(RoceModuleTest, VerifyNamesTheFieldAndBothValues) {
  auto facts = Discover(modules_, ctx_, want_);
  ASSERT_TRUE(facts.ok());
  PlanResult plan = BuildPlan(modules_, want_, *facts);
  ASSERT_FALSE(plan.plan.changes.empty());
  RoceModule& roce = static_cast<RoceModule&>(*modules_[1]);
  Status s = roce.Verify(plan.plan.changes[0], ctx_);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(),
              HasSubstr("spec.nics[0].roce.trust (ens6f0np0 trust): desired dscp, current pcp"));
  Change bad = plan.plan.changes[0];
  bad.after = "l2";
  EXPECT_THAT(roce.Apply(bad, ctx_).message(), HasSubstr("trust must be"));
  bad.attribute = "ecn.roce_np.9";
  EXPECT_THAT(roce.Apply(bad, ctx_).message(), HasSubstr("no attribute ecn.roce_np.9"));
}

TEST_F(RoceModuleTest, PlanningWithoutRoceReadsNothing) {
  DesiredState none;
  none.nics = want_.nics;
  none.nics[0].roce.reset();
  auto facts = Discover(modules_, ctx_, none);
  ASSERT_TRUE(facts.ok());
  EXPECT_TRUE(facts->roce.discovered);
  EXPECT_TRUE(facts->roce.netdevs.empty());
}

// Issue 35 item 7: a tos change that makes rdma_cm/<dev> (upstream kernel,
// configfs mounted, rdma_cm loaded) makes it with the port files the kernel
// makes; its inverse (rollback) removes only that directory.
TEST(RoceTosConfigfs, ApplyMakesTheDirectoryAndRollbackRemovesIt) {
  const std::string root = testing::MakeTempDir("roce-cm");
  testing::TreeWriter w(root);
  ASSERT_TRUE(w.WriteFile("/sys/class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n", 0644).ok());
  ASSERT_TRUE(w.WriteFile("/sys/kernel/config/rdma_cm/.keep", "", 0644).ok());
  auto fs = NewLocalHostFs(root);
  const std::string file = "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos";
  EXPECT_EQ(TosFile(*fs, "mlx5_0", 1), file);
  EXPECT_EQ(RdmaCmDirToMake(*fs, file), "/sys/kernel/config/rdma_cm/mlx5_0");
  // No rdma_cm configfs (not mounted, or rdma_cm not loaded): nothing.
  auto bare = NewLocalHostFs(testing::MakeTempDir("roce-cm-bare"));
  EXPECT_EQ(TosFile(*bare, "mlx5_0", 1), "");

  HostContext ctx;
  ctx.fs = fs.get();
  RoceModule m;
  Change c = MakeChange(kRoceModule, "ens6f0np0", kTosAttribute, nullptr, 106, Disruption::kLive,
                        kPhaseRoce, "test", "spec.nics[0].roce.tos");
  c.detail["file"] = file;
  c.detail["mkdir"] = "/sys/kernel/config/rdma_cm/mlx5_0";
  ASSERT_TRUE(m.CheckChange(c).ok());
  Status applied = m.Apply(c, ctx);
  ASSERT_TRUE(applied.ok()) << applied.message();
  EXPECT_EQ(*fs->ReadFile(file), "106\n");
  EXPECT_EQ(*fs->ReadFile("/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode"),
            "RoCE v2\n");
  EXPECT_TRUE(m.Verify(c, ctx).ok());
  Change inverse = c;
  std::swap(inverse.before, inverse.after);
  ASSERT_TRUE(m.CheckChange(inverse).ok());
  Status undone = m.Apply(inverse, ctx);
  ASSERT_TRUE(undone.ok()) << undone.message();
  EXPECT_FALSE(fs->Exists("/sys/kernel/config/rdma_cm/mlx5_0"));
  EXPECT_TRUE(fs->IsDir("/sys/kernel/config/rdma_cm"));
  EXPECT_TRUE(m.Verify(inverse, ctx).ok());
  // Without the device, make_cma_dev answers ENODEV.
  c.detail["file"] = "/sys/kernel/config/rdma_cm/mlx5_9/ports/1/default_roce_tos";
  c.detail["mkdir"] = "/sys/kernel/config/rdma_cm/mlx5_9";
  EXPECT_EQ(m.Apply(c, ctx).err(), ENODEV);
}

}  // namespace
}  // namespace provisioner
