// The session API over a fake module (the only one registered in this test):
// plan a host.yaml on a root, apply it, and the apply outcome's counts.
// Real modules over host trees and the simulated kernel:
// test/integration/session_test.cc.
#include "engine/core/session.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "engine/module/registry.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

// Apply reports success without changing anything: the host never converges.
bool g_stuck = false;

// A "knob" in <root>/knob; host.yaml wants it at its number of kernelModules.
class KnobModule final : public Module {
 public:
  std::string_view name() const override { return "knob"; }
  Status Discover(HostContext& ctx, HostFacts&) override {
    auto v = ctx.fs->ReadFile("/knob");
    current_ = v.ok() ? std::atoi(v->c_str()) : 0;
    return OkStatus();
  }
  void Plan(const DesiredState& desired, const HostFacts&, PlanSink& sink) const override {
    const int want = static_cast<int>(desired.kernel_modules.size());
    if (want == current_) return;
    Change c;
    c.id = "knob";
    c.module = "knob";
    c.before = current_;
    c.after = want;
    c.reason = "host.yaml wants " + std::to_string(want);
    c.field_path = "spec.kernelModules";
    sink.AddChange(c);
  }
  Status Apply(const Change& c, HostContext& ctx) override {
    if (g_stuck) return OkStatus();
    return ctx.fs->WriteFileAtomic("/knob", c.after.dump());
  }
  Status Verify(const Change&, HostContext&) override { return OkStatus(); }

 private:
  int current_ = 0;
};

PROVISIONER_REGISTER_MODULE("knob", KnobModule)

constexpr const char* kHostYaml = R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: worker1
spec:
  kernelModules:
    - mlx5_ib
    - mlx5_core
)";

class SessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_stuck = false;
    const std::string base = std::string(std::getenv("TEST_TMPDIR")) + "/" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    root_ = base + "-root";
    ASSERT_EQ(::mkdir(root_.c_str(), 0755), 0);
    file_ = base + "-host.yaml";
    Write(file_, kHostYaml);
  }
  static void Write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::trunc) << text;
  }
  PlanOutcome Plan() {
    PlanRequest request;
    request.file = file_;
    request.host.root = root_;
    return PlanFile(request);
  }
  std::string root_;
  std::string file_;
};

TEST_F(SessionTest, PlansTheFileOnTheRoot) {
  PlanOutcome p = Plan();
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(p.plan.changes.size(), 1u);
  EXPECT_EQ(p.plan.changes[0].after, 2);
  EXPECT_FALSE(p.facts_digest.empty());
  EXPECT_FALSE(p.interrupted.has_value());
  ASSERT_EQ(p.diagnostics.size(), 2u);  // the load's and the plan's, both empty
  EXPECT_EQ(p.diagnostics[0].stage, FileDiagnostics::Stage::kLoad);
  EXPECT_EQ(p.diagnostics[1].stage, FileDiagnostics::Stage::kPlan);
  EXPECT_TRUE(p.diagnostics[0].items.empty());
  EXPECT_TRUE(p.diagnostics[1].items.empty());
}

TEST_F(SessionTest, AnInvalidFileStopsWithItsDiagnostics) {
  Write(file_, std::string(kHostYaml) + "  bogus: 1\n");
  PlanOutcome p = Plan();
  EXPECT_FALSE(p.status.ok());
  EXPECT_TRUE(p.file_invalid);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].stage, FileDiagnostics::Stage::kLoad);
  EXPECT_EQ(p.diagnostics[0].errors(), 1);
  EXPECT_EQ(p.status.message(), file_ + ": 1 error");
  EXPECT_EQ(p.host, nullptr);  // the host was not opened
}

TEST_F(SessionTest, AMissingRootIsAHostError) {
  PlanRequest request;
  request.file = file_;
  request.host.root = root_ + "/missing";
  PlanOutcome p = PlanFile(request);
  EXPECT_FALSE(p.status.ok());
  EXPECT_FALSE(p.file_invalid);
  EXPECT_NE(p.status.message().find("--root " + root_ + "/missing"), std::string::npos)
      << p.status.message();
}

TEST_F(SessionTest, AppliesAndConverges) {
  PlanOutcome p = Plan();
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ApplyOutcome out = ApplyPlanned(p, ApplyRequest{});
  EXPECT_TRUE(out.status.ok()) << out.status.message();
  EXPECT_TRUE(out.ran);
  EXPECT_EQ(out.applied, 1u);
  ASSERT_EQ(out.changes.size(), 1u);
  EXPECT_EQ(out.changes[0].status, ChangeStatus::kApplied);
  EXPECT_FALSE(out.reboot_required);
  EXPECT_TRUE(Plan().plan.changes.empty());
}

TEST_F(SessionTest, DryRunChangesNothing) {
  PlanOutcome p = Plan();
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ApplyOutcome out = ApplyPlanned(p, ApplyRequest{.dry_run = true});
  EXPECT_TRUE(out.status.ok());
  EXPECT_FALSE(out.ran);
  ASSERT_EQ(out.changes.size(), 1u);
  EXPECT_EQ(out.changes[0].status, ChangeStatus::kPlanned);
  EXPECT_EQ(out.applied, 0u);
  EXPECT_EQ(Plan().plan.changes.size(), 1u);
}

// The journal cannot begin: nothing ran, nothing applied (the report's
// applied.size() - 1 underflowed here).
TEST_F(SessionTest, JournalThatCannotBeginCountsNothingApplied) {
  PlanOutcome p = Plan();
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ASSERT_EQ(::mkdir((root_ + "/run").c_str(), 0755), 0);
  Write(root_ + "/run/provisioner", "a file where the journal's directory goes\n");
  ApplyOutcome out = ApplyPlanned(p, ApplyRequest{});
  EXPECT_FALSE(out.status.ok());
  EXPECT_TRUE(out.changes.empty());
  EXPECT_EQ(out.applied, 0u);
  EXPECT_EQ(Plan().plan.changes.size(), 1u);  // the knob was not touched
}

// Every change applied and verified, but the host did not converge: the
// change stays made (no rollback) and counts (applied.size() - 1 said 0).
TEST_F(SessionTest, ConvergenceFailureCountsTheChangesMade) {
  g_stuck = true;
  PlanOutcome p = Plan();
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  ApplyOutcome out = ApplyPlanned(p, ApplyRequest{});
  EXPECT_FALSE(out.status.ok());
  EXPECT_NE(out.status.message().find("not converged after apply"), std::string::npos)
      << out.status.message();
  ASSERT_EQ(out.changes.size(), 1u);
  EXPECT_EQ(out.changes[0].status, ChangeStatus::kApplied);
  EXPECT_TRUE(out.rolled_back.empty());
  EXPECT_EQ(out.applied, 1u);
}

// A plan of changes with ids `ids`, applied as far as "c": a and b applied
// (b deferred to the next boot), c failed with EBUSY, then c, b and a undone,
// newest first, b's undo failing ("stuck").
ApplyOutcome OutcomeOfFailureAtC(const std::vector<std::string>& ids) {
  provisioner::Plan plan;
  for (const std::string& id : ids) {
    Change c;
    c.id = id;
    plan.changes.push_back(c);
  }
  const Change& a = plan.changes[0];
  const Change& b = plan.changes[1];
  const Change& c = plan.changes[2];
  ApplyReport report;
  report.applied = {{a, OkStatus()}, {b, OkStatus()}, {c, UnavailableError("EBUSY")}};
  report.rolled_back = {{c, OkStatus()}, {b, InternalError("stuck")}, {a, OkStatus()}};
  report.status = report.applied.back().status;
  report.deferred = {{"b", "other network namespaces exist"}};
  return OutcomeOf(report, plan);
}

// Issue 38 item 3: after a failure, every planned change has its status at
// exit and `applied` counts what stays on the host (it said 2 here: a and b,
// although a was undone; d, never attempted, was missing).
TEST(OutcomeOfTest, EveryPlannedChangeHasItsStatusAtExit) {
  ApplyOutcome out = OutcomeOfFailureAtC({"a", "b", "c", "d"});
  EXPECT_EQ(out.applied, 0u);
  ASSERT_EQ(out.final.size(), 4u);
  EXPECT_EQ(out.final[0].status, ChangeStatus::kRolledBack);
  EXPECT_EQ(out.final[1].status, ChangeStatus::kRollbackFailed);
  EXPECT_EQ(out.final[1].error, "stuck");
  EXPECT_EQ(out.final[2].status, ChangeStatus::kFailed);
  EXPECT_EQ(out.final[3].status, ChangeStatus::kNotAttempted);
  EXPECT_STREQ(ChangeStatusName(out.final[3].status), "not-attempted");
  EXPECT_EQ(out.rolled_back_count, 1u);
  EXPECT_EQ(out.rollback_failed, 1u);
  EXPECT_EQ(out.failed, 1u);
  EXPECT_EQ(out.not_attempted, 1u);
}

TEST(OutcomeOfTest, CountsTheChangesMadeBeforeAFailure) {
  ApplyOutcome out = OutcomeOfFailureAtC({"a", "b", "c"});
  EXPECT_EQ(out.applied, 0u);  // a and b undone (b's undo failed: rollback-failed)
  EXPECT_EQ(out.changes[0].status, ChangeStatus::kApplied);
  EXPECT_EQ(out.changes[1].status, ChangeStatus::kDeferredToReboot);
  EXPECT_EQ(out.changes[1].note, "other network namespaces exist");
  EXPECT_EQ(out.changes[2].status, ChangeStatus::kFailed);
  EXPECT_EQ(out.changes[2].error, "EBUSY");
  EXPECT_EQ(out.rolled_back[0].status, ChangeStatus::kRolledBack);
  EXPECT_EQ(out.rolled_back[1].status, ChangeStatus::kRollbackFailed);
  EXPECT_EQ(out.rolled_back[1].error, "stuck");
  EXPECT_STREQ(ChangeStatusName(out.changes[1].status), "deferred-to-reboot");
}

}  // namespace
}  // namespace provisioner
