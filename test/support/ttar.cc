#include "test/support/ttar.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
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

Status MakeDirs(const std::string& path) {
  if (path.empty()) return OkStatus();
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return OkStatus();
    return ErrnoToStatus(ENOTDIR, "mkdir " + path);
  }
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) RETURN_IF_ERROR(MakeDirs(path.substr(0, slash)));
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoToStatus(errno, "mkdir " + path);
  }
  return OkStatus();
}

bool StartsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.compare(0, p.size(), p) == 0;
}

// Splits "a/b/c" into components; refuses absolute paths and "..".
StatusOr<std::vector<std::string>> ArchivePathComponents(std::string_view path) {
  if (path.empty() || path[0] == '/') {
    return InvalidArgumentError("ttar: absolute or empty path '" + std::string(path) + "'");
  }
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    std::string_view c = path.substr(i, j - i);
    if (c == "..") return InvalidArgumentError("ttar: '..' in path '" + std::string(path) + "'");
    if (!c.empty() && c != ".") out.emplace_back(c);
    i = j + 1;
  }
  return out;
}

// Decodes one content line the way ttar's extract does. Sets *newline to false
// when the line carries the end-of-file marker (an "EOF" not preceded by '\').
std::string DecodeLine(std::string_view line, bool* newline) {
  *newline = true;
  for (size_t p = line.find("EOF", 1); p != std::string_view::npos; p = line.find("EOF", p + 1)) {
    if (line[p - 1] != '\\') {
      *newline = false;
      break;
    }
  }
  std::string out;
  out.reserve(line.size());
  size_t i = 0;
  while (i < line.size()) {
    std::string_view rest = line.substr(i);
    if (StartsWith(rest, "\\NULLBYTE")) {
      out += "NULLBYTE";
      i += 9;
    } else if (StartsWith(rest, "\\EOF")) {
      out += "EOF";
      i += 4;
    } else if (StartsWith(rest, "NULLBYTE")) {
      out += '\0';
      i += 8;
    } else if (i > 0 && StartsWith(rest, "EOF")) {
      i += 3;  // end-of-file marker
    } else {
      out += line[i++];
    }
  }
  return out;
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

Status RemoveExisting(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return OkStatus();
  if (S_ISDIR(st.st_mode)) {
    if (::rmdir(path.c_str()) != 0) return ErrnoToStatus(errno, "ttar: replace directory " + path);
  } else if (::unlink(path.c_str()) != 0) {
    return ErrnoToStatus(errno, "ttar: replace " + path);
  }
  return OkStatus();
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

Status ExtractTtar(const std::string& ttar_path, const std::string& dest_dir, int strip) {
  ASSIGN_OR_RETURN(std::string text, ReadWholeFile(ttar_path));
  RETURN_IF_ERROR(MakeDirs(dest_dir));
  std::vector<std::string_view> lines;
  {
    std::string_view all(text);
    size_t i = 0;
    while (i < all.size()) {
      size_t nl = all.find('\n', i);
      if (nl == std::string_view::npos) nl = all.size();
      lines.push_back(all.substr(i, nl - i));
      i = nl + 1;
    }
  }
  std::vector<std::pair<std::string, mode_t>> dir_modes;  // applied at the end
  std::string path;        // filesystem path of the current entry ("" = skipped)
  bool have_path = false;  // a Path:/Directory: line was seen
  bool is_dir = false;
  auto where = [&](size_t n) { return ttar_path + ":" + std::to_string(n + 1) + ": "; };
  auto target_of = [&](std::string_view archive_path, size_t n) -> StatusOr<std::string> {
    auto comps = ArchivePathComponents(archive_path);
    if (!comps.ok()) return comps.status().WithContext(where(n));
    if (static_cast<int>(comps->size()) <= strip) return std::string();
    std::string fs = dest_dir;
    for (size_t k = static_cast<size_t>(strip); k < comps->size(); ++k) fs += "/" + (*comps)[k];
    return fs;
  };
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    if (line.empty() || line[0] == '#') continue;
    if (StartsWith(line, "Path: ")) {
      ASSIGN_OR_RETURN(path, target_of(line.substr(6), n));
      have_path = true;
      is_dir = false;
      if (!path.empty()) {
        RETURN_IF_ERROR(RemoveExisting(path));
        RETURN_IF_ERROR(MakeDirs(path.substr(0, path.find_last_of('/'))));
      }
    } else if (StartsWith(line, "Directory: ")) {
      ASSIGN_OR_RETURN(path, target_of(line.substr(11), n));
      have_path = true;
      is_dir = true;
      if (!path.empty()) RETURN_IF_ERROR(MakeDirs(path));
    } else if (StartsWith(line, "Lines: ")) {
      if (!have_path || is_dir) return InvalidArgumentError(where(n) + "Lines: without Path:");
      char* end = nullptr;
      std::string num(line.substr(7));
      long count = std::strtol(num.c_str(), &end, 10);
      if (num.empty() || *end != '\0' || count < 0) {
        return InvalidArgumentError(where(n) + "bad line count '" + num + "'");
      }
      if (n + static_cast<size_t>(count) >= lines.size()) {
        return InvalidArgumentError(where(n) + "archive ends inside " + std::string(line));
      }
      std::string content;
      for (long k = 0; k < count; ++k) {
        bool newline = true;
        content += DecodeLine(lines[n + 1 + static_cast<size_t>(k)], &newline);
        if (newline) content += '\n';
      }
      n += static_cast<size_t>(count);
      if (!path.empty()) RETURN_IF_ERROR(WriteWholeFile(path, content, 0644));
    } else if (StartsWith(line, "SymlinkTo: ")) {
      if (!have_path || is_dir) return InvalidArgumentError(where(n) + "SymlinkTo: without Path:");
      if (!path.empty() && ::symlink(std::string(line.substr(11)).c_str(), path.c_str()) != 0) {
        return ErrnoToStatus(errno, where(n) + "symlink " + path);
      }
    } else if (StartsWith(line, "Mode: ")) {
      if (!have_path) return InvalidArgumentError(where(n) + "Mode: without Path:");
      std::string num(line.substr(6));
      char* end = nullptr;
      long mode = std::strtol(num.c_str(), &end, 8);
      if (num.empty() || *end != '\0' || mode < 0 || mode > 07777) {
        return InvalidArgumentError(where(n) + "bad mode '" + num + "'");
      }
      if (path.empty()) continue;
      if (is_dir) {
        dir_modes.emplace_back(path, static_cast<mode_t>(mode));
      } else if (::chmod(path.c_str(), static_cast<mode_t>(mode)) != 0) {
        return ErrnoToStatus(errno, where(n) + "chmod " + path);
      }
    } else {
      return InvalidArgumentError(where(n) + "unknown keyword: " + std::string(line.substr(0, 80)));
    }
  }
  // Deepest first, so a read-only parent does not block its children's chmod.
  for (auto it = dir_modes.rbegin(); it != dir_modes.rend(); ++it) {
    if (::chmod(it->first.c_str(), it->second) != 0) {
      return ErrnoToStatus(errno, "ttar: chmod " + it->first);
    }
  }
  return OkStatus();
}

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

std::string MakeTempDir(const std::string& prefix) {
  const char* base = std::getenv("TEST_TMPDIR");
  if (base == nullptr || *base == '\0') base = std::getenv("TMPDIR");
  if (base == nullptr || *base == '\0') base = "/tmp";
  std::string tmpl = std::string(base) + "/" + prefix + ".XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) return "";
  return std::string(buf.data());
}

}  // namespace provisioner::testing
