// One apply at a time per root: an flock(2) on <root>/run/provisioner/lock.
#ifndef PROVISIONER_ENGINE_HOST_HOST_LOCK_H_
#define PROVISIONER_ENGINE_HOST_HOST_LOCK_H_

#include <chrono>
#include <string>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr const char* kApplyLockPath = "/run/provisioner/lock";

// Holds the lock until destroyed (or the process dies: the kernel drops it).
class HostLock {
 public:
  HostLock() = default;
  explicit HostLock(int fd) : fd_(fd) {}
  HostLock(HostLock&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  HostLock& operator=(HostLock&& o) noexcept;
  HostLock(const HostLock&) = delete;
  HostLock& operator=(const HostLock&) = delete;
  ~HostLock();
  bool held() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Takes the lock at `path` (a host path). The lock file is created on first
// use only; taking an existing lock writes nothing. Another holder: waits up to
// `timeout` (zero: fails at once) and then fails with kUnavailable naming the
// holder's pid when the file records one.
StatusOr<HostLock> AcquireHostLock(HostFs& fs, const std::string& path,
                                   std::chrono::milliseconds timeout);

// True when another process holds the lock at `path` (a host path) now: an
// apply is running. Opens the file read-only if it exists (never creates it)
// and tries a shared lock without waiting.
bool HostLockHeld(HostFs& fs, const std::string& path);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_HOST_HOST_LOCK_H_
