// SIGTERM, SIGINT and SIGHUP during apply: recorded, not fatal. apply checks
// between changes and, when one came, rolls back as for a failed change (the
// systemd unit's stop, a Ctrl-C, a closed ssh session would otherwise leave
// a half-applied host with a journal to recover at the next run). A wait in
// progress (VFs, their netdevs) wakes at once (WaitUnlessInterrupted), and
// a second signal while apply runs ends the process at once (SecondSignalExit).
#ifndef PROVISIONER_ENGINE_BASE_INTERRUPT_H_
#define PROVISIONER_ENGINE_BASE_INTERRUPT_H_

#include <signal.h>

#include <atomic>
#include <chrono>
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
  // How many signals arrived since the outermost guard's construction.
  static int count();

 private:
  struct sigaction old_[3];
};

// A descriptor that becomes readable when the first signal arrives (a
// self-pipe the handler writes to and nobody drains while a guard lives):
// poll() it with another descriptor (the [y/N] prompt's stdin) to wake on
// either. -1 when no guard was ever made.
int InterruptFd();

// Sleeps `d`, or less: returns false as soon as a signal has arrived (at
// once when one came before the call). Wakes on the self-pipe, not by
// polling the flag.
bool WaitUnlessInterrupted(std::chrono::milliseconds d);

// While alive (apply making or undoing changes): a signal after the first
// ends the process at once with `exit_code`, after writing
// "provisioner: second <SIGNAL>: <message>\n" on stderr (write(2) only: the
// handler is async-signal-safe). A signal within 100 ms of the first is the
// same request delivered twice (timeout(1) signals its child and then its
// process group), not a second one. The message is cut at 1000 bytes. Not nested.
class SecondSignalExit {
 public:
  SecondSignalExit(const std::string& message, int exit_code);
  ~SecondSignalExit();
  SecondSignalExit(const SecondSignalExit&) = delete;
  SecondSignalExit& operator=(const SecondSignalExit&) = delete;
};

// "SIGTERM" for SIGTERM; "signal N" for one without a name here.
std::string SignalName(int sig);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_INTERRUPT_H_
