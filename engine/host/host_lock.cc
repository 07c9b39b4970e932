#include "engine/host/host_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <thread>
#include <utility>
#include <vector>

namespace provisioner {

HostLock& HostLock::operator=(HostLock&& o) noexcept {
  if (this != &o) {
    Release();
    fd_ = std::exchange(o.fd_, -1);
    dir_fd_ = std::exchange(o.dir_fd_, -1);
    name_ = std::move(o.name_);
    created_ = std::exchange(o.created_, false);
    created_dirs_ = std::move(o.created_dirs_);
  }
  return *this;
}

HostLock::~HostLock() { Release(); }

namespace {

bool SameFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Whether the open lock `fd` is still the file named `name` in `dir_fd`
// (not removed by the holder it waited for).
bool StillAtItsPath(int fd, int dir_fd, const std::string& name) {
  struct stat open_st, path_st;
  if (::fstat(fd, &open_st) != 0) return false;
  if (::fstatat(dir_fd, name.c_str(), &path_st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  return SameFile(open_st, path_st);
}

}  // namespace

void HostLock::Release() {
  if (fd_ >= 0 && created_ && dir_fd_ >= 0 && StillAtItsPath(fd_, dir_fd_, name_)) {
    // Still held: no other process holds this file, and one that waits on
    // it opens again when it gets it (AcquireHostLock).
    ::unlinkat(dir_fd_, name_.c_str(), 0);
    // The directories made for it, innermost first; one that holds anything
    // else now stays (ENOTEMPTY).
    for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) {
      if (::rmdir(it->c_str()) != 0) break;
    }
  }
  if (fd_ >= 0) ::close(fd_);
  if (dir_fd_ >= 0) ::close(dir_fd_);
  fd_ = -1;
  dir_fd_ = -1;
  created_ = false;
  created_dirs_.clear();
}

namespace {

// Opens (creating it when missing, `*created` then set) the lock file `name`
// in the directory `dir_fd`, without following a link at `name` and without
// blocking: a FIFO or a device planted at the lock's path opens at once and
// is refused, a link (to a FIFO, or out of the root) is refused.
StatusOr<int> OpenLockFile(int dir_fd, const std::string& name, const std::string& what,
                           bool* created) {
  constexpr int kFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  *created = false;
  int fd = -1;
  int e = 0;
  for (int i = 0; i < 3 && fd < 0; ++i) {
    fd = ::openat(dir_fd, name.c_str(), kFlags);
    e = errno;
    if (fd >= 0 || e != ENOENT) break;
    // Missing: create it, knowing it is ours (O_EXCL); another process that
    // creates it first makes it EEXIST, and the plain open again.
    fd = ::openat(dir_fd, name.c_str(), kFlags | O_CREAT | O_EXCL, 0644);
    e = errno;
    if (fd >= 0) *created = true;
    if (fd >= 0 || e != EEXIST) break;
  }
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
  const std::string name(Basename(path));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int attempt = 0;; ++attempt) {
    // The directory is resolved inside the root; the lock file itself is
    // never followed (OpenLockFile).
    ASSIGN_OR_RETURN(std::string parent, fs.Resolve(Dirname(path)));
    std::vector<std::string> made;
    int dir_fd = ::open(fs.FsPath(parent).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0 && errno == ENOENT) {
      // mkdir -p the missing parents; `parent` is resolved, so the missing
      // part holds no link and the directories stay inside the root.
      for (size_t i = 1; i <= parent.size(); ++i) {
        if (i < parent.size() && parent[i] != '/') continue;
        const std::string dir = fs.FsPath(parent.substr(0, i));
        if (::mkdir(dir.c_str(), 0755) == 0) {
          made.push_back(dir);
        } else if (errno != EEXIST) {
          return ErrnoToStatus(errno, "create lock: mkdir " + parent.substr(0, i));
        }
      }
      dir_fd = ::open(fs.FsPath(parent).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    if (dir_fd < 0) {
      // Removed by a holder that created it, between our mkdir and open.
      if (errno == ENOENT && attempt < 5) continue;
      return ErrnoToStatus(errno, "open lock " + path);
    }
    HostLock lock;
    lock.dir_fd_ = dir_fd;
    lock.name_ = name;
    bool created = false;
    // Created on first use by a read-only open (O_CREAT): a lock needs no
    // content, so even the first apply of an already converged host opens
    // no file for writing, and two first applies lock the same inode (a
    // temp file renamed into place could leave each holding a different one).
    auto opened = OpenLockFile(dir_fd, name, path, &created);
    if (!opened.ok()) {
      if (opened.status().err() == ENOENT && attempt < 5) continue;
      return opened.status();
    }
    lock.fd_ = *opened;
    bool reopen = false;
    for (;;) {
      if (::flock(lock.fd_, LOCK_EX | LOCK_NB) == 0) {
        if (!StillAtItsPath(lock.fd_, dir_fd, name)) {
          // The holder we waited for created it and removed it on release.
          reopen = true;
          break;
        }
        lock.created_ = created;
        if (created) lock.created_dirs_ = std::move(made);
        return lock;
      }
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
    if (reopen) continue;
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
