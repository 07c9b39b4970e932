// The eswitch planner and doctor check on facts built by hand (no host).
#include "modules/eswitch/eswitch_planner.h"

#include <string>

#include "gtest/gtest.h"
#include "test/support/fake_pci_module.h"

namespace provisioner {
namespace {

HostFacts Host(const std::string& driver, int num_vfs, const std::string& mode) {
  HostFacts f;
  PciFunction pf = testing::NetworkPf("0000:af:00.0", "ens6f0np0", "15b3", "101d");
  pf.driver = driver;
  SriovInfo s;
  s.total_vfs = 8;
  s.num_vfs = num_vfs;
  pf.sriov = s;
  f.pci.push_back(pf);
  EswitchPfFacts e;
  e.mode = mode;
  if (driver == "mlx5_core") e.flow_steering_mode = "dmfs";
  f.eswitch.discovered = true;
  f.eswitch.pfs["0000:af:00.0"] = e;
  return f;
}

DesiredState Want(const std::string& mode) {
  NicSpec n = testing::NicAt("pf0", "0000:af:00.0");
  n.eswitch_mode = mode;
  return testing::Wanting(n);
}

TEST(EswitchPlannerTest, RepresentorPortNames) {
  EXPECT_EQ(RepresentorVfIndex("pf0vf0"), 0);
  EXPECT_EQ(RepresentorVfIndex("pf1vf15"), 15);
  for (const char* not_vf : {"p0", "pf0", "pf0sf1", "c1pf0vf1", "pfvf1", "pf0vf", "pf0vfx"}) {
    EXPECT_FALSE(RepresentorVfIndex(not_vf).has_value()) << not_vf;
  }
}

TEST(EswitchPlannerTest, SameModeNoChange) {
  PlanSink sink;
  PlanEswitch(Want("legacy"), Host("mlx5_core", 4, "legacy"), sink);
  EXPECT_TRUE(sink.changes().empty());
  EXPECT_TRUE(sink.diagnostics().empty());
}

TEST(EswitchPlannerTest, Mlx5AfterNumVfsWithItsPrerequisites) {
  PlanSink sink;
  PlanEswitch(Want("switchdev"), Host("mlx5_core", 4, "legacy"), sink);
  ASSERT_EQ(sink.changes().size(), 1u);
  const Change& c = sink.changes()[0];
  EXPECT_EQ(c.id, "eswitch/0000:af:00.0/eswitchMode");
  EXPECT_EQ(c.phase, kPhaseEswitch);
  EXPECT_GT(c.phase, kPhaseNumVfs);
  EXPECT_LT(c.phase, kPhaseVfSettings);
  EXPECT_EQ(c.resource, "pf:0000:af:00.0");
  EXPECT_EQ(c.detail["flowSteeringMode"], "smfs");
  EXPECT_EQ(c.detail["hwTcOffload"], true);
  EXPECT_EQ(c.detail["rebindVfs"], true);
  EXPECT_NE(c.reason.find("4 VFs unbound and bound again"), std::string::npos) << c.reason;
}

TEST(EswitchPlannerTest, IceBeforeNumVfsAndRefusedWithVfs) {
  PlanSink sink;
  PlanEswitch(Want("switchdev"), Host("ice", 0, "legacy"), sink);
  ASSERT_EQ(sink.changes().size(), 1u);
  EXPECT_EQ(sink.changes()[0].phase, kPhaseEswitchBeforeVfs);
  EXPECT_LT(kPhaseEswitchBeforeVfs, kPhaseNumVfs);
  EXPECT_FALSE(sink.changes()[0].detail.contains("flowSteeringMode"));
  PlanSink with_vfs;
  PlanEswitch(Want("switchdev"), Host("ice", 2, "legacy"), with_vfs);
  EXPECT_TRUE(with_vfs.changes().empty());
  ASSERT_EQ(with_vfs.diagnostics().size(), 1u);
  EXPECT_EQ(with_vfs.diagnostics()[0].path, "spec.nics[0].eswitchMode");
}

TEST(EswitchPlannerTest, UnreadableModeAndNoSriovAreErrors) {
  HostFacts f = Host("mlx5_core", 0, "legacy");
  f.eswitch.pfs["0000:af:00.0"].mode.reset();
  f.eswitch.pfs["0000:af:00.0"].error = "devlink ESWITCH_GET pci/0000:af:00.0: EOPNOTSUPP";
  PlanSink sink;
  PlanEswitch(Want("switchdev"), f, sink);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_NE(sink.diagnostics()[0].message.find("EOPNOTSUPP"), std::string::npos);
  HostFacts no_sriov = Host("mlx5_core", 0, "legacy");
  no_sriov.pci[0].sriov.reset();
  PlanSink sink2;
  PlanEswitch(Want("switchdev"), no_sriov, sink2);
  ASSERT_EQ(sink2.diagnostics().size(), 1u);
  EXPECT_NE(sink2.diagnostics()[0].message.find("no SR-IOV"), std::string::npos);
}

TEST(EswitchPlannerTest, TwoNicsDisagreeingOnOnePf) {
  DesiredState d = Want("switchdev");
  NicSpec other = d.nics[0];
  other.name = "pf0b";
  other.eswitch_mode = "legacy";
  d.nics.push_back(other);
  PlanSink sink;
  PlanEswitch(d, Host("mlx5_core", 0, "legacy"), sink);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(sink.diagnostics()[0].path, "spec.nics[1].eswitchMode");
}

TEST(EswitchPlannerTest, DoctorCountsRepresentors) {
  HostFacts f = Host("mlx5_core", 2, "switchdev");
  f.eswitch.pfs["0000:af:00.0"].representors = {{0, "ens6f0npf0vf0"}};
  CheckSink sink;
  CheckEswitch(nullptr, f, sink);
  ASSERT_EQ(sink.results().size(), 1u);
  EXPECT_EQ(sink.results()[0].verdict, Verdict::kFail);
  EXPECT_NE(sink.results()[0].summary.find("VF 1 of 2"), std::string::npos);
  f.eswitch.pfs["0000:af:00.0"].representors[1] = "ens6f0npf0vf1";
  CheckSink ok;
  CheckEswitch(nullptr, f, ok);
  ASSERT_EQ(ok.results().size(), 1u);
  EXPECT_EQ(ok.results()[0].verdict, Verdict::kOk);
  // A legacy PF has no representors to miss; host.yaml wanting switchdev fails.
  CheckSink legacy;
  CheckEswitch(nullptr, Host("mlx5_core", 2, "legacy"), legacy);
  EXPECT_TRUE(legacy.results().empty());
  DesiredState d = Want("switchdev");
  CheckEswitch(&d, Host("mlx5_core", 2, "legacy"), legacy);
  ASSERT_EQ(legacy.results().size(), 1u);
  EXPECT_EQ(legacy.results()[0].id, "eswitch.mode");
}

}  // namespace
}  // namespace provisioner
