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
#include "test/support/netns.h"

namespace provisioner {
namespace {

using ::testing::HasSubstr;

[[maybe_unused]] ::testing::Environment* const kNetns =
    ::testing::AddGlobalTestEnvironment(new testing::NetnsEnvironment(/*with_macvlan=*/false));

// Reports veth-a as a network PF (test double of the pci module).
class FakePciModule final : public Module {
 public:
  std::string_view name() const override { return "pci"; }
  Status Discover(HostContext&, HostFacts& facts) override {
    PciFunction f;
    f.pci_address = "0000:01:00.0";
    f.vendor = "1af4";
    f.device_id = "0001";
    f.class_code = 0x020000;
    f.netdevs = {"veth-a"};
    facts.pci.push_back(f);
    return OkStatus();
  }
  void Plan(const DesiredState&, const HostFacts&, PlanSink&) const override {}
  Status Apply(const Change&, HostContext&) override { return InternalError("no changes"); }
  Status Verify(const Change&, HostContext&) override { return OkStatus(); }
};

TEST(RoceNetnsTest, LiveDcbOnAVethIsAClearPlanError) {
  auto fs = NewLocalHostFs("/");
  HostContext ctx;
  ctx.fs = fs.get();
  std::vector<std::unique_ptr<Module>> modules;
  modules.push_back(std::make_unique<FakePciModule>());
  modules.push_back(std::make_unique<RoceModule>());
  DesiredState want;
  want.nics.push_back(NicSpec());
  want.nics[0].name = "veth";
  want.nics[0].selector.pf_names = {"veth-a"};
  want.nics[0].roce = NicRoceSpec{"dscp", std::vector<int>{3}, std::vector<int>{3}, std::nullopt};

  auto facts = Discover(modules, ctx, want);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const RoceNetdevFacts& n = facts->roce.netdevs.at("veth-a");
  EXPECT_FALSE(n.trust.has_value());
  EXPECT_THAT(n.dcb_error, HasSubstr("dcbnl DCB_CMD_IEEE_GET veth-a: EOPNOTSUPP"));
  EXPECT_FALSE(n.ecn_dir);

  PlanResult plan = BuildPlan(modules, want, *facts);
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
TEST(RoceNetnsTest, LiveCableLengthAndBuffersOnAVethArePlanErrors) {
  auto fs = NewLocalHostFs("/");
  HostContext ctx;
  ctx.fs = fs.get();
  std::vector<std::unique_ptr<Module>> modules;
  modules.push_back(std::make_unique<FakePciModule>());
  modules.push_back(std::make_unique<RoceModule>());
  DesiredState want;
  want.nics.push_back(NicSpec());
  want.nics[0].name = "veth";
  want.nics[0].selector.pf_names = {"veth-a"};
  NicRoceSpec r;
  r.cable_length = 30;
  r.buffers = RoceBufferSpec{std::vector<int>{0, 0, 0, 1, 0, 0, 0, 0},
                             std::vector<long long>{65536, 196480}};
  want.nics[0].roce = r;

  auto facts = Discover(modules, ctx, want);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  const RoceNetdevFacts& n = facts->roce.netdevs.at("veth-a");
  EXPECT_FALSE(n.cable_length.has_value());
  EXPECT_FALSE(n.prio2buffer.has_value());
  PlanResult plan = BuildPlan(modules, want, *facts);
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
