#include "engine/base/interrupt.h"

#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

namespace provisioner {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
std::atomic<int> g_signal{0};
std::atomic<int> g_count{0};
int g_depth = 0;  // guards alive: an inner one keeps what an outer one saw
static_assert(std::atomic<int>::is_always_lock_free, "set from a signal handler");

// The self-pipe: [0] polled by waits, [1] written by the handler.
int g_pipe[2] = {-1, -1};

// SecondSignalExit's message and exit code, read by the handler.
std::atomic<bool> g_exit_armed{false};
char g_exit_message[1024];
size_t g_exit_message_len = 0;
int g_exit_code = 1;

void WriteAll(const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

const char* NameOf(int sig) {
  switch (sig) {
    case SIGTERM:
      return "SIGTERM";
    case SIGINT:
      return "SIGINT";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal";
  }
}

// When the first signal came (CLOCK_MONOTONIC, ns): one request delivered
// twice at once is not a second request (timeout(1) signals its child, then
// its whole process group, the child again).
std::atomic<long long> g_first_ns{0};
constexpr long long kRepeatNs = 100 * 1000 * 1000;

long long MonotonicNs() {
  struct timespec t;
  ::clock_gettime(CLOCK_MONOTONIC, &t);  // async-signal-safe
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

extern "C" void OnInterrupt(int sig) {
  const int saved_errno = errno;
  int none = 0;
  const long long now = MonotonicNs();
  if (g_signal.compare_exchange_strong(none, sig)) g_first_ns.store(now);  // the first one counts
  if (g_count.load() >= 1 && now - g_first_ns.load() < kRepeatNs) {
    errno = saved_errno;
    return;  // the same request, delivered twice
  }
  const int n = g_count.fetch_add(1) + 1;
  if (g_pipe[1] >= 0) {
    const char byte = 1;
    (void)!::write(g_pipe[1], &byte, 1);  // full pipe: already readable
  }
  if (n >= 2 && g_exit_armed.load()) {
    WriteAll("\nprovisioner: second ", 21);
    const char* name = NameOf(sig);
    WriteAll(name, std::strlen(name));
    WriteAll(": ", 2);
    WriteAll(g_exit_message, g_exit_message_len);
    WriteAll("\n", 1);
    ::_exit(g_exit_code);
  }
  errno = saved_errno;
}

void DrainPipe() {
  char buf[64];
  while (::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

}  // namespace

InterruptGuard::InterruptGuard() {
  if (g_pipe[0] < 0 && ::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    g_pipe[0] = g_pipe[1] = -1;  // waits then sleep their whole time, as before
  }
  if (g_depth++ == 0) {
    g_signal.store(0);
    g_count.store(0);
    if (g_pipe[0] >= 0) DrainPipe();
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = OnInterrupt;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // reads and writes go on; waits wake on the pipe
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

int InterruptGuard::count() { return g_count.load(); }

int InterruptFd() { return g_pipe[0]; }

bool WaitUnlessInterrupted(std::chrono::milliseconds d) {
  if (g_signal.load() != 0) return false;
  if (g_pipe[0] < 0) {
    std::this_thread::sleep_for(d);
    return g_signal.load() == 0;
  }
  const auto deadline = std::chrono::steady_clock::now() + d;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return g_signal.load() == 0;
    struct pollfd p = {g_pipe[0], POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
    // Readable: a signal came (the pipe is not drained while guards live).
    if (r > 0 || g_signal.load() != 0) return false;
  }
}

SecondSignalExit::SecondSignalExit(const std::string& message, int exit_code) {
  const size_t n = std::min(message.size(), sizeof g_exit_message);
  std::memcpy(g_exit_message, message.data(), n);
  g_exit_message_len = n;
  g_exit_code = exit_code;
  g_exit_armed.store(true);
}

SecondSignalExit::~SecondSignalExit() { g_exit_armed.store(false); }

std::string SignalName(int sig) {
  const std::string name = NameOf(sig);  // the handler's async-signal-safe spelling
  return name == "signal" ? name + " " + std::to_string(sig) : name;
}

}  // namespace provisioner
