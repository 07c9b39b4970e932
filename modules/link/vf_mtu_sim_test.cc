// vfMtu through the engine (pci, sriov, vf, link) against the in-process
// kernel simulator (test/sim/netdev_sim.h refuses a VF netdev's MTU above its
// PF's or its maximum): plan order, apply, verify, convergence, rollback.
#include <stdio.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "gtest/gtest.h"
#include "modules/link/link_backend.h"
#include "modules/link/link_module.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/sriov_module.h"
#include "modules/vf/vf_module.h"
#include "test/sim/engine_on_sim.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using std::chrono::milliseconds;
using testing::ChangeIds;
using testing::LoadSpec;

constexpr char kFourVfs[] = R"(  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
)";

constexpr char kJumboVfs[] = R"(  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
      mtu: 9000
      vfMtu: 9000
)";

class VfMtuSimTest : public testing::EngineOnSimTest {
 protected:
  void SetUp() override {
    testing::SimOptions o;
    o.settle_reads = 3;
    BuildSim(testing::Cx5RoceHost(), "vfmtu", o);
    VfModuleOptions vf;
    vf.use_netlink = false;
    LinkModuleOptions link;
    link.backend = [](HostFs& fs) { return NewSysfsLinkBackend(fs); };
    modules_.push_back(std::make_unique<PciModule>());
    modules_.push_back(std::make_unique<SriovModule>());
    modules_.push_back(std::make_unique<VfModule>(std::move(vf)));
    modules_.push_back(std::make_unique<LinkModule>(std::move(link)));
  }

  std::string Mtu(const std::string& netdev) {
    return fs_->ReadAttr("/sys/class/net/" + netdev + "/mtu").value_or("?");
  }

  // numVfs 4 applied: four VF netdevs at 1500.
  void ApplyFourVfs() {
    DesiredState four = LoadSpec(kFourVfs);
    ASSERT_TRUE(ApplyPlan(modules_, PlanNow(four).plan, four, ctx_).status.ok());
  }

  // Over four VFs at 1500, the plan of kJumboVfs (*d): the PF's MTU, then
  // the VFs'.
  PlanResult PlanJumboOverFourVfs(DesiredState* d) {
    ApplyFourVfs();
    *d = LoadSpec(kJumboVfs);
    PlanResult p = PlanNow(*d);
    EXPECT_EQ(ChangeIds(p.plan),
              (std::vector<std::string>{"link/ens6f0np0/mtu", "link/0000:af:00.0/vfMtu"}));
    return p;
  }
};

// The issue's "done when": numVfs 4 and vfMtu 9000 on a ConnectX host.
TEST_F(VfMtuSimTest, VfsCreatedThenPfRaisedThenVfMtuThenConverged) {
  DesiredState d = LoadSpec(kJumboVfs);
  PlanResult p = PlanNow(d);
  EXPECT_TRUE(p.diagnostics.empty());
  EXPECT_EQ(ChangeIds(p.plan),
            (std::vector<std::string>{"sriov/0000:af:00.0/numVfs", "link/ens6f0np0/mtu",
                                      "link/0000:af:00.0/vfMtu"}));
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);  // verifies and checks convergence
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Mtu("ens6f0np0"), "9000");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Mtu("ens6f0v" + std::to_string(i)), "9000") << i;
  EXPECT_EQ(Mtu("ens6f1np1"), "1500");  // the other port: not asked
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
}

// Issue 36 item 3: VF 2 bound to mlx5_core but its netdev still on its way
// (re-applying right after a kill, a boot while udev renames): vfMtu waits
// for it within the settle timeout, as the count change does, instead of
// failing at once with "has no netdev to set the mtu on". The netdev comes
// back on the third sleep of the wait (a test clock: no wall-clock time).
class NetdevArrivesClock final : public Clock {
 public:
  explicit NetdevArrivesClock(std::function<void()> arrive) : arrive_(std::move(arrive)) {}
  std::chrono::steady_clock::time_point Now() override { return now_; }
  void SleepFor(milliseconds d) override {
    now_ += d;
    if (++sleeps == 3) arrive_();
  }
  int sleeps = 0;

 private:
  std::chrono::steady_clock::time_point now_;
  std::function<void()> arrive_;
};

TEST_F(VfMtuSimTest, AVfNetdevOnItsWayIsWaitedFor) {
  DesiredState d;
  PlanResult p = PlanJumboOverFourVfs(&d);
  ASSERT_EQ(p.plan.changes.size(), 2u);
  const std::string net = root_ + "/sys/bus/pci/devices/0000:af:00.4/net";
  ASSERT_EQ(::rename(net.c_str(), (net + ".away").c_str()), 0);
  NetdevArrivesClock arriving(
      [&] { ASSERT_EQ(::rename((net + ".away").c_str(), net.c_str()), 0); });
  ctx_.clock = &arriving;
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_GE(arriving.sleeps, 3);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Mtu("ens6f0v" + std::to_string(i)), "9000") << i;
  ctx_.clock = &clock_;
}

// A VF netdev that never comes: the wait ends at the settle timeout and says which VF.
TEST_F(VfMtuSimTest, AVfNetdevThatNeverComesFailsAtTheSettleTimeout) {
  DesiredState d;
  PlanResult p = PlanJumboOverFourVfs(&d);
  const std::string net = root_ + "/sys/bus/pci/devices/0000:af:00.4/net";
  ASSERT_EQ(::rename(net.c_str(), (net + ".away").c_str()), 0);
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("VF 2 (0000:af:00.4, mlx5_core) has no netdev after 30s"),
            std::string::npos)
      << r.status.message();
  EXPECT_EQ(Mtu("ens6f0np0"), "1500");  // rolled back
}

// VFs there at 1500; VF 3's write fails: the PF and VFs 0-2 go back to 1500.
TEST_F(VfMtuSimTest, AFailedVfRollsBackEveryMtu) {
  DesiredState d;
  PlanResult p = PlanJumboOverFourVfs(&d);
  ASSERT_EQ(p.plan.changes.size(), 2u);
  EXPECT_EQ(p.plan.changes[1].before, nlohmann::json({1500, 1500, 1500, 1500}));
  sim_->AddFault({0, "ens6f0v3/mtu", EIO, -1});
  ApplyReport r = ApplyFailingRollsBack(p.plan, d, "VF 3 (0000:af:00.5)");
  EXPECT_NE(r.status.message().find("EIO"), std::string::npos) << r.status.message();
  ASSERT_EQ(r.rolled_back.size(), 2u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Mtu("ens6f0v" + std::to_string(i)), "1500") << i;
  EXPECT_EQ(Mtu("ens6f0np0"), "1500");
}

// The PF lowered behind the plan's back: the simulated kernel refuses the
// VF's MTU above it (EINVAL), apply says which VF, nothing stays half-done.
TEST_F(VfMtuSimTest, TheKernelRefusesAVfMtuAboveThePf) {
  ASSERT_NO_FATAL_FAILURE(ApplyFourVfs());
  ASSERT_TRUE(fs_->WriteAttr("/sys/class/net/ens6f0np0/mtu", "9000\n").ok());
  DesiredState d = LoadSpec(R"(  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
      vfMtu: 9000
)");
  PlanResult p = PlanNow(d);
  ASSERT_EQ(ChangeIds(p.plan), (std::vector<std::string>{"link/0000:af:00.0/vfMtu"}));
  ASSERT_TRUE(fs_->WriteAttr("/sys/class/net/ens6f0np0/mtu", "4000\n").ok());
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("VF 0 (0000:af:00.2)"), std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("EINVAL"), std::string::npos) << r.status.message();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Mtu("ens6f0v" + std::to_string(i)), "1500") << i;
  // Planned again against the PF's 4000: a plan error at the field.
  PlanResult again = PlanNow(d);
  ASSERT_EQ(again.diagnostics.size(), 1u);
  EXPECT_EQ(again.diagnostics[0].path, "spec.nics[0].vfMtu");
}

// Issue 28 item 3: two vfGroups of one PF with their own vfMtu, the first a
// netdevice group on a nic without deviceType. One vfMtu change per group,
// VF netdevs up for the netdevice group only; a failed write in the second
// group rolls both groups' MTUs back; applied whole, every VF has its
// group's MTU and the next plan is empty.
TEST_F(VfMtuSimTest, VfGroupsEachTheirMtuAndOnlyNetdeviceGroupsUp) {
  ASSERT_NO_FATAL_FAILURE(ApplyFourVfs());
  for (int i = 0; i < 4; ++i) {  // every VF netdev down (`ip link set ... down`)
    const std::string flags = "/sys/class/net/ens6f0v" + std::to_string(i) + "/flags";
    ASSERT_TRUE(fs_->WriteAttr(flags, "0x1002\n").ok());
  }
  DesiredState d = LoadSpec(R"(  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
      mtu: 9000
      vfGroups:
        - { range: "0-1", deviceType: netdevice, resourceName: big, vfMtu: 9000 }
        - { range: "2-3", resourceName: small, vfMtu: 4000 }
)");
  PlanResult p = PlanNow(d);
  EXPECT_TRUE(p.diagnostics.empty());
  std::vector<std::string> links;
  for (const std::string& id : ChangeIds(p.plan)) {
    if (id.rfind("link/0000", 0) == 0) links.push_back(id);
  }
  ASSERT_EQ(links,
            (std::vector<std::string>{"link/0000:af:00.0/vfMtu#0-1", "link/0000:af:00.0/vfMtu#2-3",
                                      "link/0000:af:00.0/vfsUp#0-1"}));
  auto up = [&](int vf) {
    return fs_->ReadAttr("/sys/class/net/ens6f0v" + std::to_string(vf) + "/flags").value_or("?");
  };
  const std::string down_flags = up(0);
  ASSERT_EQ(down_flags, "0x1002");
  sim_->AddFault({0, "ens6f0v3/mtu", EIO, 1});  // once: the next apply goes through
  ApplyReport bad = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_FALSE(bad.status.ok());
  EXPECT_NE(bad.status.message().find("VF 3"), std::string::npos) << bad.status.message();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Mtu("ens6f0v" + std::to_string(i)), "1500") << i;
  EXPECT_EQ(Mtu("ens6f0np0"), "1500");

  p = PlanNow(d);
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  const char* want[] = {"9000", "9000", "4000", "4000"};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(Mtu("ens6f0v" + std::to_string(i)), want[i]) << i;
  EXPECT_NE(up(0), down_flags);
  EXPECT_NE(up(1), down_flags);
  EXPECT_EQ(up(2), down_flags);  // no deviceType netdevice there: left as it is
  EXPECT_EQ(up(3), down_flags);
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
}

}  // namespace
}  // namespace provisioner
