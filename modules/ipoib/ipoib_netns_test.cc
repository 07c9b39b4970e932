// The netlink side of the ipoib module against real links in a private
// network namespace of this test process (unshare(CLONE_NEWNET), root). There
// is no IPoIB there: addresses, MTU and up are what ipoib does over netlink,
// and they are the same calls on a veth as on ib0 (the sysfs side, mode and
// pkey children, is tested with the kernel simulator: ipoib_cli_test).
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
#include "engine/core/journal.h"
#include "engine/host/host_fs.h"
#include "engine/host/recording_host_fs.h"
#include "gtest/gtest.h"
#include "modules/ipoib/ipoib_backend.h"
#include "modules/ipoib/ipoib_module.h"
#include "modules/ipoib/ipoib_planner.h"
#include "test/support/backend_by_root.h"
#include "test/support/netns.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

[[maybe_unused]] ::testing::Environment* const kNetns =
    ::testing::AddGlobalTestEnvironment(new testing::NetnsEnvironment(/*with_macvlan=*/true));

class IpoibNetnsTest : public testing::LiveRootTest {
 protected:
  void SetUp() override {
    for (const char* n : {"veth-a", "veth-b", "mv0"}) {
      auto now = addresses_->Read(n);
      ASSERT_TRUE(now.ok()) << now.status().message();
      for (const std::string& a : *now) ASSERT_TRUE(addresses_->Remove(n, a).ok());
      ASSERT_TRUE(link_->SetUp(n, false).ok());
      ASSERT_TRUE(link_->SetMtu(n, 1500).ok());
    }
  }

  static Change Make(const std::string& target, const char* attribute, nlohmann::json before,
                     nlohmann::json after) {
    return MakeChange(kIpoibModule, target, attribute, std::move(before), std::move(after),
                      Disruption::kLive, kPhaseLinks, "test", "spec.nics[0].ipoib");
  }

  std::vector<std::string> Addresses(const std::string& ifname) {
    auto a = addresses_->Read(ifname);
    EXPECT_TRUE(a.ok()) << a.status().message();
    return a.ok() ? *a : std::vector<std::string>{};
  }

  std::unique_ptr<IpoibAddressBackend> addresses_ = NewNetlinkIpoibAddressBackend();
  std::unique_ptr<LinkBackend> link_ = NewNetlinkLinkBackend();
};

TEST_F(IpoibNetnsTest, AddReadAndRemoveAddresses) {
  ASSERT_TRUE(link_->SetUp("veth-a", true).ok());  // IPv6 link-local appears: not ours
  ASSERT_TRUE(addresses_->Add("veth-a", "172.31.0.10/16").ok());
  ASSERT_TRUE(addresses_->Add("veth-a", "fd00:31::10/64").ok());
  EXPECT_EQ(Addresses("veth-a"), (std::vector<std::string>{"172.31.0.10/16", "fd00:31::10/64"}));
  EXPECT_TRUE(Addresses("veth-b").empty());
  Status again = addresses_->Add("veth-a", "172.31.0.10/16");
  EXPECT_EQ(again.err(), EEXIST) << again.message();
  ASSERT_TRUE(addresses_->Remove("veth-a", "172.31.0.10/16").ok());
  EXPECT_EQ(Addresses("veth-a"), std::vector<std::string>{"fd00:31::10/64"});
  Status gone = addresses_->Remove("veth-a", "172.31.0.10/16");
  EXPECT_FALSE(gone.ok());
  EXPECT_NE(gone.message().find("RTM_DELADDR 172.31.0.10/16 on veth-a"), std::string::npos)
      << gone.message();
  auto missing = addresses_->Read("nosuch0");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(missing.status().err(), ENODEV);
}

// The module's own apply and verify of addresses, mtu and up, on the live root.
TEST_F(IpoibNetnsTest, ModuleAppliesAndVerifiesOverNetlink) {
  IpoibModule module;
  ASSERT_TRUE(addresses_->Add("veth-a", "10.9.0.1/24").ok());  // not wanted: removed
  const std::vector<Change> changes = {
      Make("veth-a", kIpoibMtu, 1500, 4092),
      Make("veth-a", kIpoibAddresses, nlohmann::json::array({"10.9.0.1/24"}),
           nlohmann::json::array({"172.31.0.10/16", "fd00:31:0::10/64"})),
      Make("veth-a", kIpoibUp, false, true)};
  for (const Change& c : changes) {
    ASSERT_TRUE(module.Apply(c, ctx_).ok()) << c.id;
    Status v = module.Verify(c, ctx_);
    EXPECT_TRUE(v.ok()) << c.id << ": " << v.message();
  }
  EXPECT_EQ(Addresses("veth-a"), (std::vector<std::string>{"172.31.0.10/16", "fd00:31::10/64"}));
  auto l = link_->Read("veth-a");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->mtu, 4092);
  EXPECT_TRUE(l->admin_up);
  // The inverse changes put everything back.
  for (auto it = changes.rbegin(); it != changes.rend(); ++it) {
    Change inv = InverseChange(*it);
    ASSERT_TRUE(module.Apply(inv, ctx_).ok()) << inv.id;
    EXPECT_TRUE(module.Verify(inv, ctx_).ok()) << inv.id;
  }
  EXPECT_EQ(Addresses("veth-a"), std::vector<std::string>{"10.9.0.1/24"});
  EXPECT_EQ(link_->Read("veth-a")->mtu, 1500);
}

// The kernel refuses the second change (a macvlan above its lower device's
// MTU: EINVAL); the engine undoes the first, an address.
TEST_F(IpoibNetnsTest, KernelRefusalRollsBackTheAddresses) {
  std::vector<std::unique_ptr<Module>> modules;
  modules.push_back(std::make_unique<IpoibModule>());
  Plan plan;
  plan.changes = {Make("veth-b", kIpoibAddresses, nlohmann::json::array(),
                       nlohmann::json::array({"172.31.0.11/16"})),
                  Make("mv0", kIpoibMtu, 1500, 9000)};
  ApplyOptions options;
  options.check_converged = false;
  ApplyReport report = ApplyPlan(modules, plan, DesiredState{}, ctx_, options);
  ASSERT_FALSE(report.status.ok());
  EXPECT_NE(report.status.message().find("EINVAL"), std::string::npos) << report.status.message();
  EXPECT_TRUE(Addresses("veth-b").empty());
  ASSERT_FALSE(report.rolled_back.empty());
  for (const auto& r : report.rolled_back) EXPECT_TRUE(r.status.ok()) << r.status.message();
}

// `snapshot` records what netlink answered; the tree backend replays it.
TEST_F(IpoibNetnsTest, SnapshotCaptureReplaysUnderATree) {
  ASSERT_TRUE(addresses_->Add("veth-a", "172.31.0.10/16").ok());
  HostFsRecord record;
  auto recording = NewRecordingHostFs(fs_.get(), &record);
  auto live = NewIpoibAddressBackend(*recording);
  ASSERT_EQ(live->Name(), "netlink");
  ASSERT_TRUE(live->Read("veth-a").ok());
  ASSERT_TRUE(live->Read("veth-b").ok());
  ASSERT_EQ(record.captures.count(kIpoibAddressCapture), 1u);
  EXPECT_EQ(record.captures[kIpoibAddressCapture], "veth-a 172.31.0.10/16\n");

  auto tree = NewLocalHostFs(testing::MakeTempDir("ipoib-tree"));
  ASSERT_TRUE(
      tree->WriteFileAtomic(kIpoibAddressCapture, record.captures[kIpoibAddressCapture]).ok());
  ASSERT_TRUE(tree->WriteFileAtomic("/sys/class/net/veth-a/mtu", "1500\n").ok());
  auto replay = NewIpoibAddressBackend(*tree);
  ASSERT_EQ(replay->Name(), "tree");
  auto a = replay->Read("veth-a");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(*a, std::vector<std::string>{"172.31.0.10/16"});
}

TEST(IpoibBackendFactory, NetlinkForTheLiveRootOnly) {
  testing::ExpectBackendByRoot([](HostFs& fs) { return NewIpoibAddressBackend(fs)->Name(); },
                               "netlink", "tree");
}

}  // namespace
}  // namespace provisioner
