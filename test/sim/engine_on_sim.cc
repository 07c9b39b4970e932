#include "test/sim/engine_on_sim.h"

#include <utility>

#include "engine/config/loader.h"
#include "test/support/ttar.h"

namespace provisioner::testing {

DesiredState LoadSpec(const std::string& spec_body) {
  LoadResult r = LoadDesiredStateFromString(
      "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n  name: w\nspec:\n" +
          spec_body,
      "host.yaml");
  for (const auto& d : r.diagnostics) ADD_FAILURE() << d.path << ": " << d.message;
  EXPECT_TRUE(r.state.has_value());
  return r.state.value_or(DesiredState());
}

std::vector<std::string> ChangeIds(const Plan& plan) {
  std::vector<std::string> ids;
  for (const auto& c : plan.changes) ids.push_back(c.id);
  return ids;
}

void EngineOnSimTest::BuildSim(const HostSpec& spec, const std::string& prefix,
                               SimOptions options) {
  root_ = MakeTempDir(prefix);
  ASSERT_NE(root_, "");
  ASSERT_TRUE(BuildHostTree(spec, root_).ok());
  fs_ = NewSimulatedHostFs(root_, std::move(options));
  sim_ = static_cast<SimulatedHostFs*>(fs_.get());
  ctx_.fs = fs_.get();
  ctx_.clock = &clock_;
  ctx_.settle_timeout = std::chrono::seconds(30);
}

HostFacts EngineOnSimTest::Facts() {
  auto facts = Discover(modules_, ctx_);
  EXPECT_TRUE(facts.ok()) << facts.status().message();
  return facts.value_or(HostFacts());
}

PlanResult EngineOnSimTest::PlanNow(const DesiredState& desired) {
  return BuildPlan(modules_, desired, Facts());
}

ApplyReport EngineOnSimTest::ApplyFailingRollsBack(const Plan& plan, const DesiredState& desired,
                                                   const std::string& error) {
  ApplyReport r = ApplyPlan(modules_, plan, desired, ctx_);
  EXPECT_FALSE(r.status.ok()) << "apply succeeded; wanted a failure naming " << error;
  EXPECT_NE(r.status.message().find(error), std::string::npos) << r.status.message();
  for (const auto& rb : r.rolled_back) EXPECT_TRUE(rb.status.ok()) << rb.status.message();
  return r;
}

}  // namespace provisioner::testing
