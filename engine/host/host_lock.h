// One apply at a time per root: an flock(2) on <root>/run/provisioner/lock.
#ifndef PROVISIONER_ENGINE_HOST_HOST_LOCK_H_
#define PROVISIONER_ENGINE_HOST_HOST_LOCK_H_

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner {

inline constexpr const char* kApplyLockPath = "/run/provisioner/lock";

// Holds the lock until destroyed (or the process dies: the kernel drops it).
// A lock file (and the directories above it) that this lock created is
// removed again when the lock is released, unless Keep() was called: an
// apply refused before its first write (an edited saved plan, a failed
// discovery, nothing to do) leaves the tree as it found it. It is removed
// while still held; a process that was waiting on the removed file sees on
// getting it that the file is no longer at the lock's path and opens again
// (AcquireHostLock), so two holders never hold different files.
class HostLock {
 public:
  HostLock() = default;
  explicit HostLock(int fd) : fd_(fd) {}
  HostLock(HostLock&& o) noexcept { *this = std::move(o); }
  HostLock& operator=(HostLock&& o) noexcept;
  HostLock(const HostLock&) = delete;
  HostLock& operator=(const HostLock&) = delete;
  ~HostLock();
  bool held() const { return fd_ >= 0; }
  // The lock file stays after release (an apply wrote to the tree).
  void Keep() { created_ = false; }
  // Whether releasing this lock removes its file (it created it, no Keep()).
  bool removes_file() const { return created_; }

 private:
  friend StatusOr<HostLock> AcquireHostLock(HostFs& fs, const std::string& path,
                                            std::chrono::milliseconds timeout);
  void Release();
  int fd_ = -1;
  int dir_fd_ = -1;                        // the lock file's directory (O_PATH), when created_
  std::string name_;                       // the lock file's name in it
  bool created_ = false;                   // this lock created the file: removed on release
  std::vector<std::string> created_dirs_;  // FsPaths made for it, outermost first
};

// Takes the lock at `path` (a host path). The lock file is created when
// missing (and removed on release unless kept); taking an existing lock
// writes nothing. Another holder: waits up to
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
