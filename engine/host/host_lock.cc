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

namespace {

// Opens (creating it on first use) the lock file `name` in the directory
// `dir_fs`, without following a link at `name` and without blocking: a FIFO
// or a device planted at the lock's path opens at once and is refused, a
// link (to a FIFO, or out of the root) is refused.
StatusOr<int> OpenLockFile(const std::string& dir_fs, const std::string& name,
                           const std::string& what) {
  const int dir_fd = ::open(dir_fs.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return ErrnoToStatus(errno, "open lock " + what);
  const int fd = ::openat(dir_fd, name.c_str(),
                          O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  const int e = errno;
  ::close(dir_fd);
  if (fd < 0) {
    if (e == ELOOP) {
      return FailedPreconditionError("open lock " + what +
                                     ": a symbolic link, not a regular file: refused");
    }
    return ErrnoToStatus(e, "open lock " + what);
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int fe = errno;
    ::close(fd);
    return ErrnoToStatus(fe, "open lock " + what);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* type = S_ISFIFO(st.st_mode)   ? "a FIFO"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                       : S_ISDIR(st.st_mode)  ? "a directory"
                                              : "of an unknown type";
    return FailedPreconditionError("open lock " + what + ": " + type +
                                   ", not a regular file: refused");
  }
  return fd;
}

}  // namespace

StatusOr<HostLock> AcquireHostLock(HostFs& fs, const std::string& path,
                                   std::chrono::milliseconds timeout) {
  // The directory is resolved inside the root; the lock file itself is never
  // followed (OpenLockFile).
  const std::string name(Basename(path));
  ASSIGN_OR_RETURN(std::string parent, fs.Resolve(Dirname(path)));
  // Created on first use by a read-only open (O_CREAT): a lock needs no
  // content, so even the first apply of an already converged host opens no
  // file for writing, and two first applies lock the same inode (a temp file
  // renamed into place could leave each holding a different one).
  auto opened = OpenLockFile(fs.FsPath(parent), name, path);
  if (!opened.ok() && opened.status().err() == ENOENT) {
    // mkdir -p the missing parents; `parent` is resolved, so the missing part
    // holds no link and the directories stay inside the root.
    std::string dir;
    for (size_t i = 1; i <= parent.size(); ++i) {
      if (i < parent.size() && parent[i] != '/') continue;
      dir = fs.FsPath(parent.substr(0, i));
      if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
        return ErrnoToStatus(errno, "create lock: mkdir " + parent.substr(0, i));
      }
    }
    opened = OpenLockFile(fs.FsPath(parent), name, path);
  }
  if (!opened.ok()) return opened.status();
  const int fd = *opened;
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
