// Per-resource exponential backoff: a PF whose changes keep failing is left
// alone for a growing while (base, 2x, 4x ... up to the cap), and the others
// are reconciled meanwhile.
#ifndef PROVISIONER_ENGINE_AGENT_BACKOFF_H_
#define PROVISIONER_ENGINE_AGENT_BACKOFF_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace provisioner::agent {

class Backoff {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Entry {
    int failures = 0;
    TimePoint retry_at;
    std::string last_error;
  };
  Backoff(std::chrono::milliseconds base, std::chrono::milliseconds cap) : base_(base), cap_(cap) {}

  // A change on `resource` failed at `now`: the next try waits longer.
  void Fail(const std::string& resource, const std::string& error, TimePoint now);
  // A change on it was applied: forgotten.
  void Succeed(const std::string& resource) { entries_.erase(resource); }
  // True while `resource` waits for its retry.
  bool Waiting(const std::string& resource, TimePoint now) const;
  // The earliest retry still to come, if any.
  std::optional<TimePoint> NextRetry(TimePoint now) const;
  const std::map<std::string, Entry>& entries() const { return entries_; }
  std::chrono::milliseconds DelayAfter(int failures) const;

 private:
  std::chrono::milliseconds base_, cap_;
  std::map<std::string, Entry> entries_;
};

}  // namespace provisioner::agent

#endif  // PROVISIONER_ENGINE_AGENT_BACKOFF_H_
