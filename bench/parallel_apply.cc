// The boot path of an 8-rail node (issue 27): apply of the HGX H100 tree's
// 8 ConnectX-7 rail PFs, InfiniBand (test/sim/rail_host.h IbRailHost), x 16
// VFs with everything the issue's scenario names: numVfs, VF trust, the VFs'
// IB node/port GUIDs (ib-sriov), the link's MTU, PCIe MaxReadReq and a
// firmware parameter on every card. Over the in-process kernel simulator with
// mlx5's and mstconfig's latencies (test/sim Mlx5Latencies: 100 ms per VF
// probed, netdevs 1 s after, 50 ms a bind, 1 s an mstconfig query or set,
// ...), at parallelism 1 and at the default.
//
// Timed: the graph walk (every change applied and verified), from a host
// discovered and planned beforehand. Not timed: that discovery, and the
// convergence check after it, made by a fresh process's discovery (a fresh
// simulator without latencies), which must find nothing left to do; the
// engine's own re-discovery is off here because under a tree root the
// firmware module reads the cards' captures one after the other (8 s with
// the latency), where on a live host it queries them at once and keeps the
// answers its verify got (modules/firmware/firmware_module.cc).
//
// Prints each run, then the medians, the longest chain (the slowest
// resource's changes end to end at parallelism 1: a PF's, or a card's
// firmware) and the ratios. Exits 1 if an apply fails or does not converge.
//   bazel run -c opt //bench:parallel_apply [-- RUNS]
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/module/registry.h"
#include "test/sim/rail_host.h"
#include "test/sim/sim_host_fs.h"

namespace provisioner::testing {
namespace {

// The IB rails with everything a boot-time apply sets on them.
const std::string& RailsYaml() {
  static const std::string yaml = HgxRailsYaml(R"(      linkType: ib
      numVfs: 16
      vfTrust: true
      resourceName: rails_ib
      mtu: 4092
      pcie: { maxReadRequest: 4096 }
      firmware: { ATS_ENABLED: true }
)",
                                               R"(  ipPools:
    - name: rails-ib
      subnet: 172.91.0.0/16
      ips: ["172.91.0.100-172.91.0.250"]
  multusConfigs:
    - name: rails-ib
      namespace: kube-system
      cniType: ib-sriov
      nic: rails
      ippools: { ipv4: [rails-ib] }
)");
  return yaml;
}

struct Result {
  double seconds = 0;
  double longest = 0;      // the slowest resource's changes, summed
  std::string longest_of;  // which resource
  size_t changes = 0;
  size_t chain = 0;  // the plan graph's longest dependency chain (changes)
  std::map<std::string, size_t> per_module;
  std::vector<std::string> longest_changes;  // "<id> <seconds>" of the longest chain
  std::string error;
};

double Seconds(std::chrono::milliseconds d) { return std::chrono::duration<double>(d).count(); }

// One process's view of the host: its simulator, its modules, its context.
struct Process {
  Process(const std::string& root, SimOptions options)
      : fs(NewSimulatedHostFs(root, std::move(options))), modules(ModuleRegistry::CreateAll()) {
    ctx.fs = fs.get();
    ctx.clock = &RealClock();
  }
  // Discovers the host and plans `desired` into `out`: "" or why not.
  std::string PlanFor(const DesiredState& desired, PlanResult* out) {
    auto facts = Discover(modules, ctx, desired);
    if (!facts.ok()) return "discover: " + facts.status().message();
    *out = BuildPlan(modules, desired, *facts);
    return "";
  }
  std::unique_ptr<HostFs> fs;
  std::vector<std::unique_ptr<Module>> modules;
  HostContext ctx;
};

Result Once(size_t parallelism) {
  Result r;
  std::string error;
  const std::string dir = BuildRailTree(IbRailHost(), 0, &error);
  if (dir.empty()) {
    r.error = error;
    return r;
  }
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  } cleanup{dir};
  LoadResult loaded = LoadDesiredStateFromString(RailsYaml(), "host.yaml");
  if (!loaded.state) {
    r.error = "host.yaml does not load";
    for (const auto& d : loaded.diagnostics) r.error += "; " + d.path + ": " + d.message;
    return r;
  }
  SimOptions options;
  options.latency = Mlx5Latencies();
  Process boot(dir, options);
  PlanResult planned;
  r.error = boot.PlanFor(*loaded.state, &planned);
  if (!r.error.empty()) return r;
  for (const auto& d : planned.diagnostics) {
    if (d.severity == Severity::kError) r.error += d.path + ": " + d.message + "; ";
  }
  if (!r.error.empty()) return r;
  r.changes = planned.plan.changes.size();
  for (const auto& c : planned.plan.changes) ++r.per_module[c.module];
  ApplyOptions o;
  o.parallelism = parallelism;
  o.check_converged = false;  // checked below, untimed (see the top)
  const auto start = std::chrono::steady_clock::now();
  ApplyReport report = ApplyPlan(boot.modules, planned.plan, *loaded.state, boot.ctx, o);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.chain = report.longest_chain;
  if (!report.status.ok()) {
    r.error = report.status.message();
    return r;
  }
  if (report.applied.size() != r.changes) {
    r.error = std::to_string(report.applied.size()) + " of " + std::to_string(r.changes) +
              " changes applied";
    return r;
  }
  std::map<std::string, double> per_resource;  // each resource's changes end to end
  for (const auto& a : report.applied) per_resource[a.change.resource] += Seconds(a.duration);
  for (const auto& [res, t] : per_resource) {
    if (t > r.longest) {
      r.longest = t;
      r.longest_of = res;
    }
  }
  for (const auto& a : report.applied) {
    if (a.change.resource != r.longest_of) continue;
    char buf[32];
    std::snprintf(buf, sizeof buf, " %.2f s", Seconds(a.duration));
    r.longest_changes.push_back(a.change.id + buf);
  }
  // Converged: a fresh process (simulator) finds nothing to do.
  Process next(dir, {});
  PlanResult again;
  r.error = next.PlanFor(*loaded.state, &again);
  if (!r.error.empty()) {
    r.error = "after apply: " + r.error;
  } else if (!again.plan.changes.empty()) {
    r.error = "not converged: " + std::to_string(again.plan.changes.size()) +
              " change(s) left, the first " + again.plan.changes.front().id;
  }
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : (n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

int Main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const size_t def = DefaultParallelism();
  std::printf(
      "8 IB rails x 16 VFs (numVfs, trust, GUIDs, mtu, MaxReadReq, firmware), mlx5 + mstconfig "
      "latencies, %d run(s) each, runs alternating\n",
      runs);
  std::printf("%-12s %8s %9s %10s %-22s %8s %6s\n", "parallelism", "changes", "apply s",
              "longest s", "longest chain", "ratio", "chain");
  std::map<size_t, std::vector<double>> apply, longest;
  for (int i = 0; i < runs; ++i) {
    for (size_t p : {size_t{1}, def}) {  // alternating: load spreads over both
      Result r = Once(p);
      if (!r.error.empty()) {
        std::printf("parallelism %zu: FAILED: %s\n", p, r.error.c_str());
        return 1;
      }
      if (i == 0 && p == 1) {
        std::string modules;
        for (const auto& [m, n] : r.per_module) {
          modules += (modules.empty() ? "" : ", ") + m + " " + std::to_string(n);
        }
        std::printf("changes by module: %s\n", modules.c_str());
        std::printf("longest chain at parallelism 1 (%s):\n", r.longest_of.c_str());
        for (const auto& c : r.longest_changes) std::printf("  %s\n", c.c_str());
      }
      std::printf("%-12zu %8zu %9.2f %10.2f %-22s %8.2f %6zu\n", p, r.changes, r.seconds, r.longest,
                  r.longest_of.c_str(), r.seconds / r.longest, r.chain);
      apply[p].push_back(r.seconds);
      longest[p].push_back(r.longest);
    }
  }
  const double a1 = Median(apply[1]), ad = Median(apply[def]), chain = Median(longest[1]);
  std::printf(
      "medians: parallelism 1 %.2f s, parallelism %zu %.2f s (%.2fx faster); longest "
      "chain at parallelism 1 %.2f s: parallelism 1 / chain %.2fx, parallelism %zu / "
      "chain %.2fx\n",
      a1, def, ad, a1 / ad, chain, a1 / chain, def, ad / chain);
  return 0;
}

}  // namespace
}  // namespace provisioner::testing

int main(int argc, char** argv) { return provisioner::testing::Main(argc, argv); }
