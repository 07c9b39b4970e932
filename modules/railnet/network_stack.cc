#include "modules/railnet/network_stack.h"

#include <vector>

#include "engine/module/managed_file.h"
#include "modules/railnet/persist_planner.h"
#include "modules/railnet/persist_render.h"

namespace provisioner {
namespace {

bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == '@';
}

bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

struct Stack {
  const char* name;
  const char* dir;
  const char* suffix;  // "" = every file
};

// A `source /etc/network/interfaces.d/*` or `source-directory
// /etc/network/interfaces.d` line (interfaces(5)) in /etc/network/interfaces.
bool SourcesInterfacesDir(const HostFs& fs) {
  auto text = fs.ReadFile("/etc/network/interfaces");
  if (!text.ok()) return false;
  size_t at = 0;
  while (at < text->size()) {
    size_t end = text->find('\n', at);
    if (end == std::string::npos) end = text->size();
    const std::string line = text->substr(at, end - at);
    at = end + 1;
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, 6, "source") != 0) continue;
    if (line.find("/etc/network/interfaces.d", start) != std::string::npos ||
        line.find(" interfaces.d", start) != std::string::npos) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool NamesWord(const std::string& text, const std::string& word) {
  if (word.empty()) return false;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool left = at == 0 || !NameChar(text[at - 1]);
    const size_t end = at + word.size();
    const bool right = end == text.size() || !NameChar(text[end]) ||
                       (text[end] == '.' && (end + 1 == text.size() || !NameChar(text[end + 1])));
    if (left && right) return true;
  }
  return false;
}

void DetectNetworkStacks(const HostFs& fs, const std::set<std::string>& netdevs,
                         RailnetFacts& facts) {
  static const Stack kStacks[] = {
      {"netplan", "/etc/netplan", ".yaml"},
      {"systemd-networkd", "/etc/systemd/network", ".network"},
      {"NetworkManager", "/etc/NetworkManager/system-connections", ""},
      {"ifupdown", "/etc/network/interfaces.d", ""},
  };
  auto scan = [&](const char* stack, const std::string& path) {
    auto text = fs.ReadFile(path);
    if (!text.ok() || text->size() > (size_t{1} << 20)) return;
    if (IsPersistPath(path) && WrittenByProvisioner(*text)) {
      facts.persist_files[path] = *text;  // ours: never another manager's
      return;
    }
    for (const std::string& n : netdevs) {
      if (!NamesWord(*text, n)) continue;
      facts.foreign_configs[path] = *text;
      if (!facts.configured_by.count(n)) {
        facts.configured_by[n] = std::string(stack) + " (" + path + ")";
      }
    }
  };
  for (const Stack& s : kStacks) {
    auto files = fs.ListDir(s.dir);
    bool any = false;
    if (files.ok()) {
      for (const std::string& f : *files) {
        if (*s.suffix != '\0' && !EndsWith(f, s.suffix)) continue;
        any = true;
        scan(s.name, std::string(s.dir) + "/" + f);
      }
    }
    if (std::string(s.name) == "ifupdown" && fs.Exists("/etc/network/interfaces")) {
      any = true;
      scan(s.name, "/etc/network/interfaces");
      facts.ifupdown_sources_dir = SourcesInterfacesDir(fs);
    }
    if (any) facts.network_stacks.push_back(s.name);
  }
  // The unmanaged-devices drop-in of spec.network.owner: provisioner.
  if (auto text = fs.ReadFile(kNmUnmanagedFile); text.ok() && WrittenByProvisioner(*text)) {
    facts.persist_files[kNmUnmanagedFile] = *text;
  }
}

}  // namespace provisioner
