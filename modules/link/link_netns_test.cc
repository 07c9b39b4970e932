// The link module against real links: veth and macvlan created in a private
// network namespace of this test process (unshare(CLONE_NEWNET), needs root
// or CAP_SYS_ADMIN), planned, applied and verified over rtnetlink.
//
// A veth is not a PCI function, so PCI discovery would never select it: a
// test module stands in for pci and reports each link as a PF with that
// netdev. The link module itself runs unchanged, on the live root ("/").
#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/link/macvlan.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "engine/host/recording_host_fs.h"
#include "gtest/gtest.h"
#include "modules/link/link_backend.h"
#include "modules/link/link_module.h"
#include "test/support/fake_pci_module.h"
#include "test/support/netns.h"

namespace provisioner {
namespace {

[[maybe_unused]] ::testing::Environment* const kNetns =
    ::testing::AddGlobalTestEnvironment(new testing::NetnsEnvironment(/*with_macvlan=*/true));

class LinkNetnsTest : public testing::LiveRootTest {
 protected:
  void SetUp() override {
    // veth-a, veth-b and mv0 (a macvlan on veth-a) as network PFs.
    modules_.push_back(std::make_unique<testing::FakePciModule>(
        std::vector<PciFunction>{testing::NetworkPf("0000:01:00.0", "veth-a", "1af4", "0001"),
                                 testing::NetworkPf("0000:02:00.0", "veth-b", "1af4", "0001"),
                                 testing::NetworkPf("0000:03:00.0", "mv0", "1af4", "0001")}));
    modules_.push_back(std::make_unique<LinkModule>());
    // Every test starts from the links as created: mtu 1500, down.
    for (const char* n : {"mv0", "veth-a", "veth-b"}) {
      ASSERT_TRUE(live_->SetUp(n, false).ok());
      ASSERT_TRUE(live_->SetMtu(n, 1500).ok());
    }
  }

  LinkFacts Now(const std::string& ifname) {
    auto l = live_->Read(ifname);
    EXPECT_TRUE(l.ok()) << l.status().message();
    return l.ok() ? *l : LinkFacts{};
  }

  static DesiredState Want(std::vector<std::pair<std::string, int>> mtus) {
    DesiredState d;
    for (const auto& [ifname, mtu] : mtus) {
      NicSpec n;
      n.name = "nic-" + ifname;
      n.selector.pf_names = {ifname};
      n.mtu = mtu;
      d.nics.push_back(n);
    }
    return d;
  }

  std::unique_ptr<LinkBackend> live_ = NewNetlinkLinkBackend();
};

TEST_F(LinkNetnsTest, DiscoverSeesTheKernelsValues) {
  auto facts = Discover(modules_, ctx_);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  ASSERT_EQ(facts->links.count("veth-a"), 1u);
  const LinkFacts& l = facts->links.at("veth-a");
  EXPECT_EQ(l.mtu, 1500);
  EXPECT_FALSE(l.admin_up);
  ASSERT_TRUE(l.min_mtu.has_value());
  ASSERT_TRUE(l.max_mtu.has_value());
  EXPECT_EQ(*l.min_mtu, 68);
  EXPECT_GT(*l.max_mtu, 9000);
  EXPECT_EQ(facts->links.count("mv0"), 1u);
}

TEST_F(LinkNetnsTest, PlanApplyAndASecondApplyDoesNothing) {
  DesiredState want = Want({{"veth-a", 9000}});
  auto facts = Discover(modules_, ctx_);
  ASSERT_TRUE(facts.ok());
  PlanResult plan = BuildPlan(modules_, want, *facts);
  ASSERT_TRUE(plan.diagnostics.empty()) << plan.diagnostics[0].message;
  ASSERT_EQ(plan.plan.changes.size(), 2u);
  EXPECT_EQ(plan.plan.changes[0].id, "link/veth-a/mtu");
  EXPECT_EQ(plan.plan.changes[0].before, 1500);
  EXPECT_EQ(plan.plan.changes[1].id, "link/veth-a/up");

  ApplyReport report = ApplyPlan(modules_, plan.plan, want, ctx_);
  ASSERT_TRUE(report.status.ok()) << report.status.message();
  EXPECT_FALSE(report.reboot_required);
  EXPECT_EQ(Now("veth-a").mtu, 9000);
  EXPECT_TRUE(Now("veth-a").admin_up);

  auto again = Discover(modules_, ctx_);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(BuildPlan(modules_, want, *again).plan.changes.empty());
}

TEST_F(LinkNetnsTest, MtuAboveTheDevicesMaximumIsAPlanError) {
  auto facts = Discover(modules_, ctx_);
  ASSERT_TRUE(facts.ok());
  const int max = facts->links.at("veth-a").max_mtu.value_or(65535);
  PlanResult plan = BuildPlan(modules_, Want({{"veth-a", max + 1}}), *facts);
  ASSERT_EQ(plan.diagnostics.size(), 1u);
  EXPECT_EQ(plan.diagnostics[0].path, "spec.nics[0].mtu");
  EXPECT_NE(plan.diagnostics[0].message.find(std::to_string(max)), std::string::npos);
}

// A macvlan's MTU cannot exceed its lower device's (veth-a, 1500): the
// kernel refuses the second change (EINVAL) and apply undoes the first.
TEST_F(LinkNetnsTest, KernelRefusalRollsBack) {
  DesiredState want = Want({{"veth-b", 9000}, {"mv0", 1600}});
  auto facts = Discover(modules_, ctx_);
  ASSERT_TRUE(facts.ok());
  PlanResult plan = BuildPlan(modules_, want, *facts);
  ASSERT_TRUE(plan.diagnostics.empty()) << plan.diagnostics[0].message;
  ApplyReport report = ApplyPlan(modules_, plan.plan, want, ctx_);
  ASSERT_FALSE(report.status.ok());
  EXPECT_NE(report.status.message().find("EINVAL"), std::string::npos) << report.status.message();
  EXPECT_NE(report.status.message().find("mv0"), std::string::npos) << report.status.message();
  EXPECT_EQ(Now("veth-b").mtu, 1500);
  EXPECT_FALSE(Now("veth-b").admin_up);
  EXPECT_EQ(Now("mv0").mtu, 1500);
  EXPECT_EQ(Now("veth-a").mtu, 1500);
  ASSERT_FALSE(report.rolled_back.empty());
  for (const auto& r : report.rolled_back) EXPECT_TRUE(r.status.ok()) << r.status.message();
}

TEST_F(LinkNetnsTest, MacvlanBelowItsLowerDeviceApplies) {
  DesiredState want = Want({{"mv0", 1400}});
  auto facts = Discover(modules_, ctx_);
  ASSERT_TRUE(facts.ok());
  PlanResult plan = BuildPlan(modules_, want, *facts);
  ApplyReport report = ApplyPlan(modules_, plan.plan, want, ctx_);
  ASSERT_TRUE(report.status.ok()) << report.status.message();
  EXPECT_EQ(Now("mv0").mtu, 1400);
  EXPECT_EQ(Now("veth-a").mtu, 1500);
}

// `snapshot` records what discovery reads; netlink is no file, so the link
// module names the sysfs files a tree root's discovery will read instead.
TEST_F(LinkNetnsTest, SnapshotRecordsTheSysfsFilesOfTheLinks) {
  HostFsRecord record;
  auto recording = NewRecordingHostFs(fs_.get(), &record);
  HostContext ctx;
  ctx.fs = recording.get();
  auto facts = Discover(modules_, ctx);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  for (const char* f : {"/sys/class/net/veth-a/mtu", "/sys/class/net/veth-a/flags",
                        "/sys/class/net/mv0/operstate"}) {
    EXPECT_EQ(record.files.count(f), 1u) << f;
  }
}

TEST_F(LinkNetnsTest, MissingLinkIsNotFound) {
  auto l = live_->Read("nosuch0");
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(l.status().err(), ENODEV);
  EXPECT_FALSE(live_->SetMtu("nosuch0", 1500).ok());
}

}  // namespace
}  // namespace provisioner
