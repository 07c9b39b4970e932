#include "engine/host/host_fs.h"

#include <sys/random.h>
#include <unistd.h>

#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/fd_io.h"

namespace provisioner {

std::vector<std::string> ListDirIfPresent(const HostFs& fs, const std::string& path) {
  if (!fs.IsDir(path)) return {};
  auto list = fs.ListDir(path);
  return list.ok() ? std::move(*list) : std::vector<std::string>{};
}

std::string LinkBasenameIfPresent(const HostFs& fs, const std::string& path) {
  if (!fs.IsSymlink(path)) return "";
  auto base = fs.LinkBasename(path);
  return base.ok() ? std::move(*base) : std::string();
}

std::vector<std::string> RegisteredNetdevs(const HostFs& fs, const std::string& device_dir) {
  std::vector<std::string> out;
  for (std::string& name : ListDirIfPresent(fs, JoinPath(device_dir, "net"))) {
    if (fs.Exists("/sys/class/net/" + name)) out.push_back(std::move(name));
  }
  return out;
}

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

StatusOr<HostFs::FileOwnership> HostFs::StatFile(std::string_view path) const {
  return ErrnoToStatus(ENOTSUP, "stat " + std::string(path) + ": not on this host layer");
}

Status HostFs::SetOwner(std::string_view path, uint32_t, uint32_t) {
  return ErrnoToStatus(ENOTSUP, "chown " + std::string(path) + ": not on this host layer");
}

Status HostFs::MakeDir(std::string_view path) {
  return UnimplementedError("mkdir " + std::string(path) + ": not supported by this host layer");
}

Status HostFs::RemoveDir(std::string_view path) {
  return UnimplementedError("rmdir " + std::string(path) + ": not supported by this host layer");
}

StatusOr<std::string> HostFs::ReadAttr(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string s, ReadFile(path));
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\0')) {
    s.pop_back();
  }
  return s;
}

std::vector<StatusOr<std::string>> HostFs::ReadFilesIn(
    std::string_view dir, const std::vector<std::string>& names) const {
  std::vector<StatusOr<std::string>> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back(ReadFile(JoinPath(dir, n)));
  return out;
}

std::vector<StatusOr<std::string>> HostFs::ReadSmallFilesIn(
    std::string_view dir, const std::vector<std::string>& names, size_t max_bytes) const {
  std::vector<StatusOr<std::string>> out = ReadFilesIn(dir, names);
  for (auto& file : out) {
    if (file.ok() && file->size() > max_bytes) file->resize(max_bytes);
  }
  return out;
}

StatusOr<std::string> HostFs::LinkBasename(std::string_view path) const {
  ASSIGN_OR_RETURN(std::string target, ReadLink(path));
  return std::string(Basename(target));
}

// 16 hex digits from the kernel's random source: the name of a temporary
// file nobody can guess (the pid could be: `sh -c '...; exec provisioner'`).
std::string RandomFileSuffix() {
  unsigned char bytes[8] = {};
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    // No getrandom: the clock and the address of a local, still behind O_EXCL.
    uint64_t v = static_cast<uint64_t>(::clock()) ^ reinterpret_cast<uintptr_t>(&bytes) ^
                 static_cast<uint64_t>(::getpid()) << 32;
    std::memcpy(bytes, &v, sizeof bytes);
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}
}  // namespace provisioner
