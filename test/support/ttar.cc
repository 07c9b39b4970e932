#include "test/support/ttar.h"

#include <dirent.h>
#include <sys/types.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/fd_io.h"

namespace provisioner::testing {
namespace {

constexpr std::string_view kSeparator =
    "# ttar - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -";

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "open " + path);
  std::string out;
  if (int e = ReadAll(fd, &out); e != 0) {
    ::close(fd);
    return ErrnoToStatus(e, "read " + path);
  }
  ::close(fd);
  return out;
}

Status WriteWholeFile(const std::string& path, std::string_view content, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return ErrnoToStatus(errno, "create " + path);
  if (int e = WriteAll(fd, content); e != 0) {
    ::close(fd);
    return ErrnoToStatus(e, "write " + path);
  }
  if (::close(fd) != 0) return ErrnoToStatus(errno, "close " + path);
  return OkStatus();
}

bool StartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

std::string EncodeContent(std::string_view content, int* lines) {
  std::string out;
  out.reserve(content.size() + 16);
  *lines = 0;
  size_t i = 0;
  while (i < content.size()) {
    size_t nl = content.find('\n', i);
    bool has_nl = nl != std::string_view::npos;
    std::string_view line = content.substr(i, has_nl ? nl - i : std::string_view::npos);
    for (size_t k = 0; k < line.size(); ++k) {
      std::string_view rest = line.substr(k);
      if (StartsWith(rest, "EOF")) {
        out += "\\EOF";
        k += 2;
      } else if (StartsWith(rest, "NULLBYTE")) {
        out += "\\NULLBYTE";
        k += 7;
      } else if (line[k] == '\0') {
        out += "NULLBYTE";
      } else {
        out += line[k];
      }
    }
    if (!has_nl) out += "EOF";
    out += '\n';
    ++*lines;
    i = has_nl ? nl + 1 : content.size();
  }
  return out;
}

std::string ModeString(mode_t mode) {
  char buf[16];
  snprintf(buf, sizeof buf, "%o", static_cast<unsigned>(mode & 07777));
  return buf;
}

Status AppendTree(const std::string& base, const std::string& rel, std::string* out) {
  std::string dir = rel.empty() ? base : base + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return ErrnoToStatus(errno, "ttar: list " + dir);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    if (n == "." || n == "..") continue;
    names.emplace_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    std::string rpath = rel.empty() ? name : rel + "/" + name;
    std::string fs = base + "/" + rpath;
    struct stat st;
    if (::lstat(fs.c_str(), &st) != 0) return ErrnoToStatus(errno, "ttar: stat " + fs);
    if (S_ISLNK(st.st_mode)) {
      char buf[PATH_MAX];
      ssize_t n = ::readlink(fs.c_str(), buf, sizeof buf - 1);
      if (n < 0) return ErrnoToStatus(errno, "ttar: readlink " + fs);
      *out += "Path: " + rpath + "\nSymlinkTo: ";
      out->append(buf, static_cast<size_t>(n));
      *out += "\n";
    } else if (S_ISDIR(st.st_mode)) {
      *out += "Directory: " + rpath + "\nMode: " + ModeString(st.st_mode) + "\n";
      *out += kSeparator;
      *out += "\n";
      RETURN_IF_ERROR(AppendTree(base, rpath, out));
      continue;
    } else if (S_ISREG(st.st_mode)) {
      ASSIGN_OR_RETURN(std::string content, ReadWholeFile(fs));
      int lines = 0;
      std::string enc = EncodeContent(content, &lines);
      *out += "Path: " + rpath + "\nLines: " + std::to_string(lines) + "\n";
      *out += enc;
      *out += "Mode: " + ModeString(st.st_mode) + "\n";
    } else {
      return InvalidArgumentError("ttar: not a file, directory or symlink: " + fs);
    }
    *out += kSeparator;
    *out += "\n";
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::string> TreeToTtar(const std::string& src_dir) {
  std::string out;
  struct stat st;
  if (::stat(src_dir.c_str(), &st) != 0) return ErrnoToStatus(errno, "ttar: " + src_dir);
  if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, "ttar: " + src_dir);
  std::string base = src_dir;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  RETURN_IF_ERROR(AppendTree(base, "", &out));
  return out;
}

Status WriteTtar(const std::string& src_dir, const std::string& ttar_path) {
  ASSIGN_OR_RETURN(std::string text, TreeToTtar(src_dir));
  return WriteWholeFile(ttar_path, text, 0644);
}

std::string RunfilePath(const std::string& rel) {
  for (const char* var : {"TEST_SRCDIR", "RUNFILES_DIR"}) {
    const char* dir = std::getenv(var);
    if (dir != nullptr && *dir != '\0') return std::string(dir) + "/provisioner/" + rel;
  }
  return rel;
}

std::string HostTreePath(const std::string& name) {
  std::string path = RunfilePath("test/hosts/" + name + ".ttar");
  if (::access(path.c_str(), F_OK) == 0) return path;
  return RunfilePath("examples/hosts/" + name + ".ttar");
}

namespace {

// The directories MakeTempDir made, removed when the process that made them
// exits normally: a test's trees (thousands of files each, 140 trees in one
// fault-matrix shard) would otherwise stay in its TEST_TMPDIR, which CI keeps
// in RAM (scripts/test.sh), until the whole run ends. A forked child that
// exits does not remove its parent's. PROVISIONER_KEEP_TEST_DIRS=1 keeps them
// to look at.
class TempDirsRemovedAtExit {
 public:
  void Add(const std::string& dir) {
    std::lock_guard<std::mutex> lock(mu_);
    dirs_.push_back(dir);
  }
  ~TempDirsRemovedAtExit() {
    const char* keep = std::getenv("PROVISIONER_KEEP_TEST_DIRS");
    if (getpid() != owner_ || (keep != nullptr && *keep != '\0' && *keep != '0')) return;
    for (const auto& dir : dirs_) {
      std::error_code ec;
      std::filesystem::remove_all(dir, ec);
    }
  }

 private:
  std::mutex mu_;
  std::vector<std::string> dirs_;
  const pid_t owner_ = getpid();
};

TempDirsRemovedAtExit& MadeTempDirs() {
  static TempDirsRemovedAtExit dirs;  // destroyed at exit, after main returns
  return dirs;
}

}  // namespace

std::string MakeTempDir(const std::string& prefix) {
  const char* base = std::getenv("TEST_TMPDIR");
  if (base == nullptr || *base == '\0') base = std::getenv("TMPDIR");
  if (base == nullptr || *base == '\0') base = "/tmp";
  std::string tmpl = std::string(base) + "/" + prefix + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) return "";
  MadeTempDirs().Add(buf.data());
  return std::string(buf.data());
}

}  // namespace provisioner::testing
