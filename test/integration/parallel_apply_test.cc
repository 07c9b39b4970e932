// Apply as a dependency graph (issue 27): the 8 ConnectX-7 rail PFs of the
// HGX H100 tree, in process over the simulated kernel (test/sim) with real
// latencies (SimLatencies: the VFs' netdevs appear D after the enable). The
// PFs' waits overlap: apply takes about one PF's chain, not eight; a PF whose
// VFs never appear fails the apply and every PF is rolled back, the journal
// settled, the next plan works. Also run under TSan (parallel_apply_tsan).
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/core/journal.h"
#include "engine/module/registry.h"
#include "gtest/gtest.h"
#include "test/sim/rail_host.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/host_yaml.h"

namespace provisioner::testing {
namespace {

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

using std::chrono::milliseconds;
using std::chrono::seconds;

// numVfs, trust on every VF and mtu on all eight rails.
const std::string kRailsYaml = HostYaml(R"(  nics:
    - name: rails
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      numVfs: 8
      vfTrust: true
      mtu: 4200
)",
                                        "hgx");

struct ApplyRun {
  ApplyReport report;
  double seconds = 0;
  std::vector<std::string> pfs;  // the rail PFs
  size_t changes = 0;
  std::string root;
};

// Removes the trees afterwards (tmpfs is not the test's own directory).
struct TreeCleanup {
  ~TreeCleanup() {
    for (const auto& d : dirs) {
      std::error_code ec;
      std::filesystem::remove_all(d, ec);
    }
  }
  std::vector<std::string> dirs;
};
TreeCleanup g_trees;

// The HGX H100 tree in memory with `initial_vfs` VFs (netdevs present) on
// every rail (test/sim/rail_host.h).
std::string RailTree(int initial_vfs) {
  HostSpec spec;
  EXPECT_TRUE(PresetByName("hgx-h100", &spec));
  std::string error;
  std::string dir = BuildRailTree(spec, initial_vfs, &error);
  EXPECT_FALSE(dir.empty()) << error;
  if (!dir.empty()) g_trees.dirs.push_back(dir);
  return dir;
}

std::vector<std::string> RailPfs(const HostFacts& facts) {
  std::vector<std::string> out;
  for (const auto& f : facts.pci) {
    if (f.device_id == "1021" && !f.IsVf()) out.push_back(f.pci_address);
  }
  return out;
}

ApplyRun Apply(const std::string& root, SimOptions options, size_t parallelism,
               milliseconds settle_timeout = seconds(30)) {
  ApplyRun run;
  run.root = root;
  LoadResult loaded = LoadDesiredStateFromString(kRailsYaml, "host.yaml");
  EXPECT_TRUE(loaded.state.has_value());
  auto fs = NewSimulatedHostFs(root, options);
  auto modules = ModuleRegistry::CreateAll();
  HostContext ctx;
  ctx.fs = fs.get();
  ctx.clock = &RealClock();
  ctx.settle_timeout = settle_timeout;
  auto facts = Discover(modules, ctx, *loaded.state);
  EXPECT_TRUE(facts.ok()) << facts.status().message();
  if (!facts.ok()) return run;
  run.pfs = RailPfs(*facts);
  PlanResult planned = BuildPlan(modules, *loaded.state, *facts);
  for (const auto& d : planned.diagnostics) {
    EXPECT_NE(d.severity, Severity::kError) << d.path << ": " << d.message;
  }
  run.changes = planned.plan.changes.size();
  JournalWriter journal(fs.get());
  ApplyOptions o;
  o.journal = &journal;
  o.parallelism = parallelism;
  const auto start = std::chrono::steady_clock::now();
  run.report = ApplyPlan(modules, planned.plan, *loaded.state, ctx, o);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// What plan finds to do now (the convergence check of a fresh process).
size_t Pending(const std::string& root) {
  LoadResult loaded = LoadDesiredStateFromString(kRailsYaml, "host.yaml");
  auto fs = NewSimulatedHostFs(root, {});
  auto modules = ModuleRegistry::CreateAll();
  HostContext ctx;
  ctx.fs = fs.get();
  auto facts = Discover(modules, ctx, *loaded.state);
  EXPECT_TRUE(facts.ok()) << facts.status().message();
  if (!facts.ok()) return 0;
  PlanResult planned = BuildPlan(modules, *loaded.state, *facts);
  for (const auto& d : planned.diagnostics) {
    EXPECT_NE(d.severity, Severity::kError) << d.path << ": " << d.message;
  }
  return planned.plan.changes.size();
}

int NumVfs(const std::string& root, const std::string& pf) {
  auto fs = NewLocalHostFs(root);
  auto text = fs->ReadFile("/sys/bus/pci/devices/" + pf + "/sriov_numvfs");
  return text.ok() ? std::atoi(text->c_str()) : -1;
}

int VirtfnLinks(const std::string& root, const std::string& pf) {
  auto fs = NewLocalHostFs(root);
  auto list = fs->ListDir("/sys/bus/pci/devices/" + pf);
  int n = 0;
  if (list.ok()) {
    for (const auto& e : *list) n += e.rfind("virtfn", 0) == 0 ? 1 : 0;
  }
  return n;
}

TEST(ParallelApplyTest, EightPfsTakeTheTimeOfTheSlowestNotTheSum) {
  // D = 2 s from the enable to the VF netdevs, 50 ms per VF probed, and the
  // reset-first path (4 -> 0 -> 8) on every PF: the kernel refuses (EBUSY)
  // any count change that is not from 0, so a clean apply proves 0 came first.
  const milliseconds d = seconds(2);
  SimOptions options;
  options.latency.netdev_appear = d;
  options.latency.enable_per_vf = milliseconds(50);
  options.latency.disable_per_vf = milliseconds(10);
  ApplyRun run = Apply(RailTree(4), options, 8);
  ASSERT_TRUE(run.report.status.ok()) << run.report.status.message();
  ASSERT_EQ(run.pfs.size(), 8u);
  // numVfs, trust and mtu per PF: three-change chains, eight of them.
  EXPECT_EQ(run.changes, 24u);
  EXPECT_EQ(run.report.longest_chain, 3u);
  EXPECT_EQ(run.report.parallelism, 8u);
  std::printf("8 PFs, D = 2 s, parallelism 8: %.2f s\n", run.seconds);
  // Under a sanitizer the simulator's own work is several times slower: the
  // waits still overlap (far below 8 D), the 2 D + 1 bound is the default
  // build's.
  EXPECT_LE(run.seconds, kSanitized ? 8 * 2.0 / 2 : 2 * 2.0 + 1)
      << "apply did not overlap the PFs' waits";
  for (const auto& pf : run.pfs) {
    EXPECT_EQ(NumVfs(run.root, pf), 8) << pf;
    EXPECT_EQ(VirtfnLinks(run.root, pf), 8) << pf;
  }
  // Converged (ApplyPlan re-planned already; a fresh plan agrees), and the
  // journal is gone.
  EXPECT_EQ(Pending(run.root), 0u);
  EXPECT_FALSE(NewLocalHostFs(run.root)->Exists(kJournalPath));
  // Every change has its start and duration; the numVfs ones include D.
  for (const auto& a : run.report.applied) {
    if (a.change.attribute == "numVfs") {
      EXPECT_GE(a.duration.count(), 2000) << a.change.id;
    }
  }
}

TEST(ParallelApplyTest, ParallelismOneIsPlanOrderOneAtATime) {
  // Today's behaviour: the same plan at parallelism 1 waits D per PF, in plan order.
  SimOptions options;
  options.latency.netdev_appear = milliseconds(500);
  ApplyRun run = Apply(RailTree(0), options, 1);
  ASSERT_TRUE(run.report.status.ok()) << run.report.status.message();
  EXPECT_GE(run.seconds, 8 * 0.5);
  ASSERT_EQ(run.report.applied.size(), run.changes);
  // Applied in plan order, each after the one before it ended.
  for (size_t i = 1; i < run.report.applied.size(); ++i) {
    const auto& prev = run.report.applied[i - 1];
    EXPECT_GE(run.report.applied[i].start.count(), (prev.start + prev.duration).count());
  }
}

TEST(ParallelApplyTest, APfWhoseVfsNeverAppearRollsEveryPfBack) {
  const std::string root = RailTree(0);
  const std::string stuck = "0000:5e:00.0";
  SimOptions options;
  options.latency.netdev_appear = milliseconds(300);
  options.never_settle = {stuck};
  ApplyRun run = Apply(root, options, 8, /*settle_timeout=*/seconds(3));
  ASSERT_FALSE(run.report.status.ok());
  EXPECT_NE(run.report.status.message().find(stuck), std::string::npos)
      << run.report.status.message();
  EXPECT_NE(run.report.status.message().find("not settled"), std::string::npos)
      << run.report.status.message();
  // Everything made was undone and every undo worked.
  EXPECT_FALSE(run.report.rolled_back.empty());
  for (const auto& r : run.report.rolled_back) {
    EXPECT_TRUE(r.status.ok()) << r.change.id << ": " << r.status.message();
  }
  // Every PF is back to its previous count (0: no VF, no virtfn link), the
  // stuck one too; mtu back; the journal settled.
  ASSERT_EQ(run.pfs.size(), 8u);
  for (const auto& pf : run.pfs) {
    EXPECT_EQ(NumVfs(root, pf), 0) << pf;
    EXPECT_EQ(VirtfnLinks(root, pf), 0) << pf;
  }
  EXPECT_FALSE(NewLocalHostFs(root)->Exists(kJournalPath));
  // The next plan works and wants everything again: 8 numVfs, 8 trust, 8 mtu.
  EXPECT_EQ(Pending(root), 24u);
  // And an apply without the stuck driver converges.
  SimOptions healthy;
  healthy.latency.netdev_appear = milliseconds(100);
  ApplyRun again = Apply(root, healthy, 8);
  EXPECT_TRUE(again.report.status.ok()) << again.report.status.message();
  EXPECT_EQ(Pending(root), 0u);
}

}  // namespace
}  // namespace provisioner::testing
