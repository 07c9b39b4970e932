// The boot path of an 8-rail node (issue 27): apply of the HGX H100 tree's
// 8 ConnectX-7 PFs x 16 VFs (numVfs, VF trust, mtu, PCIe MaxReadReq) over the
// in-process kernel simulator with mlx5's latencies (test/sim
// Mlx5Latencies: 100 ms per VF probed, netdevs 1 s after, ...), at
// parallelism 1 and at the default; prints both wall times, the longest
// single-PF chain's time and the ratios. Not a test: nothing asserts.
//   bazel run -c opt //bench:parallel_apply [-- RUNS]
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/module/registry.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"

namespace provisioner::testing {
namespace {

constexpr const char* kRailsYaml = R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: hgx
spec:
  nics:
    - name: rails
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      numVfs: 16
      vfTrust: true
      mtu: 4200
      pcie: { maxReadRequest: 4096 }
)";

struct Result {
  double seconds = 0;
  double longest_pf_chain = 0;  // the slowest PF's changes, end to end
  size_t changes = 0;
  size_t chain = 0;
  std::string error;
};

Result Once(size_t parallelism) {
  Result r;
  char tmpl[] = "/dev/shm/provisioner-bench.XXXXXX";
  std::string dir = ::mkdtemp(tmpl) != nullptr ? tmpl : "";
  HostSpec spec;
  if (dir.empty() || !PresetByName("hgx-h100-pcie", &spec) || !BuildHostTree(spec, dir).ok()) {
    r.error = "cannot build the tree";
    return r;
  }
  LoadResult loaded = LoadDesiredStateFromString(kRailsYaml, "host.yaml");
  SimOptions options;
  options.latency = Mlx5Latencies();
  auto fs = NewSimulatedHostFs(dir, options);
  auto modules = ModuleRegistry::CreateAll();
  HostContext ctx;
  ctx.fs = fs.get();
  ctx.clock = &RealClock();
  auto facts = Discover(modules, ctx, *loaded.state);
  if (!facts.ok()) {
    r.error = facts.status().message();
    return r;
  }
  PlanResult planned = BuildPlan(modules, *loaded.state, *facts);
  r.changes = planned.plan.changes.size();
  ApplyOptions o;
  o.parallelism = parallelism;
  const auto start = std::chrono::steady_clock::now();
  ApplyReport report = ApplyPlan(modules, planned.plan, *loaded.state, ctx, o);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.chain = report.longest_chain;
  if (!report.status.ok()) r.error = report.status.message();
  std::map<std::string, double> per_resource;  // sum of each PF's change times
  for (const auto& a : report.applied) {
    per_resource[a.change.resource] += std::chrono::duration<double>(a.duration).count();
  }
  for (const auto& [res, t] : per_resource) {
    if (res.rfind("pf:", 0) == 0) r.longest_pf_chain = std::max(r.longest_pf_chain, t);
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return r;
}

int Main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 3;
  const size_t def = DefaultParallelism();
  std::printf("8 rails x 16 VFs (numVfs, trust, mtu, MaxReadReq), mlx5 latencies, %d run(s)\n",
              runs);
  std::printf("%-14s %9s %9s %12s %8s %6s\n", "parallelism", "changes", "apply s", "longest PF s",
              "ratio", "chain");
  for (size_t p : {size_t{1}, def}) {
    for (int i = 0; i < runs; ++i) {
      Result r = Once(p);
      if (!r.error.empty()) {
        std::printf("parallelism %zu: %s\n", p, r.error.c_str());
        return 1;
      }
      std::printf("%-14zu %9zu %9.2f %12.2f %8.2f %6zu\n", p, r.changes, r.seconds,
                  r.longest_pf_chain, r.seconds / r.longest_pf_chain, r.chain);
    }
  }
  return 0;
}

}  // namespace
}  // namespace provisioner::testing

int main(int argc, char** argv) { return provisioner::testing::Main(argc, argv); }
