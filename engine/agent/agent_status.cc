#include "engine/agent/agent_status.h"

#include <time.h>
#include <unistd.h>

#include <sstream>

#include "engine/manifests/manifests.h"

namespace provisioner::agent {
namespace {

using nlohmann::json;

json OrNull(const std::string& s) { return s.empty() ? json() : json(s); }

}  // namespace

std::string UtcTime(std::chrono::system_clock::time_point t) {
  const time_t secs = std::chrono::system_clock::to_time_t(t);
  struct tm tm;
  ::gmtime_r(&secs, &tm);
  char buf[32];
  ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json StatusToJson(const AgentState& s, const Backoff& backoff) {
  json doc = json::object();
  doc["formatVersion"] = 1;
  doc["kind"] = kAgentStatusKind;
  doc["pid"] = static_cast<int>(::getpid());
  doc["root"] = s.root;
  doc["file"] = s.file;
  doc["eventSource"] = s.event_source;
  doc["metricsAddress"] = OrNull(s.metrics_address);
  doc["desired"] = {{"digest", s.desired_digest},
                    {"loadedAt", OrNull(s.desired_loaded_at)},
                    {"error", OrNull(s.desired_error)}};
  doc["lastEvent"] = s.last_event.empty()
                         ? json()
                         : json{{"time", s.last_event_at}, {"what", s.last_event}, {"count", s.events}};
  doc["lastReconcile"] = s.last_reconcile_at.empty()
                             ? json()
                             : json{{"time", s.last_reconcile_at},
                                    {"trigger", s.last_trigger},
                                    {"result", s.last_result},
                                    {"durationMs", s.last_duration_ms},
                                    {"error", OrNull(s.last_error)}};
  doc["lastSuccess"] = OrNull(s.last_success_at);
  doc["reconciles"] = s.reconciles;
  doc["converged"] = s.converged;
  doc["waitingForLock"] = s.waiting_for_lock;
  doc["rebootPending"] = s.reboot_pending;
  uint64_t fixed = 0, detected = 0;
  for (const auto& [m, n] : s.drift_fixed) fixed += n;
  for (const auto& [m, n] : s.drift_detected) detected += n;
  doc["drift"] = {{"detected", detected},
                  {"fixed", fixed},
                  {"detectedByModule", s.drift_detected},
                  {"fixedByModule", s.drift_fixed}};
  json pending = json::array();
  for (const PendingChange& p : s.pending) {
    pending.push_back({{"id", p.id},
                       {"disruption", p.disruption},
                       {"why", p.why},
                       {"before", p.before},
                       {"after", p.after}});
  }
  doc["pending"] = pending;
  json backoffs = json::array();
  const auto now = std::chrono::steady_clock::now();
  for (const auto& [resource, e] : backoff.entries()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(e.retry_at - now);
    backoffs.push_back({{"resource", resource},
                        {"failures", e.failures},
                        {"retryInMs", left.count() > 0 ? left.count() : 0},
                        {"lastError", e.last_error}});
  }
  doc["backoff"] = backoffs;
  return doc;
}

Status WriteStatusFile(HostFs& fs, const AgentState& s, const Backoff& backoff) {
  return fs.WriteFileAtomic(kAgentStatusPath, StatusToJson(s, backoff).dump(2) + "\n");
}

std::string NfdFeatures(const AgentState& s) {
  std::map<std::string, std::string> labels = s.fact_labels;
  labels["converged"] = s.converged ? "true" : "false";
  labels["pending-reboot"] = s.reboot_pending ? "true" : "false";
  labels["drift-count"] = std::to_string(s.pending.size());
  std::string out;
  for (const auto& [name, value] : labels) {
    out += std::string(manifests::NodeFeatureLabelPrefix()) + name + "=" + value + "\n";
  }
  return out;
}

StatusOr<bool> WriteNfdIfChanged(HostFs& fs, const AgentState& s, std::string* last) {
  const std::string content = NfdFeatures(s);
  if (content == *last) return false;
  RETURN_IF_ERROR(fs.WriteFileAtomic(kNfdFeaturesPath, content));
  *last = content;
  return true;
}

std::string RenderStatusTable(const json& doc) {
  std::ostringstream out;
  auto str = [](const json& j, const char* key) -> std::string {
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "-";
    return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
  };
  out << "Agent pid " << str(doc, "pid") << " on root " << str(doc, "root") << " (events: "
      << str(doc, "eventSource") << ")\n";
  out << "  host.yaml       " << str(doc, "file") << "  digest " << str(doc["desired"], "digest")
      << "\n";
  if (doc["desired"].is_object() && !doc["desired"]["error"].is_null()) {
    out << "  host.yaml error " << str(doc["desired"], "error")
        << " (running on the last good state)\n";
  }
  out << "  converged       " << (doc.value("converged", false) ? "yes" : "no")
      << (doc.value("waitingForLock", false) ? ", waiting for another apply's lock" : "")
      << (doc.value("rebootPending", false) ? ", reboot pending" : "") << "\n";
  const json& last = doc["lastReconcile"];
  out << "  last reconcile  " << str(last, "time") << "  " << str(last, "result") << " ("
      << str(last, "trigger") << ", " << str(last, "durationMs") << " ms)\n";
  if (last.is_object() && !last["error"].is_null()) out << "  last error      " << str(last, "error") << "\n";
  out << "  last success    " << str(doc, "lastSuccess") << "\n";
  out << "  last event      " << str(doc["lastEvent"], "time") << "  " << str(doc["lastEvent"], "what")
      << "\n";
  out << "  drift           " << str(doc["drift"], "detected") << " detected, "
      << str(doc["drift"], "fixed") << " fixed\n";
  if (doc.contains("pending") && !doc["pending"].empty()) {
    out << "\nPENDING (needs a person: provisioner apply)\n";
    for (const json& p : doc["pending"]) {
      out << "  " << str(p, "disruption") << "  " << str(p, "id") << "  " << str(p, "before")
          << " -> " << str(p, "after") << "  (" << str(p, "why") << ")\n";
    }
  }
  if (doc.contains("backoff") && !doc["backoff"].empty()) {
    out << "\nBACKOFF\n";
    for (const json& b : doc["backoff"]) {
      out << "  " << str(b, "resource") << "  " << str(b, "failures") << " failures, retry in "
          << str(b, "retryInMs") << " ms: " << str(b, "lastError") << "\n";
    }
  }
  return out.str();
}

}  // namespace provisioner::agent
