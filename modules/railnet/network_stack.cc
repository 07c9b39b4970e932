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
    }
    if (any) facts.network_stacks.push_back(s.name);
  }
  // The unmanaged-devices drop-in of spec.network.owner: provisioner.
  if (auto text = fs.ReadFile(kNmUnmanagedFile); text.ok() && WrittenByProvisioner(*text)) {
    facts.persist_files[kNmUnmanagedFile] = *text;
  }
}

}  // namespace provisioner
