// One reconcile: discover, plan, apply what spec.agent.autoApply allows
// through the same journaled, verified, rolled-back apply as `apply -y`
// (engine/core/session.h PlanFile + ApplyPlanned, the same host lock), and
// report the rest as pending.
#ifndef PROVISIONER_ENGINE_AGENT_RECONCILE_H_
#define PROVISIONER_ENGINE_AGENT_RECONCILE_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/agent/backoff.h"
#include "engine/core/session.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner::agent {

// The class spec.agent.autoApply names: "live", "link-flap", "replace" (a
// VF count between two non-zero counts), "reboot", "firmware".
std::string DisruptionClass(const Change& c);
// The resource a backoff is kept for: the change's, or "host".
std::string BackoffKey(const Change& c);

struct PendingChange {
  std::string id;
  std::string disruption;  // DisruptionClass
  std::string why;         // "not in spec.agent.autoApply", "backoff: ..."
  nlohmann::json before, after;
};

struct ReconcileRequest {
  std::string file;  // the last good host.yaml (a private copy)
  HostOptions host;
};

struct ReconcileResult {
  // "converged": nothing to do; "applied": drift fixed, nothing left;
  // "pending": what is left needs a person or waits for a backoff;
  // "failed": a change failed (rolled back); "waiting-for-lock": a CLI apply holds it.
  std::string result;
  std::string error;
  std::vector<PendingChange> pending;
  std::map<std::string, int> drift_detected;  // by module: changes to apply now (first round)
  std::map<std::string, int> drift_fixed;     // by module: changes applied and verified
  std::chrono::milliseconds duration{0};
  std::chrono::milliseconds apply_duration{0};  // 0 when nothing was applied
  bool applied_any = false;
  bool file_invalid = false;  // host.yaml does not plan on this host (PlanOutcome::file_invalid)
  bool reboot_pending = false;
  std::optional<HostFacts> facts;  // the host as last planned
  std::optional<DesiredState> desired;
};

// Plans and applies until what is left is pending: a change that fails puts
// its resource in `backoff` and the rest is planned and applied again
// without it (one failing PF never stops the others).
ReconcileResult Reconcile(const ReconcileRequest& request, Backoff* backoff);

}  // namespace provisioner::agent

#endif  // PROVISIONER_ENGINE_AGENT_RECONCILE_H_
