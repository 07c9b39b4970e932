// The node agent's figures (issue 37 item 8; docs/BENCHMARKS.md "Agent"):
//   bazel run -c opt //bench:agent [-- --idle-seconds 60] [--only-scrape]
// 1. reload to converged: the 8-rail HGX tree (8 VFs, trust, MTU on every
//    rail) under the kernel simulator daemon with mlx5's netdev latency
//    (1 s); every PF's sriov_numvfs written 0 at once (a driver reload),
//    timed until the agent's status says converged with 8 numVfs fixed.
//    Goal: the slowest PF's kernel wait + debounce (2 s) + 1 s.
// 2. idle: CPU time (utime + stime of every thread) and context switches
//    over --idle-seconds with nothing happening. Goal: ~0.
// 3. RSS (VmRSS, VmHWM) of the agent after all that. Goal: < 24 MiB.
// 4. scrape time of /metrics with 528 RDMA ports (66 devices x 8 ports,
//    counters/ and hw_counters/), median of 21. Goal: < 50 ms.
// A benchmark, not a test: it sleeps where it measures idleness.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "test/integration/agent_harness.h"
#include "test/integration/harness.h"
#include "test/sim/rail_host.h"
#include "test/support/host_presets.h"

namespace pt = provisioner::testing;
using std::chrono::milliseconds;
using std::chrono::seconds;

namespace {

constexpr int kNetdevDelayMs = 1000;  // Mlx5Latencies().netdev_appear

// CPU ticks (utime + stime) and context switches of every thread of `pid`.
void CpuOf(pid_t pid, long* ticks, long* switches) {
  *ticks = 0;
  *switches = 0;
  const std::string task = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& t : std::filesystem::directory_iterator(task)) {
    std::ifstream stat(t.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    std::vector<std::string> f;
    std::string cur;
    for (size_t i = close + 2; i <= line.size(); ++i) {
      if (i == line.size() || line[i] == ' ') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += line[i];
      }
    }
    if (f.size() > 12) *ticks += std::atol(f[11].c_str()) + std::atol(f[12].c_str());
    std::ifstream status(t.path() / "status");
    while (std::getline(status, line)) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 ||
          line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
        *switches += std::atol(line.substr(line.find(':') + 1).c_str());
      }
    }
  }
}

std::string StatusField(pid_t pid, const std::string& key) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key + ":", 0) == 0) return line.substr(key.size() + 1);
  }
  return "?";
}

void Put(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << content;
}

}  // namespace

int main(int argc, char** argv) {
  int idle_seconds = 60;
  bool only_scrape = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--idle-seconds" && i + 1 < argc)
      idle_seconds = std::atoi(argv[i + 1]);
    if (std::string(argv[i]) == "--only-scrape") only_scrape = true;
  }
  pt::HostSpec spec;
  pt::PresetByName("hgx-h100", &spec);
  std::string error;
  const std::string root = pt::BuildRailTree(spec, 8, &error);
  if (root.empty()) {
    std::fprintf(stderr, "bench: %s\n", error.c_str());
    return 1;
  }
  double reload_s = -1;
  if (!only_scrape) {
    pt::KernelSimDaemon sim(root, kNetdevDelayMs);
    const std::string yaml = pt::WriteTempFile("host.yaml", pt::HgxRailsYaml(pt::kRailVfsTrustMtu));
    pt::AgentProcess agent(yaml, root);
    auto fixed = [&](const char* m) -> uint64_t {
      auto s = agent.Status();
      return s.is_object() ? s["drift"]["fixedByModule"].value(m, uint64_t{0}) : 0;
    };
    if (!pt::WaitUntil([&] { return fixed("link") >= 8 && agent.Status()["converged"] == true; },
                       seconds(120))) {
      std::fprintf(stderr, "bench: not converged at start\n%s", agent.Log().c_str());
      return 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (const std::string& pf : pt::HgxRailPfs()) {
      std::ofstream(root + "/sys/bus/pci/devices/" + pf + "/sriov_numvfs") << "0";
    }
    if (!pt::WaitUntil([&] { return fixed("sriov") == 8 && agent.Status()["converged"] == true; },
                       seconds(120))) {
      std::fprintf(stderr, "bench: not converged after the reload\n%s", agent.Log().c_str());
      return 1;
    }
    reload_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf(
        "reload of 8 rails to converged: %.2f s (goal: %.1f s = kernel %.1f + debounce 2 + 1)\n",
        reload_s, kNetdevDelayMs / 1000.0 + 3, kNetdevDelayMs / 1000.0);

    long t_before, s_before, t_after, s_after;
    CpuOf(agent.pid(), &t_before, &s_before);
    std::this_thread::sleep_for(seconds(idle_seconds));
    CpuOf(agent.pid(), &t_after, &s_after);
    const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
    std::printf("idle %d s: CPU %.3f s, %ld context switches (all threads)\n", idle_seconds,
                (t_after - t_before) / hz, s_after - s_before);
    std::printf("RSS: VmRSS%s, VmHWM%s, threads%s\n", StatusField(agent.pid(), "VmRSS").c_str(),
                StatusField(agent.pid(), "VmHWM").c_str(),
                StatusField(agent.pid(), "Threads").c_str());
    agent.Stop();
  }
  std::filesystem::remove_all(root);

  // 528 RDMA ports: a tree of counters only, and a host.yaml that asks nothing.
  const std::string ports_root = pt::MemoryTempDir("ports");
  for (int d = 0; d < 66; ++d) {
    for (int p = 1; p <= 8; ++p) {
      const std::string base = ports_root + "/sys/class/infiniband/mlx5_" + std::to_string(d) +
                               "/ports/" + std::to_string(p);
      for (const char* c :
           {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets",
            "symbol_error", "link_error_recovery", "link_downed"}) {
        Put(base + "/counters/" + c, "123456789\n");
      }
      for (const char* c :
           {"np_cnp_sent", "rp_cnp_handled", "np_ecn_marked_roce_packets", "out_of_buffer",
            "out_of_sequence", "packet_seq_err", "local_ack_timeout_err"}) {
        Put(base + "/hw_counters/" + c, "42\n");
      }
      Put(base + "/gid_attrs/ndevs/0", "eth" + std::to_string(d) + "\n");
    }
  }
  const std::string empty = pt::WriteTempFile("empty.yaml", R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: ports
spec: {}
)");
  {
    pt::AgentProcess agent(empty, ports_root);
    if (!agent.WaitReconciled(seconds(30))) {
      std::fprintf(stderr, "bench: the ports agent did not start\n%s", agent.Log().c_str());
      return 1;
    }
    std::vector<double> ms;
    size_t bytes = 0;
    for (int i = 0; i < 21; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      bytes = agent.Scrape().size();
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::printf("scrape of 528 RDMA ports: median %.1f ms, min %.1f ms (%zu bytes)\n", ms[10],
                ms[0], bytes);
    agent.Stop();
  }
  std::filesystem::remove_all(ports_root);
  return 0;
}
