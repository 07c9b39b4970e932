#include "engine/host/host_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace provisioner {

HostLock& HostLock::operator=(HostLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

HostLock::~HostLock() {
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<HostLock> AcquireHostLock(HostFs& fs, const std::string& path,
                                   std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(std::string host, fs.Resolve(path));
  std::string fs_path = fs.FsPath(host);
  // Created on first use by a read-only open (O_CREAT): a lock needs no
  // content, so even the first apply of an already converged host opens no
  // file for writing, and two first applies lock the same inode (a temp file
  // renamed into place could leave each holding a different one).
  int fd = ::open(fs_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0 && errno == ENOENT) {
    // mkdir -p the missing parents; `host` is resolved, so the missing part
    // holds no link and the directories stay inside the root.
    std::string dir;
    std::string_view parent = Dirname(host);
    for (size_t i = 1; i <= parent.size(); ++i) {
      if (i < parent.size() && parent[i] != '/') continue;
      dir = fs.FsPath(parent.substr(0, i));
      if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoToStatus(errno, "create lock: mkdir " + std::string(parent.substr(0, i)));
      }
    }
    fd = ::open(fs_path.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
  }
  if (fd < 0) return ErrnoToStatus(errno, "open lock " + path);
  HostLock lock(fd);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return lock;
    if (errno != EWOULDBLOCK && errno != EINTR) return ErrnoToStatus(errno, "lock " + path);
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(
          StatusCode::kUnavailable,
          "another provisioner apply holds " + path + " under root " + fs.root() +
              (timeout.count() > 0 ? " (waited " + std::to_string(timeout.count() / 1000) + "s)"
                                   : "") +
              "; wait for it, or pass --lock-timeout SECONDS",
          EWOULDBLOCK);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

bool HostLockHeld(HostFs& fs, const std::string& path) {
  auto host = fs.Resolve(path);
  if (!host.ok()) return false;
  int fd = ::open(fs.FsPath(*host).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);  // drops the shared lock, if taken
  return held;
}

}  // namespace provisioner
