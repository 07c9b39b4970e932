// Modules' end-to-end tests against the in-process kernel simulator: a host
// tree built from a spec, served by SimulatedHostFs, the engine's discover,
// plan and apply over the test's modules, on a clock that moves only when the
// code under test sleeps (waits for the simulator's settling take no time).
#ifndef PROVISIONER_TEST_SIM_ENGINE_ON_SIM_H_
#define PROVISIONER_TEST_SIM_ENGINE_ON_SIM_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/engine.h"
#include "engine/model/desired.h"
#include "engine/module/clock.h"
#include "engine/module/module.h"
#include "gtest/gtest.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_tree.h"

namespace provisioner::testing {

// Time that passes only in SleepFor.
class FakeClock final : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return now_; }
  void SleepFor(std::chrono::milliseconds d) override {
    now_ += d;
    ++sleeps_;
  }
  // All the time slept so far, and how many sleeps.
  std::chrono::milliseconds Elapsed() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        now_ - std::chrono::steady_clock::time_point());
  }
  int sleeps() const { return sleeps_; }

 private:
  std::chrono::steady_clock::time_point now_{};
  int sleeps_ = 0;
};

// The desired state of a host.yaml whose spec is `spec_body` (its sections,
// indented 2 spaces); each loader diagnostic fails the test.
DesiredState LoadSpec(const std::string& spec_body);

// The ids of a plan's changes, in plan order.
std::vector<std::string> ChangeIds(const Plan& plan);

class EngineOnSimTest : public ::testing::Test {
 protected:
  // Builds `spec` into a fresh temp dir <prefix>.XXXXXX (root_) served by the
  // simulator with `options` (fs_, sim_); ctx_ reads and writes it and waits
  // up to 30 s of clock_ for it to settle. The test fills modules_.
  void BuildSim(const HostSpec& spec, const std::string& prefix, SimOptions options = {});

  // Discover with modules_ (a failure fails the test: empty facts).
  HostFacts Facts();
  // Plan `desired` against freshly discovered facts.
  PlanResult PlanNow(const DesiredState& desired);
  // Applies `plan` with modules_, expecting it to fail with a message that
  // contains `error` (an errno name, a VF, a change id) and every inverse
  // change of the rollback to succeed; the report, for what else to check.
  ApplyReport ApplyFailingRollsBack(const Plan& plan, const DesiredState& desired,
                                    const std::string& error);

  std::string root_;
  std::unique_ptr<HostFs> fs_;
  SimulatedHostFs* sim_ = nullptr;
  FakeClock clock_;
  HostContext ctx_;
  std::vector<std::unique_ptr<Module>> modules_;
};

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_ENGINE_ON_SIM_H_
