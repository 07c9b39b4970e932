// The agent's Prometheus endpoint (docs/agent.md "Metrics"): prometheus-cpp's
// pull exposer on --metrics-address, the agent's counters, and the RDMA port
// counters read at scrape time.
#ifndef PROVISIONER_ENGINE_AGENT_METRICS_H_
#define PROVISIONER_ENGINE_AGENT_METRICS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/agent/reconcile.h"
#include "engine/base/status.h"

namespace provisioner::agent {

class AgentMetrics {
 public:
  virtual ~AgentMetrics() = default;
  // One reconcile's outcome: runs by result, drift by module, pending by
  // disruption, apply duration, desired and actual VFs per PF.
  virtual void Record(const ReconcileResult& r, double now_unix) = 0;
  // The address it listens on ("127.0.0.1:9814"), the port resolved.
  virtual std::string address() const = 0;
};

// "host:port" that is not loopback is refused unless `allow_remote` (the
// address was given on the command line).
Status CheckMetricsAddress(const std::string& address, bool allow_remote);

// Starts the exposer on `address` over the tree or host at `root` (the RDMA
// counters are read under it).
StatusOr<std::unique_ptr<AgentMetrics>> StartMetrics(const std::string& address,
                                                     const std::string& root);

}  // namespace provisioner::agent

#endif  // PROVISIONER_ENGINE_AGENT_METRICS_H_
