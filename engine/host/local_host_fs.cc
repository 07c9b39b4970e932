// LocalHostFs: the host layer on a root directory ("/" or a captured tree),
// with its process-wide counters. Paths are resolved beneath a tree's root
// by openat2(RESOLVE_BENEATH), else by the walk of root_walk.h.
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/fd_io.h"
#include "engine/base/strings.h"
#include "engine/host/host_fs.h"
#include "engine/host/root_walk.h"

namespace provisioner {

namespace {

// Process-wide totals of every LocalHostFs (ProcessHostFsStats). Relaxed
// atomics: a HostFs may be used from a bounded-write thread.
enum StatField {
  kFilesRead,
  kBytesRead,
  kDirsListed,
  kFilesOpenedForWrite,
  kFailedOpens,
  kLookups,
  kResolveSteps,
  kNumStatFields
};
std::atomic<uint64_t> g_totals[kNumStatFields];

uint64_t& FieldOf(HostFsStats& s, StatField f) {
  static constexpr uint64_t HostFsStats::*kMembers[kNumStatFields] = {
      &HostFsStats::files_read,    &HostFsStats::bytes_read,
      &HostFsStats::dirs_listed,   &HostFsStats::files_opened_for_write,
      &HostFsStats::failed_opens,  &HostFsStats::lookups,
      &HostFsStats::resolve_steps,
  };
  return s.*kMembers[f];
}

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

size_t MaxReadBytes(std::string_view path) {
  // A sysfs attribute is at most a page (64 KiB on 64K-page kernels; a PCI
  // function's config is 4 KiB); the other files read (procfs, /etc,
  // modules.dep and modules.alias, captured tool output) are far below 16 MiB.
  constexpr std::string_view kSys = "/sys/";
  return path.substr(0, kSys.size()) == kSys ? HostFs::kMaxSysfsRead : HostFs::kMaxFileRead;
}

const char* FileTypeName(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFIFO:
      return "a FIFO";
    case S_IFCHR:
      return "a character device";
    case S_IFBLK:
      return "a block device";
    case S_IFSOCK:
      return "a socket";
    case S_IFDIR:
      return "a directory";
    case S_IFLNK:
      return "a symbolic link";
    default:
      return "of an unknown type";
  }
}

class LocalHostFs final : public HostFs {
 public:
  explicit LocalHostFs(std::string root) : root_(std::move(root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
    if (root_.empty()) root_ = "/";
    if (root_ != "/") {
      // One descriptor for the tree: the kernel resolves host paths beneath
      // it (openat2), instead of an lstat per path component.
      root_fd_ = ::open(root_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (char* real = ::realpath(root_.c_str(), nullptr)) {
        real_root_ = real;
        std::free(real);
      }
    }
  }
  ~LocalHostFs() override {
    if (root_fd_ >= 0) ::close(root_fd_);
  }
  LocalHostFs(const LocalHostFs&) = delete;
  LocalHostFs& operator=(const LocalHostFs&) = delete;

  const std::string& root() const override { return root_; }

  std::string FsPath(std::string_view path) const override {
    if (root_ == "/")
      return path.empty() || path[0] != '/' ? "/" + std::string(path) : std::string(path);
    return JoinPath(root_, path);
  }

  StatusOr<std::string> Resolve(std::string_view path) const override {
    Count(kLookups);
    if (root_fd_ >= 0 && !real_root_.empty() && path.size() > 0 && path[0] == '/') {
      // The kernel's answer: where the opened path really is, as a host path.
      auto fd = OpenInRoot(path, O_PATH, "resolve");
      if (fd.ok()) {
        FdCloser closer{*fd};
        char buf[PATH_MAX];
        std::string proc = "/proc/self/fd/" + std::to_string(*fd);
        ssize_t n = ::readlink(proc.c_str(), buf, sizeof buf - 1);
        if (n > 0) {
          std::string_view real(buf, static_cast<size_t>(n));
          if (real == real_root_) return std::string("/");
          const size_t n_root = real_root_.size();
          if (real.size() > n_root && real.compare(0, n_root, real_root_) == 0 &&
              real[n_root] == '/') {
            return std::string(real.substr(n_root));
          }
        }
      }
    }
    return ResolveImpl(path, /*follow_last=*/true);
  }

  StatusOr<std::string> ReadFile(std::string_view path) const override {
    // Non-blocking: a FIFO in a tree opens at once instead of waiting for a
    // writer (ReadAndClose then refuses it). Regular files ignore the flag.
    auto opened = OpenInRoot(path, O_RDONLY | O_NONBLOCK, "read");
    if (!opened.ok()) {
      Count(kFailedOpens);
      return opened.status();
    }
    return ReadAndClose(*opened, path);
  }

  std::vector<StatusOr<std::string>> ReadFilesIn(
      std::string_view dir, const std::vector<std::string>& names) const override {
    return ReadEachIn(dir, names, 0);
  }

  std::vector<StatusOr<std::string>> ReadSmallFilesIn(std::string_view dir,
                                                      const std::vector<std::string>& names,
                                                      size_t max_bytes) const override {
    return ReadEachIn(dir, names, std::min(std::max<size_t>(max_bytes, 1), kMaxSmallRead));
  }

  // ReadFilesIn (small == 0) or ReadSmallFilesIn (at most `small` bytes a file).
  std::vector<StatusOr<std::string>> ReadEachIn(std::string_view dir,
                                                const std::vector<std::string>& names,
                                                size_t small) const {
    auto opened = OpenInRoot(dir, O_PATH | O_DIRECTORY, "open");
    if (!opened.ok()) return HostFs::ReadFilesIn(dir, names);  // same errors, per file
    FdCloser closer{*opened};
    std::vector<StatusOr<std::string>> out;
    out.reserve(names.size());
    for (const auto& n : names) {
      std::string path = JoinPath(dir, n);
      if (n.empty() || n == "." || n == ".." || n.find('/') != std::string::npos) {
        out.push_back(ReadFile(path));
        continue;
      }
      // One-component lookups from the directory. Beneath it: a link in the
      // name that leads elsewhere fails EXDEV and takes ReadFile's way.
      long fd;
      if (root_fd_ >= 0 && openat2_usable_) {
        struct open_how how {};
        how.flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH;
        fd = ::syscall(SYS_openat2, *opened, n.c_str(), &how, sizeof how);
      } else if (root_ == "/") {
        fd = ::openat(*opened, n.c_str(),
                      O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // live root: the kernel's walk
      } else {
        fd = -1;
        errno = EXDEV;
      }
      if (fd < 0) {
        int e = errno;
        if (e == EXDEV || e == EAGAIN || e == ENOSYS || e == EPERM) {
          out.push_back(ReadFile(path));
        } else {
          Count(kFailedOpens);
          out.push_back(ErrnoToStatus(e, "read " + path));
        }
        continue;
      }
      out.push_back(small > 0 ? ReadSmallAndClose(static_cast<int>(fd), path, small)
                              : ReadAndClose(static_cast<int>(fd), path));
    }
    return out;
  }

  // One read(2) of at most `max` (<= kMaxSmallRead) bytes into a stack buffer,
  // and close: no fstat. The file was opened O_NONBLOCK, so a FIFO or a
  // terminal in a tree gives nothing or EAGAIN at once; a directory EISDIR.
  StatusOr<std::string> ReadSmallAndClose(int fd, std::string_view path, size_t max) const {
    FdCloser closer{fd};
    char buf[kMaxSmallRead];
    ssize_t n;
    do {
      n = ::read(fd, buf, max);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      Count(kFailedOpens);
      return ErrnoToStatus(errno, "read " + std::string(path));
    }
    Count(kFilesRead);
    return std::string(buf, static_cast<size_t>(n));
  }

  // Reads `fd` to the end and closes it: only a regular file (sysfs, procfs
  // and configfs attributes are regular files too), and at most
  // MaxReadBytes(path), so that a FIFO, a device node or an endless file in
  // a captured tree is refused with its path instead of hanging discovery
  // or filling memory.
  StatusOr<std::string> ReadAndClose(int fd, std::string_view path) const {
    FdCloser closer{fd};
    struct stat st;
    if (::fstat(fd, &st) != 0) {
      Count(kFailedOpens);
      return ErrnoToStatus(errno, "read " + std::string(path));
    }
    if (!S_ISREG(st.st_mode)) {
      Count(kFailedOpens);
      return FailedPreconditionError("read " + std::string(path) + ": " + FileTypeName(st.st_mode) +
                                     ", not a regular file: refused");
    }
    // O_NONBLOCK (for the FIFO case above) changes nothing for a regular
    // file: no fcntl to clear it (two syscalls per file, issue 27 item 7).
    // A regular file's short read is its end (sysfs, procfs and configfs
    // fill the buffer from their seq_file to the end; a disk file has no
    // more): no read that returns 0 after it.
    const size_t limit = MaxReadBytes(path);
    std::string out;
    if (int e = ReadAll(fd, &out, limit, /*short_read_is_eof=*/true); e != 0) {
      Count(kFailedOpens);  // sysfs answers EINVAL here (unused GID slot attrs)
      if (e == EFBIG) {
        return FailedPreconditionError("read " + std::string(path) + ": larger than " +
                                       std::to_string(limit) +
                                       " bytes, the most such a file holds: refused");
      }
      return ErrnoToStatus(e, "read " + std::string(path));
    }
    Count(kFilesRead);
    Count(kBytesRead, out.size());
    return out;
  }

  StatusOr<std::vector<std::string>> ListDir(std::string_view path) const override {
    auto opened = OpenInRoot(path, O_RDONLY | O_DIRECTORY, "list");
    if (!opened.ok()) {
      Count(kFailedOpens);
      return opened.status();
    }
    DIR* d = ::fdopendir(*opened);
    if (d == nullptr) {
      int e = errno;
      ::close(*opened);
      return ErrnoToStatus(e, "list " + std::string(path));
    }
    std::vector<std::string> out;
    while (struct dirent* e = ::readdir(d)) {
      std::string_view name(e->d_name);
      if (name == "." || name == "..") continue;
      out.emplace_back(name);
    }
    ::closedir(d);
    // Natural order (eth2 before eth10, virtfn2 before virtfn10): callers list
    // these names to people as they come.
    std::sort(out.begin(), out.end(),
              [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
    Count(kDirsListed);
    return out;
  }

  StatusOr<std::string> ReadLink(std::string_view path) const override {
    Count(kLookups);
    char buf[PATH_MAX];
    ssize_t n;
    if (int parent = OpenParentInRoot(path); parent >= 0) {
      FdCloser closer{parent};
      n = ::readlinkat(parent, std::string(Basename(path)).c_str(), buf, sizeof buf - 1);
    } else {
      ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, false));
      n = ::readlink(fs.c_str(), buf, sizeof buf - 1);
    }
    if (n < 0) return ErrnoToStatus(errno, "readlink " + std::string(path));
    return std::string(buf, static_cast<size_t>(n));
  }

  bool Exists(std::string_view path) const override {
    Count(kLookups);
    struct stat st;
    return Stat(path, &st);
  }

  bool IsDir(std::string_view path) const override {
    Count(kLookups);
    struct stat st;
    return Stat(path, &st) && S_ISDIR(st.st_mode);
  }

  bool IsSymlink(std::string_view path) const override {
    Count(kLookups);
    struct stat st;
    if (int parent = OpenParentInRoot(path); parent >= 0) {
      FdCloser closer{parent};
      const std::string base(Basename(path));
      return ::fstatat(parent, base.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
    }
    auto fs = FsPathResolved(path, false);
    return fs.ok() && ::lstat(fs->c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  }

  Status WriteAttr(std::string_view path, std::string_view value) override {
    // O_TRUNC matters only for regular files (trees); sysfs ignores it.
    int flags = O_WRONLY | (root_ == "/" ? 0 : O_TRUNC);
    ASSIGN_OR_RETURN(int fd, OpenInRoot(path, flags, "write"));
    Count(kFilesOpenedForWrite);
    ssize_t n = ::write(fd, value.data(), value.size());
    int e = errno;
    if (n < 0) {
      ::close(fd);
      return ErrnoToStatus(e, "write " + std::string(path));
    }
    if (::close(fd) != 0) return ErrnoToStatus(errno, "write " + std::string(path));
    if (static_cast<size_t>(n) != value.size()) {
      return ErrnoToStatus(EIO, "write " + std::string(path) + " (short write)");
    }
    return OkStatus();
  }

  Status WriteAt(std::string_view path, uint64_t offset, std::string_view bytes) override {
    ASSIGN_OR_RETURN(int fd, OpenInRoot(path, O_WRONLY, "write"));
    Count(kFilesOpenedForWrite);
    const std::string what = "write " + std::string(path) + " at offset " + std::to_string(offset);
    ssize_t n = ::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    int e = errno;
    if (n < 0) {
      ::close(fd);
      return ErrnoToStatus(e, what);
    }
    if (::close(fd) != 0) return ErrnoToStatus(errno, what);
    if (static_cast<size_t>(n) != bytes.size()) return ErrnoToStatus(EIO, what + " (short write)");
    return OkStatus();
  }

  Status WriteFileAtomic(std::string_view path, std::string_view content, int mode) override {
    std::string parent(Dirname(path));
    const std::string base(Basename(path));
    if (base.empty() || base == "." || base == ".." || base == "/") {
      return InvalidArgumentError("write " + std::string(path) + ": not a file path");
    }
    RETURN_IF_ERROR(MakeDirs(parent));
    // The directory, opened confined (beneath the root); the temporary file
    // and the rename are relative to it, never by a path a link in the tree
    // could redirect. The temporary's name is random and created with
    // O_EXCL|O_NOFOLLOW: a name planted in the tree (a link to a file
    // outside the root, a FIFO) makes the open fail instead of being followed.
    ASSIGN_OR_RETURN(int dir_fd, OpenInRoot(parent, O_RDONLY | O_DIRECTORY, "write"));
    FdCloser dir_closer{dir_fd};
    std::string tmp;
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
      tmp = "." + base.substr(0, 128) + ".provisioner-tmp." + RandomFileSuffix();
      fd = ::openat(dir_fd, tmp.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return ErrnoToStatus(errno, "write " + std::string(path) + " (temp file)");
    Count(kFilesOpenedForWrite);
    auto fail = [&](int e, const std::string& what) {
      ::unlinkat(dir_fd, tmp.c_str(), 0);
      return ErrnoToStatus(e, what);
    };
    if (::fchmod(fd, static_cast<mode_t>(mode)) != 0) {
      int e = errno;
      ::close(fd);
      return fail(e, "write " + std::string(path) + " (chmod)");
    }
    if (int e = WriteAll(fd, content); e != 0) {
      ::close(fd);
      return fail(e, "write " + std::string(path));
    }
    if (::fsync(fd) != 0) {
      int e = errno;
      ::close(fd);
      return fail(e, "write " + std::string(path));
    }
    if (::close(fd) != 0) return fail(errno, "write " + std::string(path));
    // rename(2) replaces the name itself: a link at the target is replaced,
    // not followed.
    if (::renameat(dir_fd, tmp.c_str(), dir_fd, base.c_str()) != 0) {
      return fail(errno, "rename into " + std::string(path));
    }
    ::fsync(dir_fd);  // the new name durable too (best effort, as rename's callers do)
    return OkStatus();
  }

  Status RemoveFile(std::string_view path) override {
    if (int parent = OpenParentInRoot(path); parent >= 0) {
      FdCloser closer{parent};
      const std::string base(Basename(path));
      if (::unlinkat(parent, base.c_str(), 0) != 0 && errno != ENOENT) {
        return ErrnoToStatus(errno, "remove " + std::string(path));
      }
      return OkStatus();
    }
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, false));
    if (::unlink(fs.c_str()) != 0 && errno != ENOENT) {
      return ErrnoToStatus(errno, "remove " + std::string(path));
    }
    return OkStatus();
  }

  StatusOr<FileOwnership> StatFile(std::string_view path) const override {
    Count(kLookups);
    struct stat st;
    if (!Stat(path, &st))
      return ErrnoToStatus(errno == 0 ? ENOENT : errno, "stat " + std::string(path));
    FileOwnership o;
    o.mode = static_cast<uint32_t>(st.st_mode & 07777);
    o.uid = static_cast<uint32_t>(st.st_uid);
    o.gid = static_cast<uint32_t>(st.st_gid);
    return o;
  }

  Status SetOwner(std::string_view path, uint32_t uid, uint32_t gid) override {
    // The name itself (a link is not followed), through its confined parent.
    if (int parent = OpenParentInRoot(path); parent >= 0) {
      FdCloser closer{parent};
      const std::string base(Basename(path));
      if (::fchownat(parent, base.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(gid),
                     AT_SYMLINK_NOFOLLOW) != 0) {
        return ErrnoToStatus(errno, "chown " + std::string(path));
      }
      return OkStatus();
    }
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, false));
    if (::lchown(fs.c_str(), static_cast<uid_t>(uid), static_cast<gid_t>(gid)) != 0) {
      return ErrnoToStatus(errno, "chown " + std::string(path));
    }
    return OkStatus();
  }

  Status MakeDir(std::string_view path) override { return DirOp(path, true); }
  Status RemoveDir(std::string_view path) override { return DirOp(path, false); }

  const HostFsStats& stats() const override { return stats_; }
  bool ConcurrentReadsSafe() const override { return true; }

 private:
  void Count(StatField f, uint64_t n = 1) const {
    // Atomic: discovery may read from several threads (ConcurrentReadsSafe).
    // stats() is read when no reader runs, as plain fields.
    __atomic_fetch_add(&FieldOf(stats_, f), n, __ATOMIC_RELAXED);
    g_totals[f].fetch_add(n, std::memory_order_relaxed);
  }

  // Opens a host path. In a tree, the kernel resolves it beneath the root's
  // descriptor: openat2(RESOLVE_BENEATH) fails EXDEV on any absolute link or
  // ".." that would leave the root, and only then (or without openat2) the
  // user-space walk of ResolveImpl decides: re-root the link, or the error.
  // Same answers, a few syscalls instead of an lstat per component.
  StatusOr<int> OpenInRoot(std::string_view path, int flags, const char* what) const {
    flags |= O_CLOEXEC;
    if (root_fd_ >= 0 && openat2_usable_ && !path.empty() && path[0] == '/') {
      size_t b = path.find_first_not_of('/');
      std::string rel = b == std::string_view::npos ? "." : std::string(path.substr(b));
      struct open_how how {};
      how.flags = static_cast<uint64_t>(flags);
      how.resolve = RESOLVE_BENEATH;
      long fd = ::syscall(SYS_openat2, root_fd_, rel.c_str(), &how, sizeof how);
      if (fd >= 0) return static_cast<int>(fd);
      int e = errno;
      if (e == ENOSYS || e == EPERM) openat2_usable_ = false;  // old kernel or seccomp
      if (e != EXDEV && e != EAGAIN && e != ENOSYS && e != EPERM) {
        return ErrnoToStatus(e, std::string(what) + " " + std::string(path));
      }
    }
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, true));
    int fd = ::open(fs.c_str(), flags);
    if (fd < 0) return ErrnoToStatus(errno, std::string(what) + " " + std::string(path));
    return fd;
  }

  // The parent directory of a tree path, opened (O_PATH) through OpenInRoot,
  // for calls that must not follow the last component; -1 when the caller
  // should use the user-space walk (live root, "." / "..", failures).
  int OpenParentInRoot(std::string_view path) const {
    if (root_fd_ < 0) return -1;
    std::string_view base = Basename(path);
    if (base.empty() || base == "." || base == ".." || base == "/") return -1;
    auto fd = OpenInRoot(Dirname(path), O_PATH | O_DIRECTORY, "open");
    return fd.ok() ? *fd : -1;
  }

  // stat(2) of a host path, links followed inside the root.
  bool Stat(std::string_view path, struct stat* st) const {
    if (root_fd_ >= 0) {
      auto fd = OpenInRoot(path, O_PATH, "stat");
      if (!fd.ok()) return false;
      FdCloser closer{*fd};
      return ::fstat(*fd, st) == 0;
    }
    auto fs = FsPathResolved(path, true);
    return fs.ok() && ::stat(fs->c_str(), st) == 0;
  }

  // mkdirat / unlinkat(AT_REMOVEDIR) of the last component, relative to its
  // parent opened beneath the root (as RemoveFile).
  Status DirOp(std::string_view path, bool make) {
    const std::string what = (make ? "mkdir " : "rmdir ") + std::string(path);
    int r;
    if (int parent = OpenParentInRoot(path); parent >= 0) {
      FdCloser closer{parent};
      const std::string base(Basename(path));
      r = make ? ::mkdirat(parent, base.c_str(), 0755)
               : ::unlinkat(parent, base.c_str(), AT_REMOVEDIR);
    } else {
      ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, false));
      r = make ? ::mkdir(fs.c_str(), 0755) : ::rmdir(fs.c_str());
    }
    if (r != 0) return ErrnoToStatus(errno, what);
    if (make) Count(kFilesOpenedForWrite);
    return OkStatus();
  }

  Status MakeDirs(std::string_view path) {
    if (path == "/" || path.empty() || IsDir(path)) return OkStatus();
    RETURN_IF_ERROR(MakeDirs(Dirname(path)));
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, false));
    if (::mkdir(fs.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoToStatus(errno, "mkdir " + std::string(path));
    }
    return OkStatus();
  }

  // The filesystem path of the resolved host path.
  StatusOr<std::string> FsPathResolved(std::string_view path, bool follow_last) const {
    if (root_ == "/") return std::string(path);  // the kernel resolves it
    ASSIGN_OR_RETURN(std::string host, ResolveImpl(path, follow_last));
    return FsPath(host);
  }
  StatusOr<std::string> ResolveImpl(std::string_view path, bool follow_last) const {
    return WalkBeneathRoot(root_, path, follow_last, [this] { Count(kResolveSteps); });
  }

  std::string root_;
  int root_fd_ = -1;       // the tree's directory (O_PATH); -1 on the live root
  std::string real_root_;  // realpath of the tree, for Resolve
  mutable std::atomic<bool> openat2_usable_{true};
  mutable HostFsStats stats_;
};

}  // namespace

std::unique_ptr<HostFs> NewLocalHostFs(std::string root) {
  return std::make_unique<LocalHostFs>(std::move(root));
}

HostFsStats ProcessHostFsStats() {
  HostFsStats s;
  for (int f = 0; f < kNumStatFields; ++f) {
    FieldOf(s, static_cast<StatField>(f)) = g_totals[f].load(std::memory_order_relaxed);
  }
  return s;
}

}  // namespace provisioner
