#include "engine/host/host_fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>
#include <vector>

namespace provisioner {

std::string JoinPath(std::string_view a, std::string_view b) {
  std::string out(a);
  if (out.empty() || out.back() != '/') out += '/';
  while (!b.empty() && b.front() == '/') b.remove_prefix(1);
  out += b;
  return out;
}

std::string_view Basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t pos = path.rfind('/');
  return pos == std::string_view::npos ? path : path.substr(pos + 1);
}

std::string_view Dirname(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  size_t pos = path.rfind('/');
  if (pos == std::string_view::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

StatusOr<std::string> HostFs::ReadAttr(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string s, ReadFile(path));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\0')) {
    s.pop_back();
  }
  return s;
}

StatusOr<std::string> HostFs::LinkBasename(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string target, ReadLink(path));
  return std::string(Basename(target));
}

namespace {

std::vector<std::string> SplitComponents(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = i;
    while (j < path.size() && path[j] != '/') ++j;
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

class LocalHostFs final : public HostFs {
 public:
  explicit LocalHostFs(std::string root) : root_(std::move(root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
    if (root_.empty()) root_ = "/";
  }

  const std::string& root() const override { return root_; }

  std::string FsPath(std::string_view path) const override {
    if (root_ == "/") return path.empty() || path[0] != '/' ? "/" + std::string(path) : std::string(path);
    return JoinPath(root_, path);
  }

  StatusOr<std::string> Resolve(std::string_view path) const override {
    return ResolveImpl(path, /*follow_last=*/true);
  }

  StatusOr<std::string> ReadFile(std::string_view path) const override {
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, true));
    int fd = ::open(fs.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoToStatus(errno, "read " + std::string(path));
    std::string out;
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        return ErrnoToStatus(e, "read " + std::string(path));
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    ++stats_.files_read;
    stats_.bytes_read += out.size();
    return out;
  }

  StatusOr<std::vector<std::string>> ListDir(std::string_view path) const override {
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, true));
    DIR* d = ::opendir(fs.c_str());
    if (d == nullptr) return ErrnoToStatus(errno, "list " + std::string(path));
    std::vector<std::string> out;
    while (struct dirent* e = ::readdir(d)) {
      std::string_view name(e->d_name);
      if (name == "." || name == "..") continue;
      out.emplace_back(name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    ++stats_.dirs_listed;
    return out;
  }

  StatusOr<std::string> ReadLink(std::string_view path) const override {
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, false));
    char buf[PATH_MAX];
    ssize_t n = ::readlink(fs.c_str(), buf, sizeof buf - 1);
    if (n < 0) return ErrnoToStatus(errno, "readlink " + std::string(path));
    return std::string(buf, static_cast<size_t>(n));
  }

  bool Exists(std::string_view path) const override {
    auto fs = FsPathResolved(path, true);
    struct stat st;
    return fs.ok() && ::stat(fs->c_str(), &st) == 0;
  }

  bool IsDir(std::string_view path) const override {
    auto fs = FsPathResolved(path, true);
    struct stat st;
    return fs.ok() && ::stat(fs->c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  bool IsSymlink(std::string_view path) const override {
    auto fs = FsPathResolved(path, false);
    struct stat st;
    return fs.ok() && ::lstat(fs->c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  }

  Status WriteAttr(std::string_view path, std::string_view value) override {
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, true));
    // O_TRUNC matters only for regular files (trees); sysfs ignores it.
    int flags = O_WRONLY | O_CLOEXEC | (root_ == "/" ? 0 : O_TRUNC);
    int fd = ::open(fs.c_str(), flags);
    if (fd < 0) return ErrnoToStatus(errno, "write " + std::string(path));
    ++stats_.files_opened_for_write;
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

  Status WriteFileAtomic(std::string_view path, std::string_view content, int mode) override {
    std::string parent(Dirname(path));
    RETURN_IF_ERROR(MakeDirs(parent));
    ASSIGN_OR_RETURN(std::string dir_fs, FsPathResolved(parent, true));
    std::string target = JoinPath(dir_fs, Basename(path));
    std::string tmp = target + ".provisioner-tmp." + std::to_string(::getpid());
    int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) return ErrnoToStatus(errno, "write " + std::string(path) + " (temp file)");
    ++stats_.files_opened_for_write;
    size_t off = 0;
    while (off < content.size()) {
      ssize_t n = ::write(fd, content.data() + off, content.size() - off);
      if (n < 0) {
        if (errno == EINTR) continue;
        int e = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        return ErrnoToStatus(e, "write " + std::string(path));
      }
      off += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0 || ::close(fd) != 0) {
      int e = errno;
      ::unlink(tmp.c_str());
      return ErrnoToStatus(e, "write " + std::string(path));
    }
    ::chmod(tmp.c_str(), static_cast<mode_t>(mode));
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      int e = errno;
      ::unlink(tmp.c_str());
      return ErrnoToStatus(e, "rename into " + std::string(path));
    }
    return OkStatus();
  }

  Status RemoveFile(std::string_view path) override {
    ASSIGN_OR_RETURN(std::string fs, FsPathResolved(path, false));
    if (::unlink(fs.c_str()) != 0 && errno != ENOENT) {
      return ErrnoToStatus(errno, "remove " + std::string(path));
    }
    return OkStatus();
  }

  const HostFsStats& stats() const override { return stats_; }

 private:
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

  // Walks `path` component by component under the root, following symlinks
  // the way the kernel would, but with the root as "/". Missing components are
  // kept as they are (the caller's open() reports ENOENT).
  StatusOr<std::string> ResolveImpl(std::string_view path, bool follow_last) const {
    if (path.empty() || path[0] != '/') {
      return InvalidArgumentError("host path must be absolute: " + std::string(path));
    }
    std::vector<std::string> todo = SplitComponents(path);
    std::reverse(todo.begin(), todo.end());  // a stack: back() is next
    std::vector<std::string> done;           // resolved components
    int links = 0;
    while (!todo.empty()) {
      std::string comp = std::move(todo.back());
      todo.pop_back();
      if (comp == ".") continue;
      if (comp == "..") {
        if (done.empty()) {
          return ErrnoToStatus(EXDEV, "resolve " + std::string(path) + ": '..' leaves the root " + root_);
        }
        done.pop_back();
        continue;
      }
      done.push_back(comp);
      bool last = todo.empty();
      if (last && !follow_last) break;
      std::string fs = root_ == "/" ? "" : root_;
      for (const auto& c : done) { fs += '/'; fs += c; }
      struct stat st;
      if (::lstat(fs.c_str(), &st) != 0) {
        // Keep the rest literally: the eventual open() reports ENOENT.
        while (!todo.empty()) { done.push_back(std::move(todo.back())); todo.pop_back(); }
        break;
      }
      if (!S_ISLNK(st.st_mode)) continue;
      if (++links > 40) return ErrnoToStatus(ELOOP, "resolve " + std::string(path));
      char buf[PATH_MAX];
      ssize_t n = ::readlink(fs.c_str(), buf, sizeof buf - 1);
      if (n < 0) return ErrnoToStatus(errno, "readlink " + std::string(path));
      std::string_view target(buf, static_cast<size_t>(n));
      done.pop_back();
      if (!target.empty() && target[0] == '/') done.clear();
      std::vector<std::string> parts = SplitComponents(target);
      for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.push_back(*it);
    }
    std::string out;
    for (const auto& c : done) { out += '/'; out += c; }
    if (out.empty()) out = "/";
    return out;
  }

  std::string root_;
  mutable HostFsStats stats_;
};

}  // namespace

std::unique_ptr<HostFs> NewLocalHostFs(std::string root) {
  return std::make_unique<LocalHostFs>(std::move(root));
}

}  // namespace provisioner
