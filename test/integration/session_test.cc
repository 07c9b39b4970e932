// The session API (engine/core/session.h) in process with every registered
// module: plan an example on its bundled host tree; apply over the simulated
// kernel (test/sim), as `provisioner apply` does, then plan again: nothing left.
#include "engine/core/session.h"

#include <fstream>
#include <string>

#include "engine/host/host_lock.h"
#include "gtest/gtest.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_yaml.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

const std::string kHostYaml = HostYaml(R"(  rdma:
    netnsMode: exclusive
  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
      mtu: 9000
)");

std::string Tree(const std::string& ttar) {
  std::string dir = MakeTempDir("session");
  Status s = ExtractTtar(RunfilePath(ttar), dir);
  EXPECT_TRUE(s.ok()) << s.message();
  return dir;
}

PlanRequest SimulatedRequest(const std::string& file, const std::string& root) {
  PlanRequest request;
  request.file = file;
  request.host.root = root;
  request.host.settle_timeout = std::chrono::seconds(10);
  request.host.open_fs = [](const std::string& r) {
    SimOptions options;
    options.settle_reads = 1;
    return NewSimulatedHostFs(r, options);
  };
  return request;
}

TEST(SessionTest, PlansAnExampleOnItsTree) {
  PlanRequest request;
  request.file = RunfilePath("examples/roce-sriov.yaml");
  request.host.root = Tree("examples/hosts/cx5-roce.ttar");
  PlanOutcome p = PlanFile(request);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_FALSE(p.plan.changes.empty());
  bool sriov = false;
  for (const auto& c : p.plan.changes) sriov = sriov || c.id == "sriov/0000:af:00.0/numVfs";
  EXPECT_TRUE(sriov);
  EXPECT_FALSE(p.lock.held());  // only when asked
}

TEST(SessionTest, AppliesOverTheSimulatedKernelAndConverges) {
  const std::string root = Tree("examples/hosts/cx5-roce.ttar");
  const std::string file = MakeTempDir("session-yaml") + "/host.yaml";
  { std::ofstream(file) << kHostYaml; }
  PlanRequest request = SimulatedRequest(file, root);
  request.lock = true;
  PlanOutcome p = PlanFile(request);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_TRUE(p.lock.held());
  const size_t planned = p.plan.changes.size();
  ASSERT_GE(planned, 2u);
  ApplyOutcome out = ApplyPlanned(p, ApplyRequest{});
  ASSERT_TRUE(out.status.ok()) << out.status.message();
  EXPECT_TRUE(out.ran);
  EXPECT_EQ(out.applied, planned);
  EXPECT_TRUE(out.rolled_back.empty());
  for (const auto& c : out.changes) {
    EXPECT_TRUE(c.status == ChangeStatus::kApplied || c.status == ChangeStatus::kDeferredToReboot)
        << c.change.id << ": " << ChangeStatusName(c.status);
  }

  // The lock is held by `p` until it goes: a second apply waits, then fails.
  PlanOutcome blocked = PlanFile(request);
  EXPECT_FALSE(blocked.status.ok());
  EXPECT_EQ(blocked.status.code(), StatusCode::kUnavailable) << blocked.status.message();

  p = PlanOutcome();
  PlanOutcome again = PlanFile(SimulatedRequest(file, root));
  ASSERT_TRUE(again.status.ok()) << again.status.message();
  EXPECT_TRUE(again.plan.changes.empty());
}

}  // namespace
}  // namespace provisioner::testing
