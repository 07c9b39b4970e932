#include "engine/host/host_lock.h"

#include <fcntl.h>
#include <sys/file.h>
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
  if (!fs.Exists(path)) {
    RETURN_IF_ERROR(fs.WriteFileAtomic(path, "").WithContext("create lock"));
  }
  ASSIGN_OR_RETURN(std::string host, fs.Resolve(path));
  std::string fs_path = fs.FsPath(host);
  int fd = ::open(fs_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "open lock " + path);
  HostLock lock(fd);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return lock;
    if (errno != EWOULDBLOCK && errno != EINTR) return ErrnoToStatus(errno, "lock " + path);
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status(StatusCode::kUnavailable,
                    "another provisioner apply holds " + path + " under root " + fs.root() +
                        (timeout.count() > 0 ? " (waited " + std::to_string(timeout.count() / 1000) + "s)"
                                             : "") +
                        "; wait for it, or pass --lock-timeout SECONDS",
                    EWOULDBLOCK);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace provisioner
