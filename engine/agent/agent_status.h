// What the agent tells people and the cluster: /run/provisioner/status.json
// (docs/CONTRACT.md "Agent status") and node-feature-discovery's local
// source /etc/kubernetes/node-feature-discovery/features.d/provisioner.
#ifndef PROVISIONER_ENGINE_AGENT_AGENT_STATUS_H_
#define PROVISIONER_ENGINE_AGENT_AGENT_STATUS_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/agent/backoff.h"
#include "engine/agent/reconcile.h"
#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "nlohmann/json.hpp"

namespace provisioner::agent {

inline constexpr char kAgentStatusPath[] = "/run/provisioner/status.json";
inline constexpr char kNfdFeaturesPath[] =
    "/etc/kubernetes/node-feature-discovery/features.d/provisioner";
inline constexpr char kAgentStatusKind[] = "ProvisionerAgentStatus";

// "2026-11-29T01:02:03Z"
std::string UtcTime(std::chrono::system_clock::time_point t);

// Everything the status file says, kept by the loop.
struct AgentState {
  std::string root, file, event_source;
  std::string metrics_address;  // "" without an endpoint
  std::string desired_digest, desired_loaded_at, desired_error;
  std::string last_event, last_event_at;
  uint64_t events = 0;
  uint64_t reconciles = 0;  // since start
  std::string last_reconcile_at, last_trigger, last_result, last_error;
  int64_t last_duration_ms = 0;
  std::string last_success_at;
  std::map<std::string, uint64_t> drift_detected, drift_fixed;  // by module, since start
  std::vector<PendingChange> pending;
  bool converged = false;
  bool waiting_for_lock = false;  // a CLI apply holds the lock: the reconcile waits
  bool reboot_pending = false;
  // The NodeFeature's fact labels of the last plan (rails, link-type, fw-version ...).
  std::map<std::string, std::string> fact_labels;
};

nlohmann::json StatusToJson(const AgentState& s, const Backoff& backoff);

// Writes status.json (atomically).
Status WriteStatusFile(HostFs& fs, const AgentState& s, const Backoff& backoff);

// The NFD local source's lines: "provisioner.feature.node.kubernetes.io/<name>=<value>".
std::string NfdFeatures(const AgentState& s);
// Writes the NFD file atomically when its content differs from `*last`
// (the content last written, or read at start); true when written.
StatusOr<bool> WriteNfdIfChanged(HostFs& fs, const AgentState& s, std::string* last);

// `provisioner status`: the table of a status document.
std::string RenderStatusTable(const nlohmann::json& doc);

}  // namespace provisioner::agent

#endif  // PROVISIONER_ENGINE_AGENT_AGENT_STATUS_H_
