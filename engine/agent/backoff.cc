#include "engine/agent/backoff.h"

#include <algorithm>

namespace provisioner::agent {

std::chrono::milliseconds Backoff::DelayAfter(int failures) const {
  std::chrono::milliseconds d = base_;
  for (int i = 1; i < failures && d < cap_; ++i) d *= 2;
  return std::min(d, cap_);
}

void Backoff::Fail(const std::string& resource, const std::string& error, TimePoint now) {
  Entry& e = entries_[resource];
  ++e.failures;
  e.retry_at = now + DelayAfter(e.failures);
  e.last_error = error;
}

bool Backoff::Waiting(const std::string& resource, TimePoint now) const {
  auto it = entries_.find(resource);
  return it != entries_.end() && now < it->second.retry_at;
}

std::optional<Backoff::TimePoint> Backoff::NextRetry(TimePoint now) const {
  std::optional<TimePoint> next;
  for (const auto& [resource, e] : entries_) {
    if (e.retry_at <= now) continue;
    if (!next || e.retry_at < *next) next = e.retry_at;
  }
  return next;
}

}  // namespace provisioner::agent
