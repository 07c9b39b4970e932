#include "test/support/tree_diff.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace provisioner::testing {
namespace {

struct Entry {
  char type = '?';  // 'f' file, 'd' directory, 'l' symlink, 'o' other
  unsigned mode = 0;
  std::string data;  // file bytes or link target
};

bool Ignored(const std::string& rel, const TreeDiffOptions& o) {
  for (const auto& p : o.ignore) {
    if (rel == p ||
        (rel.size() > p.size() && rel.compare(0, p.size(), p) == 0 && rel[p.size()] == '/')) {
      return true;
    }
  }
  return false;
}

void Walk(const std::string& base, const std::string& rel, const TreeDiffOptions& o,
          std::map<std::string, Entry>* out) {
  std::string dir = rel.empty() ? base : base + "/" + rel;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string_view n(e->d_name);
    if (n != "." && n != "..") names.emplace_back(n);
  }
  ::closedir(d);
  for (const auto& name : names) {
    std::string r = rel.empty() ? name : rel + "/" + name;
    if (Ignored(r, o)) continue;
    std::string fs = base + "/" + r;
    struct stat st;
    if (::lstat(fs.c_str(), &st) != 0) continue;
    Entry e;
    e.mode = st.st_mode & 07777;
    if (S_ISLNK(st.st_mode)) {
      e.type = 'l';
      char buf[PATH_MAX];
      ssize_t n = ::readlink(fs.c_str(), buf, sizeof buf - 1);
      if (n > 0) e.data.assign(buf, static_cast<size_t>(n));
      e.mode = 0;
    } else if (S_ISDIR(st.st_mode)) {
      e.type = 'd';
    } else if (S_ISREG(st.st_mode)) {
      e.type = 'f';
      std::ifstream in(fs, std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      e.data = ss.str();
    } else {
      e.type = 'o';
    }
    (*out)[r] = std::move(e);
    if (S_ISDIR(st.st_mode)) Walk(base, r, o, out);
  }
}

const char* TypeName(char t) {
  switch (t) {
    case 'f':
      return "file";
    case 'd':
      return "directory";
    case 'l':
      return "symlink";
    default:
      return "other";
  }
}

std::string Quote(const std::string& s) {
  std::string out = "\"";
  size_t limit = 60;
  for (size_t i = 0; i < s.size() && i < limit; ++i) {
    char c = s[i];
    if (c == '\n') {
      out += "\\n";
    } else if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  if (s.size() > limit) out += "...";
  return out + "\"";
}

}  // namespace

std::vector<std::string> DiffTrees(const std::string& a, const std::string& b,
                                   const TreeDiffOptions& options) {
  std::map<std::string, Entry> ea, eb;
  Walk(a, "", options, &ea);
  Walk(b, "", options, &eb);
  std::vector<std::string> out;
  auto ia = ea.begin();
  auto ib = eb.begin();
  while (ia != ea.end() || ib != eb.end()) {
    if (ib == eb.end() || (ia != ea.end() && ia->first < ib->first)) {
      out.push_back("only in a: " + ia->first);
      ++ia;
      continue;
    }
    if (ia == ea.end() || ib->first < ia->first) {
      out.push_back("only in b: " + ib->first);
      ++ib;
      continue;
    }
    const std::string& p = ia->first;
    const Entry& x = ia->second;
    const Entry& y = ib->second;
    if (x.type != y.type) {
      out.push_back("type differs: " + p + " (" + TypeName(x.type) + " vs " + TypeName(y.type) +
                    ")");
    } else if (x.type == 'f' && x.data != y.data) {
      out.push_back("content differs: " + p + ": " + Quote(x.data) + " vs " + Quote(y.data));
    } else if (x.type == 'l' && x.data != y.data) {
      out.push_back("link differs: " + p + ": " + x.data + " vs " + y.data);
    } else if (options.compare_modes && x.mode != y.mode) {
      char buf[64];
      snprintf(buf, sizeof buf, ": %o vs %o", x.mode, y.mode);
      out.push_back("mode differs: " + p + buf);
    }
    ++ia;
    ++ib;
  }
  return out;
}

std::string DiffTreesText(const std::string& a, const std::string& b,
                          const TreeDiffOptions& options, size_t max_lines) {
  std::vector<std::string> d = DiffTrees(a, b, options);
  std::string out;
  for (size_t i = 0; i < d.size() && i < max_lines; ++i) out += d[i] + "\n";
  if (d.size() > max_lines) out += "... " + std::to_string(d.size() - max_lines) + " more\n";
  return out;
}

}  // namespace provisioner::testing
