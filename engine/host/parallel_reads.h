// Reading many independent sysfs directories (one per RDMA device, per PCI
// function) on more than one core. A discovery of 2,048 RDMA devices is half a
// million small reads, nearly all of it time in the kernel's path walk and
// read: two threads on two cores take about half the wall time.
#ifndef PROVISIONER_ENGINE_HOST_PARALLEL_READS_H_
#define PROVISIONER_ENGINE_HOST_PARALLEL_READS_H_

#include <cstddef>
#include <functional>
#include <optional>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

// How many threads ForEachIndex uses for `n` items of which one thread should
// take at least `min_per_thread`: 1 unless `fs.ConcurrentReadsSafe()`, else
// min(CPUs this process may run on, 8, n / min_per_thread), at least 1.
// PROVISIONER_READ_THREADS=<k> (k >= 1) replaces the CPU count (benchmarks,
// tests; 1 turns parallel reads off).
size_t ReadThreads(const HostFs& fs, size_t n, size_t min_per_thread);

// Calls fn(i) once for every i in [0, n), on ReadThreads(fs, n,
// min_per_thread) threads (the caller's among them), items handed out in
// order as threads free up. fn must only read through `fs` and write its own
// slot of the caller's output. Returns when all calls have returned; an
// exception from fn is rethrown here (the first one; the other threads stop
// taking items).
void ForEachIndex(const HostFs& fs, size_t n, size_t min_per_thread,
                  const std::function<void(size_t)>& fn);

// Calls fn(i) once for every i in [0, n) on min(n, max_threads) threads (the
// caller's among them), whatever the CPU count: for items that wait rather
// than compute (an external command per device, e.g. `mstconfig query`,
// about a second each), so that n waits overlap. Same contract as
// ForEachIndex otherwise.
void ForEachIndexWaiting(size_t n, size_t max_threads, const std::function<void(size_t)>& fn);

// read_one(i) -> StatusOr<T> for every i in [0, n) through ForEachIndex: the
// n values in index order, or the error of the lowest failing index (the one
// a serial loop would have stopped at).
template <typename T, typename ReadOne>
StatusOr<std::vector<T>> ReadEach(const HostFs& fs, size_t n, size_t min_per_thread,
                                  ReadOne read_one) {
  std::vector<std::optional<StatusOr<T>>> slots(n);
  ForEachIndex(fs, n, min_per_thread, [&](size_t i) { slots[i].emplace(read_one(i)); });
  std::vector<T> out;
  out.reserve(n);
  for (auto& slot : slots) {
    if (!slot->ok()) return slot->status();
    out.push_back(std::move(**slot));
  }
  return out;
}

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_HOST_PARALLEL_READS_H_
