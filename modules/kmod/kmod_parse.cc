#include "modules/kmod/kmod_parse.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "engine/base/strings.h"

namespace provisioner {
namespace {

bool ParseInt(const std::string& s, long long* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (end == nullptr || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

}  // namespace

StatusOr<std::vector<LoadedModule>> ParseProcModules(std::string_view text) {
  std::vector<LoadedModule> out;
  std::vector<std::string> lines = SplitLines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    std::vector<std::string> f = SplitWhitespace(lines[n]);
    if (f.empty()) continue;
    long long size = 0;
    long long ref = 0;
    // name size refcount used_by state [address]; refcount is "-" for a
    // module without unload support.
    if (f.size() < 5 || !ParseInt(f[1], &size) || (!ParseInt(f[2], &ref) && f[2] != "-")) {
      return InvalidArgumentError("line " + std::to_string(n + 1) +
                                  ": expected \"name size refcount used_by state address\", got " +
                                  Quote(lines[n]));
    }
    LoadedModule m;
    m.name = f[0];
    m.size = size;
    m.refcount = static_cast<int>(ref);
    if (f[3] != "-") {
      std::string_view users = f[3];
      size_t i = 0;
      while (i < users.size()) {
        size_t j = users.find(',', i);
        if (j == std::string_view::npos) j = users.size();
        if (j > i) m.used_by.emplace_back(users.substr(i, j - i));
        i = j + 1;
      }
    }
    m.state = f[4];
    out.push_back(std::move(m));
  }
  return out;
}

std::string RenderProcModules(const std::vector<LoadedModule>& modules) {
  std::string out;
  for (const LoadedModule& m : modules) {
    out += m.name + " " + std::to_string(m.size) + " " + std::to_string(m.refcount) + " ";
    if (m.used_by.empty()) {
      out += "-";
    } else {
      for (const auto& u : m.used_by) out += u + ",";
    }
    out += " " + (m.state.empty() ? std::string("Live") : m.state) + " 0x0000000000000000\n";
  }
  return out;
}

std::string ModuleNameOfPath(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash != std::string_view::npos) path.remove_prefix(slash + 1);
  size_t ko = path.find(".ko");
  if (ko != std::string_view::npos) path = path.substr(0, ko);
  return NormalizeModuleName(std::string(path));
}

StatusOr<std::map<std::string, std::vector<std::string>>> ParseModulesDep(std::string_view text) {
  std::map<std::string, std::vector<std::string>> out;
  std::vector<std::string> lines = SplitLines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    if (SplitWhitespace(line).empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return InvalidArgumentError("line " + std::to_string(n + 1) +
                                  ": expected \"module.ko: deps\", got " + Quote(line));
    }
    std::vector<std::string> deps;
    for (const std::string& d : SplitWhitespace(line.substr(colon + 1)))
      deps.push_back(ModuleNameOfPath(d));
    out[ModuleNameOfPath(line.substr(0, colon))] = std::move(deps);
  }
  return out;
}

std::vector<std::string> ParseModulesLoad(std::string_view text) {
  std::vector<std::string> out;
  for (const std::string& line : SplitLines(text)) {
    std::vector<std::string> f = SplitWhitespace(line);
    if (f.empty() || f[0][0] == '#' || f[0][0] == ';') continue;
    out.push_back(f[0]);
  }
  return out;
}

std::string RenderModulesLoad(const std::vector<std::string>& modules) {
  std::string out = "# Written by provisioner from host.yaml spec.kernelModules; do not edit.\n";
  for (const auto& m : modules) out += m + "\n";
  return out;
}

namespace {

// shared/util.c underscores(): '-' -> '_' except inside [...]; false for a
// missing name, a ']' outside brackets or an unclosed '['.
bool Underscores(std::string* s) {
  for (size_t i = 0; i < s->size(); ++i) {
    char c = (*s)[i];
    if (c == '-') {
      (*s)[i] = '_';
    } else if (c == ']') {
      return false;
    } else if (c == '[') {
      i = s->find(']', i);
      if (i == std::string::npos) return false;
    }
  }
  return true;
}

// strtok_r over `line` from `*pos` with the delimiters " \t": the next
// token, or nullopt; `*pos` moves past the one delimiter that ends it.
bool NextToken(const std::string& line, size_t* pos, std::string* token) {
  size_t i = *pos;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i >= line.size()) {
    *pos = line.size();
    return false;
  }
  size_t j = i;
  while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
  *token = line.substr(i, j - i);
  *pos = j < line.size() ? j + 1 : j;
  return true;
}

// strtok_r with no delimiters: the rest of the line, unless empty.
bool Rest(const std::string& line, size_t* pos, std::string* rest) {
  if (*pos >= line.size()) return false;
  *rest = line.substr(*pos);
  *pos = line.size();
  return true;
}

bool IsCSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// kmod_config_add_softdep's tokenizer and softdep_to_char's rendering, quirks
// included: the pre and post lists are the spans of one buffer of all the
// words in order (a post word between two pre words shows in both), printed
// "pre: <span>" then "post: <span>" with no space between.
std::string SoftdepValue(const std::string& line) {
  struct Word {
    std::string text;
    int mode;  // 1 pre, 2 post
  };
  std::vector<Word> words;
  int mode = 0;
  bool was_space = false;
  size_t p = 0;
  for (size_t s = 0;; ++s) {
    const bool end = s >= line.size();
    if (!end) {
      if (!IsCSpace(line[s])) {
        was_space = false;
        continue;
      }
      if (was_space) {
        p = s + 1;
        continue;
      }
      was_space = true;
      if (p >= s) continue;
    }
    const size_t plen = s > p ? s - p : 0;
    const std::string w = line.substr(std::min(p, line.size()), plen);
    if (w == "pre:") {
      mode = 1;
    } else if (w == "post:") {
      mode = 2;
    } else if (!end || !was_space) {
      if (mode != 0) words.push_back({w, mode});
    }
    p = s + 1;
    if (end) break;
  }
  // The buffer: the words joined by '\0', here by ' ' (as softdep_to_char
  // turns each '\0' inside a span into a space).
  auto span = [&](int m) {
    size_t first = words.size(), last = 0;
    for (size_t i = 0; i < words.size(); ++i) {
      if (words[i].mode != m) continue;
      if (first == words.size()) first = i;
      last = i;
    }
    if (first == words.size()) return std::string();
    std::string out;
    for (size_t i = first; i <= last; ++i) {
      if (i > first) out += ' ';
      out += words[i].text;
    }
    return out;
  };
  std::string out;
  const std::string pre = span(1), post = span(2);
  bool any_pre = false, any_post = false;
  for (const Word& w : words) {
    any_pre = any_pre || w.mode == 1;
    any_post = any_post || w.mode == 2;
  }
  // An empty span (one empty word) prints nothing, as sz_pre == 0 does.
  if (any_pre && !pre.empty()) out += "pre: " + pre;
  if (any_post && !post.empty()) out += "post: " + post;
  return out;
}

}  // namespace

void ParseModprobeConf(std::string_view text, ModprobeConf* conf) {
  // freadline_wrapped: '\n' ends a line; "\\\n" joins; '\\' + another
  // character keeps only that character.
  std::vector<std::string> lines;
  std::string cur;
  bool any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    any = true;
    if (c == '\n') {
      lines.push_back(std::move(cur));
      cur.clear();
      any = false;
      continue;
    }
    if (c == '\\') {
      if (i + 1 < text.size() && text[i + 1] == '\n') {
        ++i;
        continue;
      }
      if (i + 1 >= text.size()) {
        cur += static_cast<char>(EOF);  // getc's EOF stored, as libkmod does
        continue;
      }
      cur += text[++i];
      continue;
    }
    cur += c;
  }
  if (any) lines.push_back(std::move(cur));
  for (std::string& line : lines) {
    // A C string: a NUL byte ends the line.
    if (const size_t nul = line.find('\0'); nul != std::string::npos) line.resize(nul);
    if (line.empty() || line[0] == '#') continue;
    size_t pos = 0;
    std::string cmd, a, b;
    if (!NextToken(line, &pos, &cmd)) continue;
    if (cmd == "alias") {
      if (!NextToken(line, &pos, &a) || !NextToken(line, &pos, &b)) continue;
      if (!Underscores(&a) || !Underscores(&b)) continue;
      conf->aliases.push_back({a, b});
    } else if (cmd == "blacklist") {
      if (!NextToken(line, &pos, &a) || !Underscores(&a)) continue;
      conf->blacklist.push_back(a);
    } else if (cmd == "options" || cmd == "install" || cmd == "remove" || cmd == "softdep") {
      if (!NextToken(line, &pos, &a)) continue;
      const bool name_ok = Underscores(&a);
      if (!Rest(line, &pos, &b) || !name_ok) continue;
      if (cmd == "options") {
        for (char& ch : b) {
          if (ch == '\t') ch = ' ';
        }
        conf->options.push_back({a, b});
      } else if (cmd == "install") {
        conf->install.push_back({a, b});
      } else if (cmd == "remove") {
        conf->remove.push_back({a, b});
      } else {
        conf->softdeps.push_back({a, SoftdepValue(b)});
      }
    }
    // include, config (deprecated, not parsed) and anything else: ignored.
  }
}

}  // namespace provisioner
