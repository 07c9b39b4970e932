#include "engine/core/engine.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <map>

#include "engine/core/journal.h"
#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

// A module over an in-memory "host": key -> value. Desired values come from
// the nics' numVfs (name = key), to exercise the real interfaces.
class FakeModule : public Module {
 public:
  FakeModule(std::string name, int phase, std::map<std::string, int>* host,
             std::vector<std::string>* log)
      : name_(std::move(name)), phase_(phase), host_(host), log_(log) {}
  std::string_view name() const override { return name_; }
  Status Discover(HostContext&, HostFacts& facts) override {
    facts.loaded_modules.push_back(name_);  // proves discover ran
    snapshot_ = *host_;
    return OkStatus();
  }
  void Plan(const DesiredState& d, const HostFacts&, PlanSink& sink) const override {
    for (size_t i = 0; i < d.nics.size(); ++i) {
      const NicSpec& n = d.nics[i];
      if (n.name.rfind(name_ + "/", 0) != 0 || !n.num_vfs) continue;
      int cur = snapshot_.count(n.name) ? snapshot_.at(n.name) : 0;
      if (cur == *n.num_vfs) continue;
      Change c;
      c.id = n.name;
      c.module = name_;
      c.before = cur;
      c.after = *n.num_vfs;
      c.phase = phase_;
      c.field_path = DesiredState::NicPath(i) + ".numVfs";
      sink.AddChange(c);
    }
  }
  Status Apply(const Change& c, HostContext& ctx) override {
    log_->push_back("apply " + c.id + "=" + c.after.dump());
    if (ctx.fs->Exists(kJournalPath)) {  // what a kill -9 right now would leave
      auto j = ReadJournal(*ctx.fs);
      if (j.ok() && *j) journal_seen.push_back((*j)->Describe());
    }
    if (fail_on == c.id + "=" + c.after.dump()) return UnavailableError("EBUSY");
    if (signal_on == c.id + "=" + c.after.dump() && signal_ != nullptr) *signal_ = SIGTERM;
    (*host_)[c.id] = c.after.get<int>();
    if (lossy_ == c.id) (*host_)[c.id] = 1;  // kernel enabled fewer
    return OkStatus();
  }
  Status Verify(const Change& c, HostContext&) override {
    if ((*host_)[c.id] != c.after.get<int>()) {
      return FailedPreconditionError(c.id + ": desired " + c.after.dump() + ", current " +
                                     std::to_string((*host_)[c.id]));
    }
    return OkStatus();
  }
  std::string fail_on;
  std::string signal_on;  // "id=value": a SIGTERM arrives while it is applied
  std::atomic<int>* signal_ = nullptr;
  std::string lossy_;
  std::vector<std::string> journal_seen;

 private:
  std::string name_;
  int phase_;
  std::map<std::string, int>* host_;
  std::vector<std::string>* log_;
  std::map<std::string, int> snapshot_;
};

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs_ = NewLocalHostFs("/nonexistent-root");
    ctx_.fs = fs_.get();
    auto a = std::make_unique<FakeModule>("links", kPhaseLinks, &host_, &log_);
    auto b = std::make_unique<FakeModule>("vfs", kPhaseNumVfs, &host_, &log_);
    links_ = a.get();
    vfs_ = b.get();
    modules_.push_back(std::move(a));  // registered first, runs later
    modules_.push_back(std::move(b));
  }
  DesiredState Want(std::vector<std::pair<std::string, int>> kv) {
    DesiredState d;
    for (auto& [k, v] : kv) {
      NicSpec n;
      n.name = k;
      n.num_vfs = v;
      d.nics.push_back(n);
    }
    return d;
  }
  Plan PlanFor(const DesiredState& d) {
    auto facts = Discover(modules_, ctx_);
    EXPECT_TRUE(facts.ok());
    return BuildPlan(modules_, d, *facts).plan;
  }

  // Plans `d` on the fake host and applies that plan.
  ApplyReport ApplyFor(const DesiredState& d, ApplyOptions o = {}) {
    return ApplyPlan(modules_, PlanFor(d), d, ctx_, o);
  }

  std::map<std::string, int> host_;
  std::vector<std::string> log_;
  std::unique_ptr<HostFs> fs_;
  HostContext ctx_;
  std::vector<std::unique_ptr<Module>> modules_;
  FakeModule* links_;
  FakeModule* vfs_;
};

// A module that reads some facts only for the plan (as the firmware module's
// mstconfig queries): what DiscoverForPlan saw.
class ForPlanModule : public Module {
 public:
  std::string_view name() const override { return "for-plan"; }
  Status Discover(HostContext& ctx, HostFacts& facts) override {
    discovered_for_plan = ctx.plan_for != nullptr;
    facts.loaded_modules.push_back("for-plan");
    return OkStatus();
  }
  Status DiscoverForPlan(const DesiredState& desired, HostContext& ctx, HostFacts& facts) override {
    calls.push_back(std::to_string(desired.nics.size()) + " nics, plan_for " +
                    (ctx.plan_for == &desired ? "set" : "unset") + ", modules discovered " +
                    std::to_string(facts.loaded_modules.size()));
    return OkStatus();
  }
  void Plan(const DesiredState&, const HostFacts&, PlanSink&) const override {}
  Status Apply(const Change&, HostContext&) override { return OkStatus(); }
  Status Verify(const Change&, HostContext&) override { return OkStatus(); }
  bool discovered_for_plan = false;
  std::vector<std::string> calls;
};

// Discovery for a plan: every module's Discover (plan_for set), then every
// DiscoverForPlan with the facts of all of them; plain discovery never calls
// it; apply's re-discovery does again.
TEST_F(EngineTest, DiscoverForPlanRunsAfterEveryDiscoverOnlyForAPlan) {
  auto owned = std::make_unique<ForPlanModule>();
  ForPlanModule* m = owned.get();
  modules_.insert(modules_.begin(), std::move(owned));  // first: the others come later
  ASSERT_TRUE(Discover(modules_, ctx_).ok());
  EXPECT_FALSE(m->discovered_for_plan);
  EXPECT_TRUE(m->calls.empty());
  DesiredState d = Want({{"vfs/b", 2}});
  auto facts = Discover(modules_, ctx_, d);
  ASSERT_TRUE(facts.ok());
  EXPECT_TRUE(m->discovered_for_plan);
  EXPECT_EQ(ctx_.plan_for, nullptr);  // restored
  ASSERT_EQ(m->calls, (std::vector<std::string>{"1 nics, plan_for set, modules discovered 3"}));
  ApplyReport r = ApplyPlan(modules_, BuildPlan(modules_, d, *facts).plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(m->calls.size(), 2u);  // the re-discovery after apply
}

TEST_F(EngineTest, PlanOrdersByPhaseNotRegistration) {
  DesiredState d = Want({{"links/a", 1}, {"vfs/b", 2}});
  Plan p = PlanFor(d);
  ASSERT_EQ(p.changes.size(), 2u);
  EXPECT_EQ(p.changes[0].id, "vfs/b");
  EXPECT_EQ(p.changes[1].id, "links/a");
}

TEST_F(EngineTest, ApplyConvergesAndSecondPlanIsEmpty) {
  DesiredState d = Want({{"links/a", 1}, {"vfs/b", 2}});
  ApplyReport r = ApplyFor(d);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(host_["vfs/b"], 2);
  EXPECT_EQ(host_["links/a"], 1);
  EXPECT_TRUE(PlanFor(d).changes.empty());
}

// A saved plan or journal whose dependencies are broken (issue 27): refused
// before anything is applied, naming the change.
TEST_F(EngineTest, APlanWithBrokenDependenciesIsRefusedBeforeAnyChange) {
  DesiredState d = Want({{"links/a", 1}, {"vfs/b", 2}});
  Plan p = PlanFor(d);
  ASSERT_EQ(p.changes.size(), 2u);
  p.changes[1].resource = "gpu:0";
  ApplyReport r = ApplyPlan(modules_, p, d, ctx_);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("change 2 of the plan"), std::string::npos)
      << r.status.message();
  EXPECT_NE(r.status.message().find("nothing applied"), std::string::npos) << r.status.message();
  EXPECT_EQ(host_["vfs/b"], 0);
  EXPECT_EQ(host_["links/a"], 0);
  // A dependsOn that plan order contradicts: a cycle.
  p.changes[1].resource = "pf:a";
  p.changes[0].resource = "pf:b";
  p.changes[0].depends_on = {"pf:a"};
  r = ApplyPlan(modules_, p, d, ctx_);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("dependency cycle"), std::string::npos) << r.status.message();
  EXPECT_TRUE(r.applied.empty());
}

// At parallelism > 1 the same failure rolls everything back too.
TEST_F(EngineTest, FailureRollsBackEverythingAtParallelismFour) {
  host_["vfs/b"] = 3;
  DesiredState d = Want({{"vfs/b", 5}, {"links/a", 7}, {"links/c", 9}});
  links_->fail_on = "links/c=9";
  Plan p = PlanFor(d);
  ApplyOptions o;
  o.parallelism = 4;
  ApplyReport r = ApplyPlan(modules_, p, d, ctx_, o);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(host_["vfs/b"], 3);
  EXPECT_EQ(host_["links/a"], 0);
  EXPECT_EQ(r.parallelism, 3u);  // never more workers than changes
}

TEST_F(EngineTest, FailureRollsBackInReverseOrder) {
  host_["vfs/b"] = 3;
  DesiredState d = Want({{"vfs/b", 5}, {"links/a", 7}, {"links/c", 9}});
  links_->fail_on = "links/c=9";
  ApplyReport r = ApplyFor(d);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("apply links/c <- EBUSY"), std::string::npos)
      << r.status.message();
  EXPECT_EQ(host_["vfs/b"], 3);
  EXPECT_EQ(host_["links/a"], 0);
  ASSERT_EQ(r.rolled_back.size(), 3u);
  EXPECT_EQ(r.rolled_back[0].change.id, "links/c");
  EXPECT_EQ(r.rolled_back[1].change.id, "links/a");
  EXPECT_EQ(r.rolled_back[2].change.id, "vfs/b");
  EXPECT_EQ(r.rolled_back[2].change.detail.value("resetFirst", false), true);
}

// A signal while a change is applied: that change completes and verifies,
// then it and the earlier ones are undone, newest first, as for a failure;
// the later ones never start.
TEST_F(EngineTest, SignalDuringApplyRollsBackAsForAFailure) {
  host_["vfs/b"] = 3;
  DesiredState d = Want({{"vfs/b", 5}, {"links/a", 7}, {"links/c", 9}});
  std::atomic<int> sig{0};
  links_->signal_on = "links/a=7";
  links_->signal_ = &sig;
  ApplyOptions o;
  o.interrupt = &sig;
  ApplyReport r = ApplyFor(d, o);
  ASSERT_FALSE(r.status.ok());
  EXPECT_EQ(r.status.message(),
            "apply interrupted by SIGTERM before links/c: 2 applied change(s) rolled back, as for "
            "a failure");
  EXPECT_EQ(host_["vfs/b"], 3);
  EXPECT_EQ(host_["links/a"], 0);
  EXPECT_EQ(host_.count("links/c"), 0u);  // never applied
  ASSERT_EQ(r.rolled_back.size(), 2u);
  EXPECT_EQ(r.rolled_back[0].change.id, "links/a");
  EXPECT_EQ(r.rolled_back[1].change.id, "vfs/b");
  // A signal during the last change: all of it is undone.
  sig = 0;
  links_->signal_on = "links/c=9";
  ApplyReport last = ApplyFor(d, o);
  EXPECT_NE(last.status.message().find("interrupted by SIGTERM after the last change: 3 applied"),
            std::string::npos)
      << last.status.message();
  EXPECT_EQ(host_["vfs/b"], 3);
  EXPECT_EQ(host_["links/c"], 0);
}

TEST_F(EngineTest, VerifyMismatchFailsAndRollsBack) {
  DesiredState d = Want({{"vfs/b", 4}});
  vfs_->lossy_ = "vfs/b";
  ApplyReport r = ApplyFor(d);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("verify <- vfs/b: desired 4, current 1"), std::string::npos)
      << r.status.message();
}

TEST_F(EngineTest, JournalRecordsProgressAndIsRemovedAtTheEnd) {
  fs_ = NewLocalHostFs(testing::MakeTempDir("journal"));
  ctx_.fs = fs_.get();
  JournalWriter journal(fs_.get());
  DesiredState d = Want({{"vfs/b", 2}, {"links/a", 1}});
  Plan p = PlanFor(d);
  ApplyOptions o;
  o.journal = &journal;
  ApplyReport r = ApplyPlan(modules_, p, d, ctx_, o);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(vfs_->journal_seen.size(), 1u);
  EXPECT_NE(vfs_->journal_seen[0].find("stopped during vfs/b"), std::string::npos);
  ASSERT_EQ(links_->journal_seen.size(), 1u);
  EXPECT_NE(links_->journal_seen[0].find("stopped during links/a"), std::string::npos);
  EXPECT_FALSE(fs_->Exists(kJournalPath));
}

TEST_F(EngineTest, JournalRollbackChangesAreInverseNewestFirst) {
  fs_ = NewLocalHostFs(testing::MakeTempDir("journal"));
  JournalWriter w(fs_.get());
  Change a;
  a.id = "vfs/b";
  a.module = "vfs";
  a.before = 4;
  a.after = 8;
  Change b = a;
  b.id = "links/a";
  b.before = 0;
  b.after = 1;
  Change c = a;
  c.id = "links/c";
  ASSERT_TRUE(w.Begin({a, b, c}).ok());
  ASSERT_TRUE(w.Mark(0, JournalStep::kApplied).ok());
  ASSERT_TRUE(w.Mark(1, JournalStep::kApplying).ok());
  auto j = ReadJournal(*fs_);
  ASSERT_TRUE(j.ok() && j->has_value());
  EXPECT_NE((*j)->Describe().find("stopped during links/a"), std::string::npos);
  std::vector<Change> back = (*j)->RollbackChanges();
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].id, "links/a");
  EXPECT_EQ(back[0].after, 0);
  EXPECT_EQ(back[1].id, "vfs/b");
  EXPECT_EQ(back[1].after, 4);
  EXPECT_EQ(back[1].detail.value("resetFirst", false), true);
  ASSERT_TRUE(w.Finish().ok());
  auto none = ReadJournal(*fs_);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  ASSERT_TRUE(fs_->WriteFileAtomic(kJournalPath, "not json").ok());
  EXPECT_EQ(ReadJournal(*fs_).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(EngineTest, NoChangesMeansNoApplyCalls) {
  host_["vfs/b"] = 2;
  DesiredState d = Want({{"vfs/b", 2}});
  Plan p = PlanFor(d);
  EXPECT_TRUE(p.changes.empty());
  ApplyReport r = ApplyPlan(modules_, p, d, ctx_);
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(log_.empty());
}

}  // namespace
}  // namespace provisioner
