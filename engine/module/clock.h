// Injected time, so waits are bounded and tests do not sleep.
#ifndef PROVISIONER_ENGINE_MODULE_CLOCK_H_
#define PROVISIONER_ENGINE_MODULE_CLOCK_H_

#include <chrono>

namespace provisioner {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  virtual void SleepFor(std::chrono::milliseconds d) = 0;
};

Clock& RealClock();

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODULE_CLOCK_H_
