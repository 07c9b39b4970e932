// The agent under test: the real binary as a subprocess (provisioner agent),
// its status file, its metrics, and waits for states.
#ifndef PROVISIONER_TEST_INTEGRATION_AGENT_HARNESS_H_
#define PROVISIONER_TEST_INTEGRATION_AGENT_HARNESS_H_

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace provisioner::testing {

// Polls `done` every 10 ms until it holds or `timeout` passes; true if it held.
bool WaitUntil(const std::function<bool()>& done, std::chrono::milliseconds timeout);

// `provisioner agent FILE --root ROOT --metrics-address 127.0.0.1:0 ARGS...`,
// stderr kept in a log; stopped with SIGTERM on destruction.
class AgentProcess {
 public:
  AgentProcess(const std::string& file, const std::string& root,
               const std::vector<std::string>& args = {});
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;
  pid_t pid() const { return pid_; }
  // True while the process runs.
  bool Running();
  // SIGTERM, then its exit code (-1: killed by a signal or not started).
  int Stop();
  std::string Log() const;
  // status.json under the root (null until written).
  nlohmann::json Status() const;
  // Waits until status.json exists with a reconcile whose count of
  // reconciles passed `after` (lastReconcile.time changes are second-granular,
  // so the status's reconcile counter is used): the loop is idle.
  bool WaitReconciled(std::chrono::milliseconds timeout);
  // GET /metrics from the agent's endpoint (127.0.0.1 only).
  std::string Scrape() const;

 private:
  std::string root_, log_;
  pid_t pid_ = -1;
};

// GET /metrics from the endpoint at `address` ("127.0.0.1:<port>", the
// loopback only): the whole HTTP response, "" when it cannot connect.
std::string ScrapeMetrics(const std::string& address);

// The value of the sample `name{labels}` in a Prometheus text page, or -1.
double MetricValue(const std::string& page, const std::string& sample);

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_INTEGRATION_AGENT_HARNESS_H_
