// The roce module on the live root ("/") against the real kernel, in a
// private network namespace with a veth pair (unshare(CLONE_NEWNET); root):
// discovery asks dcbnl, the kernel answers EOPNOTSUPP (a veth has no
// dcbnl_ops), and a host.yaml asking for trust and PFC there is a plan
// error that says so, naming the field. A veth has no ecn/ directory either.
#include <netlink/netlink.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/roce/roce_module.h"
#include "test/support/fake_pci_module.h"
#include "test/support/netns.h"

namespace provisioner {
namespace {

using ::testing::HasSubstr;

[[maybe_unused]] ::testing::Environment* const kNetns =
    ::testing::AddGlobalTestEnvironment(new testing::NetnsEnvironment(/*with_macvlan=*/false));

// The real host's network in the test's namespace, with veth-a as the one
// network PF (the pci module's double) and the roce module; `want_` holds one
// nic "veth" selecting veth-a, its roce section for the test to fill.
class RoceNetnsTest : public testing::LiveRootTest {
 protected:
  void SetUp() override {
    modules_.push_back(std::make_unique<testing::FakePciModule>(
        std::vector<PciFunction>{testing::NetworkPf("0000:01:00.0", "veth-a", "1af4", "0001")}));
    modules_.push_back(std::make_unique<RoceModule>());
    want_.nics.push_back(NicSpec());
    want_.nics[0].name = "veth";
    want_.nics[0].selector.pf_names = {"veth-a"};
  }

  DesiredState want_;
};

TEST_F(RoceNetnsTest, LiveDcbOnAVethIsAClearPlanError) {
  want_.nics[0].roce = NicRoceSpec{"dscp", std::vector<int>{3}, std::vector<int>{3}, std::nullopt};

  auto facts = Discover(modules_, ctx_, want_);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const RoceNetdevFacts& n = facts->roce.netdevs.at("veth-a");
  EXPECT_FALSE(n.trust.has_value());
  EXPECT_THAT(n.dcb_error, HasSubstr("dcbnl DCB_CMD_IEEE_GET veth-a: EOPNOTSUPP"));
  EXPECT_FALSE(n.ecn_dir);

  PlanResult plan = BuildPlan(modules_, want_, *facts);
  EXPECT_TRUE(plan.plan.changes.empty());
  // ECN without ecn/ is the firmware module's (not loaded here): for a
  // card that is no ConnectX it says so (firmware_planner_test).
  ASSERT_EQ(plan.diagnostics.size(), 2u);
  EXPECT_EQ(plan.diagnostics[0].path, "spec.nics[0].roce.trust");
  EXPECT_THAT(plan.diagnostics[0].message, HasSubstr("has no DCB support"));
  EXPECT_EQ(plan.diagnostics[1].path, "spec.nics[0].roce.pfc");
}

// cableLength and buffers on the real kernel: the same EOPNOTSUPP, a plan
// error naming each field and the dcbnl answer.
TEST_F(RoceNetnsTest, LiveCableLengthAndBuffersOnAVethArePlanErrors) {
  NicRoceSpec r;
  r.cable_length = 30;
  r.buffers = RoceBufferSpec{std::vector<int>{0, 0, 0, 1, 0, 0, 0, 0},
                             std::vector<long long>{65536, 196480}};
  want_.nics[0].roce = r;

  auto facts = Discover(modules_, ctx_, want_);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const RoceNetdevFacts& n = facts->roce.netdevs.at("veth-a");
  EXPECT_FALSE(n.cable_length.has_value());
  EXPECT_FALSE(n.prio2buffer.has_value());
  PlanResult plan = BuildPlan(modules_, want_, *facts);
  EXPECT_TRUE(plan.plan.changes.empty());
  ASSERT_EQ(plan.diagnostics.size(), 2u);
  EXPECT_EQ(plan.diagnostics[0].path, "spec.nics[0].roce.cableLength");
  EXPECT_THAT(plan.diagnostics[0].message,
              HasSubstr("could not be read: dcbnl DCB_CMD_IEEE_GET veth-a: EOPNOTSUPP"));
  EXPECT_EQ(plan.diagnostics[1].path, "spec.nics[0].roce.buffers");
  EXPECT_THAT(plan.diagnostics[1].message, HasSubstr("has no DCB support"));
}

}  // namespace
}  // namespace provisioner
