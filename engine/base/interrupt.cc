#include "engine/base/interrupt.h"

#include <cstring>

namespace provisioner {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
std::atomic<int> g_signal{0};
int g_depth = 0;  // guards alive: an inner one keeps what an outer one saw
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

extern "C" void OnInterrupt(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);  // the first one counts
}

}  // namespace

InterruptGuard::InterruptGuard() {
  if (g_depth++ == 0) g_signal.store(0);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads, writes and waits go on; apply checks between changes
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    ::sigaction(kSignals[i], &sa, &old_[i]);
  }
}

InterruptGuard::~InterruptGuard() {
  --g_depth;
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    ::sigaction(kSignals[i], &old_[i], nullptr);
  }
}

const std::atomic<int>& InterruptGuard::signal() { return g_signal; }

std::string SignalName(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(sig);
  }
}

}  // namespace provisioner
