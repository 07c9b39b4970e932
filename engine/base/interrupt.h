// SIGTERM, SIGINT and SIGHUP during apply: recorded, not fatal. apply checks
// between changes and, when one came, rolls back as for a failed change (the
// systemd unit's stop, a Ctrl-C, a closed ssh session would otherwise leave
// a half-applied host with a journal to recover at the next run).
#ifndef PROVISIONER_ENGINE_BASE_INTERRUPT_H_
#define PROVISIONER_ENGINE_BASE_INTERRUPT_H_

#include <signal.h>

#include <atomic>
#include <string>

namespace provisioner {

// While alive, SIGTERM, SIGINT and SIGHUP set signal() instead of ending the
// process; the previous dispositions come back on destruction. Guards nest
// (main's, from the first instruction, then apply's): an inner one keeps a
// signal the outer one recorded, so that one in the first milliseconds still
// stops apply cleanly.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The first signal received since construction, 0 if none.
  static const std::atomic<int>& signal();

 private:
  struct sigaction old_[3];
};

// "SIGTERM" for SIGTERM; "signal N" for one without a name here.
std::string SignalName(int sig);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_INTERRUPT_H_
