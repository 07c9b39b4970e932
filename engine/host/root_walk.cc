#include "engine/host/root_walk.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <utility>

namespace provisioner {

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

StatusOr<std::string> WalkBeneathRoot(const std::string& root, std::string_view path,
                                      bool follow_last, const std::function<void()>& on_step) {
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
        return ErrnoToStatus(EXDEV,
                             "resolve " + std::string(path) + ": '..' leaves the root " + root);
      }
      done.pop_back();
      continue;
    }
    done.push_back(comp);
    bool last = todo.empty();
    if (last && !follow_last) break;
    std::string fs = root == "/" ? "" : root;
    for (const auto& c : done) {
      fs += '/';
      fs += c;
    }
    struct stat st;
    if (on_step) on_step();
    if (::lstat(fs.c_str(), &st) != 0) {
      // Keep the rest literally: the eventual open() reports ENOENT.
      while (!todo.empty()) {
        done.push_back(std::move(todo.back()));
        todo.pop_back();
      }
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
  for (const auto& c : done) {
    out += '/';
    out += c;
  }
  if (out.empty()) out = "/";
  return out;
}

}  // namespace provisioner
