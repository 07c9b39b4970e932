#include "modules/kmod/kmod_parse.h"

#include <cstdlib>
#include <sstream>

#include "engine/base/strings.h"

namespace provisioner {
namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    out.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

std::vector<std::string> Fields(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) out.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

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
  std::vector<std::string_view> lines = Lines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    std::vector<std::string> f = Fields(lines[n]);
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
  std::vector<std::string_view> lines = Lines(text);
  for (size_t n = 0; n < lines.size(); ++n) {
    std::string_view line = lines[n];
    if (Fields(line).empty() || line[0] == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return InvalidArgumentError("line " + std::to_string(n + 1) + ": expected \"module.ko: deps\", got " +
                                  Quote(line));
    }
    std::vector<std::string> deps;
    for (const std::string& d : Fields(line.substr(colon + 1))) deps.push_back(ModuleNameOfPath(d));
    out[ModuleNameOfPath(line.substr(0, colon))] = std::move(deps);
  }
  return out;
}

std::vector<std::string> ParseModulesLoad(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string> f = Fields(line);
    if (f.empty() || f[0][0] == '#' || f[0][0] == ';') continue;
    out.push_back(f[0]);
  }
  return out;
}

std::string RenderModulesLoad(const std::vector<std::string>& modules) {
  std::string out =
      "# Written by provisioner from host.yaml spec.kernelModules; do not edit.\n";
  for (const auto& m : modules) out += m + "\n";
  return out;
}

}  // namespace provisioner
