#include "engine/base/ttar_extract.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/base/fd_io.h"

namespace provisioner {
namespace {

StatusOr<std::string> ReadArchive(const std::string& path) {
  std::string out;
  const char* kind = nullptr;
  const int e = ReadRegularFile(path, kMaxTtarBytes, &out, &kind);
  if (e == -1)
    return InvalidArgumentError("ttar: " + path + " is " + kind + ", not a regular file");
  if (e == EFBIG) {
    return ErrnoToStatus(EFBIG, "ttar: read " + path + ": larger than " +
                                    std::to_string(kMaxTtarBytes >> 20) + " MiB");
  }
  if (e != 0) return ErrnoToStatus(e, "ttar: read " + path);
  return out;
}

// Creates `path` (a file the archive names) for writing; O_NOFOLLOW|O_EXCL:
// never through a link.
Status WriteNewFile(const std::string& path, std::string_view content) {
  const char* step = "";
  if (int e = WriteFile(path, O_EXCL | O_NOFOLLOW, content, &step); e != 0) {
    return ErrnoToStatus(e, std::string(step) + " " + path);
  }
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

// The directories from dest_dir down to `path`'s parent: created when
// missing, refused when one is a symlink (an archive that makes "sys/x ->
// /etc" and then writes "sys/x/passwd" must not reach /etc).
Status MakeParentsNoLinks(const std::string& dest_dir, const std::string& path) {
  const size_t last = path.find_last_of('/');
  if (last == std::string::npos || last <= dest_dir.size()) return OkStatus();
  size_t i = dest_dir.size() + 1;
  while (i <= last) {
    size_t j = path.find('/', i);
    if (j == std::string::npos || j > last) j = last;
    const std::string dir = path.substr(0, j);
    struct stat st;
    if (::lstat(dir.c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) return ErrnoToStatus(ELOOP, "ttar: path through the symlink " + dir);
      if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, "mkdir " + dir);
    } else if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoToStatus(errno, "mkdir " + dir);
    }
    i = j + 1;
  }
  return OkStatus();
}

// chmod, refused on a symlink (chmod would follow it out of the tree).
Status ChmodNoFollow(const std::string& path, mode_t mode) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return ErrnoToStatus(errno, "ttar: chmod " + path);
  if (S_ISLNK(st.st_mode)) return ErrnoToStatus(ELOOP, "ttar: chmod of the symlink " + path);
  if (::chmod(path.c_str(), mode) != 0) return ErrnoToStatus(errno, "ttar: chmod " + path);
  return OkStatus();
}

}  // namespace

Status ExtractTtar(const std::string& ttar_path, const std::string& dest_dir, int strip) {
  ASSIGN_OR_RETURN(std::string text, ReadArchive(ttar_path));
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
  auto at = [&](size_t n, const Status& s) {
    return s.ok() ? s : Status(s.code(), where(n) + s.message(), s.err());
  };
  auto target_of = [&](std::string_view archive_path, size_t n) -> StatusOr<std::string> {
    auto comps = ArchivePathComponents(archive_path);
    if (!comps.ok()) return at(n, comps.status());
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
        RETURN_IF_ERROR(at(n, MakeParentsNoLinks(dest_dir, path)));
        RETURN_IF_ERROR(RemoveExisting(path));
      }
    } else if (StartsWith(line, "Directory: ")) {
      ASSIGN_OR_RETURN(path, target_of(line.substr(11), n));
      have_path = true;
      is_dir = true;
      if (!path.empty()) {
        RETURN_IF_ERROR(at(n, MakeParentsNoLinks(dest_dir, path + "/")));
      }
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
      if (!path.empty()) RETURN_IF_ERROR(at(n, WriteNewFile(path, content)));
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
      } else {
        RETURN_IF_ERROR(at(n, ChmodNoFollow(path, static_cast<mode_t>(mode))));
      }
    } else {
      return InvalidArgumentError(where(n) + "unknown keyword: " + std::string(line.substr(0, 80)));
    }
  }
  // Deepest first, so a read-only parent does not block its children's chmod.
  for (auto it = dir_modes.rbegin(); it != dir_modes.rend(); ++it) {
    RETURN_IF_ERROR(ChmodNoFollow(it->first, it->second));
  }
  return OkStatus();
}

}  // namespace provisioner
