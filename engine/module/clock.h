// Injected time, so waits are bounded and tests do not sleep.
#ifndef PROVISIONER_ENGINE_MODULE_CLOCK_H_
#define PROVISIONER_ENGINE_MODULE_CLOCK_H_

#include <atomic>
#include <chrono>

namespace provisioner {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  virtual void SleepFor(std::chrono::milliseconds d) = 0;
};

Clock& RealClock();

// One sleep of a bounded wait (VFs, their netdevs): `d` on `clock`. With
// `interrupt` (apply's signal flag, HostContext::interrupt), false as soon as
// it reads non-zero: on the real clock the sleep wakes on the signal itself
// (InterruptGuard's self-pipe), not at the next poll; on a test clock it is
// read after the sleep. True: slept, no signal.
bool WaitStep(Clock& clock, std::chrono::milliseconds d, const std::atomic<int>* interrupt);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODULE_CLOCK_H_
