// Performance invariants of the real binary, counted by the host layer
// (PROVISIONER_STATS=<file>: HostFs counters as JSON at exit). Timings live in
// bench/ (docs/BENCHMARKS.md); these are the counts that must hold on every
// build.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"
#include "test/tools/make_tree.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

// Runs provisioner with PROVISIONER_STATS set; returns (result, stats).
std::pair<RunResult, json> RunCounted(const std::vector<std::string>& args) {
  std::string stats = WriteTempFile("stats.json", "");
  ::setenv("PROVISIONER_STATS", stats.c_str(), 1);
  RunResult r = Provisioner(args);
  ::unsetenv("PROVISIONER_STATS");
  std::ifstream in(stats);
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "PROVISIONER_STATS file is not JSON: " << ss.str();
  return {r, j};
}

// cx5-roce as it is: SR-IOV off on both PFs.
const std::string kConvergedYaml = HostYaml(R"(  nics:
    - name: pf0
      nicSelector:
        rootDevices: ["0000:af:00.0"]
      numVfs: 0
)");

TEST(PerfInvariantsTest, StatsFileHasTheHostLayerCounters) {
  std::string root = ExtractHost("cx5-roce");
  auto [r, stats] = RunCounted({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* key : {"filesRead", "bytesRead", "dirsListed", "filesOpenedForWrite",
                          "failedOpens", "lookups", "resolveSteps", "maxRssKiB",
                          "processReadCalls", "processBytesRead"}) {
    EXPECT_TRUE(stats.contains(key)) << key;
  }
  // /proc/self/io counts every read(2): the host layer's, libpci's (it reads
  // each function's sysfs files itself) and the loader's.
  EXPECT_GT(stats["processReadCalls"].get<long>(), stats["filesRead"].get<long>());
  EXPECT_GT(stats["processBytesRead"].get<long>(), stats["bytesRead"].get<long>());
  EXPECT_GT(stats["filesRead"].get<long>(), 10);
  EXPECT_GT(stats["bytesRead"].get<long>(), stats["filesRead"].get<long>());
  EXPECT_EQ(stats["filesOpenedForWrite"], 0);
  EXPECT_GT(stats["maxRssKiB"].get<long>(), 0);
}

TEST(PerfInvariantsTest, NoOpApplyOpensNoFileForWriting) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = WriteTempFile("host.yaml", kConvergedYaml);
  // Twice: the first apply of a fresh tree (creating the lock file) counts too.
  for (int i = 0; i < 2; ++i) {
    auto [r, stats] = RunCounted({"apply", yaml, "--root", root, "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json out = json::parse(r.out, nullptr, false);
    ASSERT_FALSE(out.is_discarded()) << r.out;
    EXPECT_TRUE(out["changes"].empty()) << r.out;
    EXPECT_GT(stats["filesRead"].get<long>(), 0) << "run " << i;
    EXPECT_EQ(stats["filesOpenedForWrite"], 0) << "run " << i;
  }
}

TEST(PerfInvariantsTest, DryRunOfPendingChangesOpensNoFileForWriting) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = WriteTempFile("host.yaml", std::string(kConvergedYaml).replace(
                                                    std::string(kConvergedYaml).find("numVfs: 0"),
                                                    9, "numVfs: 4"));
  auto [r, stats] = RunCounted({"apply", yaml, "--dry-run", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(json::parse(r.out)["changes"].empty()) << r.out;
  EXPECT_EQ(stats["filesOpenedForWrite"], 0);
}

// Discovery for a plan leaves out what no Plan reads (HostContext::plan_for):
// the RDMA GID tables (cx5-roce: 2 ports x 16 slots and their attributes).
TEST(PerfInvariantsTest, PlanReadsLessThanDiscover) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = WriteTempFile("host.yaml", kConvergedYaml);
  auto [d, discover] = RunCounted({"discover", "--root", root, "-o", "json"});
  auto [p, plan] = RunCounted({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_LT(plan["filesRead"].get<long>() + 32, discover["filesRead"].get<long>())
      << "plan " << plan.dump() << "\ndiscover " << discover.dump();
  EXPECT_LE(plan["dirsListed"].get<long>(), discover["dirsListed"].get<long>());
}

TEST(PerfInvariantsTest, TreePathsResolvedByTheKernel) {
  // A generated tree has only relative links (as sysfs): the host layer opens
  // through openat2(RESOLVE_BENEATH); the user-space walk (an lstat per path
  // component) is for absolute links and paths that do not exist.
  std::string root = ExtractHost("cx5-roce");
  auto [r, stats] = RunCounted({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(stats["resolveSteps"].get<long>() * 10, stats["filesRead"].get<long>())
      << stats.dump();
}

// PCI functions and RDMA devices are read on several threads
// (engine/host/parallel_reads.h): the facts must be the same, in the same
// order, as on one thread.
TEST(PerfInvariantsTest, ParallelDiscoveryGivesTheSameFactsAsOneThread) {
  std::string root = MakeTempDir("parallel");
  ASSERT_FALSE(root.empty());
  TreeRequest req;
  req.preset = "bench-2";
  req.all_vfs = 40;  // 82 RDMA devices (4 threads of 16+), 90+ PCI functions (2 of 32+)
  ASSERT_TRUE(MakeTree(req, root + "/t").ok());
  std::string out[2];
  const char* threads[2] = {"1", "4"};
  for (int i = 0; i < 2; ++i) {
    ::setenv("PROVISIONER_READ_THREADS", threads[i], 1);
    auto [r, stats] = RunCounted({"discover", "--root", root + "/t", "-o", "json"});
    ::unsetenv("PROVISIONER_READ_THREADS");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    out[i] = r.out;
    EXPECT_GT(stats["filesRead"].get<long>(), 82 * 256) << threads[i];
  }
  json one = json::parse(out[0], nullptr, false), many = json::parse(out[1], nullptr, false);
  ASSERT_FALSE(one.is_discarded());
  ASSERT_EQ(one["rdmaDevices"].size(), 82u);
  EXPECT_EQ(one["rdmaDevices"][81]["ports"][0]["gids"].size(), 2u);  // a VF: RoCE v1 + v2
  ASSERT_EQ(one["nics"].size(), 2u);
  EXPECT_EQ(one["nics"][1]["sriov"]["vfs"].size(), 40u);  // from the pci module's functions
  EXPECT_EQ(one, many);
}

}  // namespace
}  // namespace provisioner::testing
