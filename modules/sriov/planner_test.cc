#include "modules/sriov/planner.h"

#include <string>
#include <utility>
#include <vector>

#include "engine/model/selector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/support/fake_pci_module.h"

namespace provisioner {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::Field;
using ::testing::HasSubstr;

PciFunction Pf(std::string addr, std::string netdev, int total, int num) {
  PciFunction f = testing::NetworkPf(std::move(addr), std::move(netdev));
  if (total > 0) {
    SriovInfo s;
    s.total_vfs = total;
    s.num_vfs = num;
    for (int i = 0; i < num; ++i) {  // settled: every VF probed, with its netdev
      VfInfo vf;
      vf.vf_index = i;
      vf.pci_address = "vf" + std::to_string(i);
      vf.driver = "mlx5_core";
      vf.netdevs = {"vfnet" + std::to_string(i)};
      s.vfs.push_back(vf);
    }
    f.sriov = s;
  }
  return f;
}

// af:00.0 (127 VFs possible, `num0` enabled), af:00.1 (127, `num1`),
// 3b:00.0 without SR-IOV (SRIOV_EN=0).
HostFacts Host(int num0 = 0, int num1 = 0) {
  HostFacts h;
  h.pci.push_back(Pf("0000:3b:00.0", "ens1f0", 0, 0));
  h.pci.push_back(Pf("0000:af:00.0", "ens6f0np0", 127, num0));
  h.pci.push_back(Pf("0000:af:00.1", "ens6f1np1", 127, num1));
  return h;
}

NicSpec Nic(std::string name, std::string root_device, std::optional<int> num_vfs) {
  NicSpec n;
  n.name = std::move(name);
  n.selector.root_devices = {std::move(root_device)};
  n.num_vfs = num_vfs;
  return n;
}

// A nic selecting every PF of one ConnectX model (vendor 15b3).
NicSpec ModelNic(std::string name, std::string device_id, int num_vfs) {
  NicSpec n;
  n.name = std::move(name);
  n.selector.vendor = "15b3";
  n.selector.device_id = std::move(device_id);
  n.num_vfs = num_vfs;
  return n;
}

struct Planned {
  std::vector<Change> changes;
  std::vector<Diagnostic> diags;
};

Planned Plan(const DesiredState& d, const HostFacts& h) {
  PlanSink sink;
  PlanNumVfs(d, h, sink);
  return {sink.changes(), sink.diagnostics()};
}

Planned Plan(std::vector<NicSpec> nics, const HostFacts& h) {
  DesiredState d;
  d.nics = std::move(nics);
  return Plan(d, h);
}

// A diagnostic at `path` whose message matches.
::testing::Matcher<Diagnostic> Diag(const std::string& path,
                                    ::testing::Matcher<std::string> message) {
  return AllOf(Field(&Diagnostic::path, path), Field(&Diagnostic::message, message));
}

// The one change of a plan without diagnostics (a test failure otherwise).
Change OnlyChange(std::vector<NicSpec> nics, const HostFacts& h) {
  Planned p = Plan(std::move(nics), h);
  EXPECT_TRUE(p.diags.empty());
  EXPECT_EQ(p.changes.size(), 1u);
  return p.changes.size() == 1 ? p.changes[0] : Change{};
}

TEST(SriovPlannerTest, ZeroToN) {
  Change c = OnlyChange({Nic("gpu1-nic", "0000:af:00.0", 12)}, Host());
  // Every field of its record but apply's detail and the plan graph's.
  auto fields = [](const Change& x) {
    nlohmann::json r = ChangeToRecord(x);
    for (const char* k : {"detail", "resource", "dependsOn"}) r.erase(k);
    return r;
  };
  EXPECT_EQ(fields(c),
            fields(MakeChange("sriov", "0000:af:00.0", "numVfs", 0, 12, Disruption::kLive,
                              kPhaseNumVfs, "nic gpu1-nic wants 12 VFs", "spec.nics[0].numVfs")));
  EXPECT_FALSE(c.detail.contains("resetFirst"));
}

// From 4 VFs: to 8 the kernel needs 0 first; to 0 is SR-IOV off.
TEST(SriovPlannerTest, NToMResetsFirstNToZeroTurnsSriovOff) {
  Change m = OnlyChange({Nic("pf0", "0000:af:00.0", 8)}, Host(4));
  EXPECT_EQ(m.before, 4);
  EXPECT_EQ(m.after, 8);
  EXPECT_EQ(m.detail["resetFirst"], true);
  Change off = OnlyChange({Nic("pf0", "0000:af:00.0", 0)}, Host(4));
  EXPECT_EQ(off.before, 4);
  EXPECT_EQ(off.after, 0);
  EXPECT_EQ(off.reason, "nic pf0 wants SR-IOV off");
  EXPECT_FALSE(off.detail.contains("resetFirst"));
}

TEST(SriovPlannerTest, EqualIsNoChange) {
  Planned p = Plan({Nic("pf0", "0000:af:00.0", 4), Nic("pf1", "0000:af:00.1", 0)}, Host(4, 0));
  EXPECT_TRUE(p.diags.empty());
  EXPECT_TRUE(p.changes.empty());
}

// The count is right but the VFs are still coming: a change that writes
// nothing (before == after) and makes apply wait for them.
TEST(SriovPlannerTest, EqualButUnsettledWaits) {
  DesiredState d;
  d.nics.push_back(Nic("gpu1-nic", "0000:af:00.0", 4));
  HostFacts h = Host(4);
  SriovInfo& s = *h.pci[1].sriov;
  s.vfs.resize(2);  // VF functions 2 and 3 not there yet
  Planned p = Plan(d, h);
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_EQ(p.changes[0].before, 4);
  EXPECT_EQ(p.changes[0].after, 4);
  EXPECT_EQ(p.changes[0].reason,
            "nic gpu1-nic wants 4 VFs; the count is set but 2/4 VFs present: wait for them");

  // Every VF function there: settled, with or without netdevs (a pod's VF
  // has its netdev in the pod's network namespace; vfio-pci gives none).
  h = Host(4);
  h.pci[1].sriov->vfs[2].netdevs.clear();
  h.pci[1].sriov->vfs[3].netdevs.clear();
  h.pci[1].sriov->vfs[3].driver = "vfio-pci";
  EXPECT_TRUE(Plan(d, h).changes.empty());
}

TEST(SriovPlannerTest, UnsetNumVfsIsUnmanaged) {
  Planned p = Plan({Nic("pf0", "0000:af:00.0", std::nullopt),
                    Nic("ghost", "0000:00:00.7", std::nullopt)},  // not even checked
                   Host(4));
  EXPECT_TRUE(p.diags.empty());
  EXPECT_TRUE(p.changes.empty());
}

TEST(SriovPlannerTest, SelectorMatchingNothingIsAnError) {
  DesiredState d;
  d.nics = {Nic("ok", "0000:af:00.1", 2), ModelNic("nope", "101d", 4)};
  // Reported once for every nic by the pci module (CheckUnmatchedSelectors),
  // not again here.
  EXPECT_TRUE(Plan(d, Host()).diags.empty());
  const auto unmatched = CheckUnmatchedSelectors(d, Host());
  ASSERT_EQ(unmatched.size(), 1u);
  EXPECT_EQ(unmatched[0].first, "spec.nics[1].nicSelector");
  EXPECT_EQ(unmatched[0].second,
            "selects no PCI function on this host (vendor 15b3, deviceID 101d)");
}

TEST(SriovPlannerTest, PfWithoutSriovIsAnError) {
  Planned p = Plan({Nic("mgmt", "0000:3b:00.0", 4)}, Host());
  EXPECT_THAT(p.diags, ElementsAre(Diag("spec.nics[0].numVfs", AllOf(HasSubstr("0000:3b:00.0"),
                                                                     HasSubstr("sriov_totalvfs"),
                                                                     HasSubstr("SRIOV_EN=0")))));
  EXPECT_TRUE(p.changes.empty());
}

TEST(SriovPlannerTest, ZeroVfsOnAPfWithoutSriovIsAlreadyTrue) {
  Planned p = Plan({Nic("mgmt", "0000:3b:00.0", 0)}, Host());
  EXPECT_TRUE(p.diags.empty());
  EXPECT_TRUE(p.changes.empty());
}

TEST(SriovPlannerTest, AboveTotalIsAnError) {
  Planned p = Plan({Nic("gpu1-nic", "0000:af:00.0", 300)}, Host());
  EXPECT_THAT(p.diags, ElementsAre(Diag("spec.nics[0].numVfs",
                                        Eq("300 exceeds sriov_totalvfs 127 of 0000:af:00.0"))));
  EXPECT_TRUE(p.changes.empty());
  // Exactly the total is fine.
  EXPECT_TRUE(Plan({Nic("gpu1-nic", "0000:af:00.0", 127)}, Host()).diags.empty());
}

TEST(SriovPlannerTest, TwoNicsDisagreeingOnOnePf) {
  NicSpec b;
  b.name = "b";
  b.selector.pf_names = {"ens6f0np0"};
  b.num_vfs = 4;
  Planned p = Plan({Nic("a", "0000:af:00.0", 8), b}, Host());
  EXPECT_THAT(
      p.diags,
      ElementsAre(Diag("spec.nics[1].numVfs",
                       AllOf(HasSubstr("0000:af:00.0"), HasSubstr("spec.nics[0] (a) wants 8")))));
}

TEST(SriovPlannerTest, TwoNicsAgreeingOnOnePfPlanOneChange) {
  Planned p = Plan({Nic("a", "0000:af:00.0", 8), Nic("b", "af:00.0", 8)}, Host());
  EXPECT_TRUE(p.diags.empty());
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_EQ(p.changes[0].reason, "nic a wants 8 VFs");
}

TEST(SriovPlannerTest, OneSelectorManyPfs) {
  HostFacts h = Host(0, 2);
  h.pci.erase(h.pci.begin());  // drop the PF without SR-IOV
  Planned p = Plan({ModelNic("all-cx5", "1017", 2)}, h);
  EXPECT_TRUE(p.diags.empty());
  ASSERT_EQ(p.changes.size(), 1u);  // af:00.1 already has 2
  EXPECT_EQ(p.changes[0].target, "0000:af:00.0");
}

TEST(SriovPlannerTest, DescribeSelectorListsGivenFields) {
  NicSelector s;
  EXPECT_EQ(DescribeSelector(s), "no fields");
  s.vendor = "15b3";
  s.root_devices = {"0000:af:00.0", "0000:af:00.1"};
  s.pf_names = {"ens6f0np0"};
  EXPECT_EQ(DescribeSelector(s),
            "vendor 15b3, rootDevices [0000:af:00.0, 0000:af:00.1], pfNames [ens6f0np0]");
}

}  // namespace
}  // namespace provisioner

namespace provisioner {
namespace {

// Issue 25 item 11: SRIOV_EN and NUM_OF_VFS are Mellanox firmware settings
// (mstconfig): an Intel PF's errors do not hint at them.
TEST(SriovPlannerTest, FirmwareHintsOnlyForMellanoxCards) {
  HostFacts h = Host();
  h.pci[0].vendor = "8086";  // 3b:00.0, no SR-IOV: an Intel 82576 port
  h.pci[0].device_id = "10c9";
  PciFunction intel = Pf("0000:3c:00.0", "enp60s0f0", 7, 0);  // igb: 7 VFs at most
  intel.vendor = "8086";
  intel.device_id = "10c9";
  h.pci.push_back(intel);
  DesiredState d;
  d.nics = {Nic("igb0", "0000:3b:00.0", 4), Nic("igb1", "0000:3c:00.0", 8),
            Nic("cx", "0000:af:00.0", 200)};
  Planned p = Plan(d, h);
  ASSERT_EQ(p.diags.size(), 3u);
  EXPECT_EQ(p.diags[0].message,
            "0000:3b:00.0 (8086:10c9) has no SR-IOV capability: no sriov_totalvfs");
  EXPECT_EQ(p.diags[1].message, "8 exceeds sriov_totalvfs 7 of 0000:3c:00.0");
  EXPECT_EQ(p.diags[2].message, "200 exceeds sriov_totalvfs 127 of 0000:af:00.0");
  h.pci[0].vendor = "15b3";
  p = Plan(d, h);
  EXPECT_NE(p.diags[0].message.find("(firmware SRIOV_EN=0?"), std::string::npos);
}

// The records a numVfs change's rollback reads (vfsUpAtCount,
// vfSettingsAtCount) come from files too: only a record made at the count
// the rollback goes back to, of the right shape, is one.
TEST(SriovPlannerTest, ARecordCountsOnlyAtItsOwnCountAndShape) {
  Change c = MakeChange(kSriovModule, "0000:af:00.0", kNumVfsAttribute, 4, 0, Disruption::kLive,
                        1, "", "");
  c.detail[kVfsUpAtCount] = {{"numVfs", 4}, {"vfIndexes", {0, 2}}};
  const nlohmann::json* r = RecordAtCount(c, kVfsUpAtCount, "vfIndexes", 4);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ((*r)["vfIndexes"], nlohmann::json({0, 2}));
  EXPECT_EQ(RecordAtCount(c, kVfsUpAtCount, "vfIndexes", 2), nullptr);  // another count
  EXPECT_EQ(RecordAtCount(c, kVfsUpAtCount, "vfs", 4), nullptr);        // no such list
  EXPECT_EQ(RecordAtCount(c, kVfSettingsAtCount, "vfs", 4), nullptr);   // no such record
  c.detail[kVfsUpAtCount] = {{"numVfs", "4"}, {"vfIndexes", {0}}};
  EXPECT_EQ(RecordAtCount(c, kVfsUpAtCount, "vfIndexes", 4), nullptr);  // a count as text
  c.detail[kVfsUpAtCount] = {{"numVfs", 4}, {"vfIndexes", 0}};
  EXPECT_EQ(RecordAtCount(c, kVfsUpAtCount, "vfIndexes", 4), nullptr);  // not a list
  c.detail = nullptr;
  EXPECT_EQ(RecordAtCount(c, kVfsUpAtCount, "vfIndexes", 4), nullptr);
}

}  // namespace
}  // namespace provisioner
