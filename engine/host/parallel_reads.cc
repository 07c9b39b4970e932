#include "engine/host/parallel_reads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace provisioner {
namespace {

constexpr size_t kMaxReadThreads = 8;

size_t UsableCpus() {
  if (const char* env = std::getenv("PROVISIONER_READ_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    long k = std::strtol(env, &end, 10);
    if (end != nullptr && *end == '\0' && k >= 1) return static_cast<size_t>(k);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<size_t>(n);
  }
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : hw;
}

// fn(i) for every i in [0, n) on `threads` threads, the caller's among them.
void RunOnThreads(size_t n, size_t threads, const std::function<void(size_t)>& fn) {
  if (threads <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;
  std::mutex error_mu;
  auto work = [&] {
    for (;;) {
      if (failed.load(std::memory_order_relaxed)) return;
      size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= n) return;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mu);
        if (!first_error) first_error = std::current_exception();
        failed.store(true, std::memory_order_relaxed);
        return;
      }
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {
      break;  // no more threads (EAGAIN): the ones started and this one do it all
    }
  }
  work();
  for (auto& th : pool) th.join();
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace

size_t ReadThreads(const HostFs& fs, size_t n, size_t min_per_thread) {
  if (!fs.ConcurrentReadsSafe()) return 1;
  size_t by_work = n / std::max<size_t>(min_per_thread, 1);
  return std::max<size_t>(1, std::min({UsableCpus(), kMaxReadThreads, by_work}));
}

void ForEachIndex(const HostFs& fs, size_t n, size_t min_per_thread,
                  const std::function<void(size_t)>& fn) {
  RunOnThreads(n, ReadThreads(fs, n, min_per_thread), fn);
}

void ForEachIndexWaiting(size_t n, size_t max_threads, const std::function<void(size_t)>& fn) {
  RunOnThreads(n, std::min(n, std::max<size_t>(max_threads, 1)), fn);
}

}  // namespace provisioner
