#include "modules/railnet/persist_planner.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "engine/module/managed_file.h"
#include "modules/railnet/network_stack.h"
#include "modules/railnet/persist_render.h"
#include "modules/railnet/railnet_vf.h"

namespace provisioner {
namespace {

struct StackDir {
  const char* stack;
  const char* dir;  // with the trailing slash
};

constexpr StackDir kStackDirs[] = {
    {"netplan", "/etc/netplan/"},
    {"systemd-networkd", "/etc/systemd/network/"},
    {"NetworkManager", "/etc/NetworkManager/system-connections/"},
    {"NetworkManager", "/etc/NetworkManager/conf.d/"},
    {"ifupdown", "/etc/network/interfaces.d/"},
};

bool StartsWith(const std::string& s, const std::string& head) {
  return s.compare(0, head.size(), head) == 0;
}

struct WantedFile {
  std::string content;
  int mode = 0644;
  std::string reason;
};

// A VF netdev made by this apply has no name yet (railnet_vf.h): it is
// configured live, and again at every boot by provisioner-apply.
bool Persists(const RailWant& w) {
  if (ParseVfRef(w.netdev)) return false;
  return (w.addresses && !w.addresses->empty()) || w.table.has_value();
}

// Every address the rail wants appears in the text of the stack's file.
bool SaysTheSame(const std::string& text, const RailWant& w) {
  if (!w.addresses || w.addresses->empty()) return false;
  return std::all_of(w.addresses->begin(), w.addresses->end(),
                     [&](const std::string& a) { return text.find(a) != std::string::npos; });
}

std::string Basename(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

std::string PersistStack(const RailnetFacts& facts) {
  for (const char* s : {"netplan", "NetworkManager", "systemd-networkd", "ifupdown"}) {
    if (std::find(facts.network_stacks.begin(), facts.network_stacks.end(), s) !=
        facts.network_stacks.end()) {
      return s;
    }
  }
  return "";
}

std::string StackOfPath(const std::string& path) {
  if (path == "/etc/network/interfaces") return "ifupdown";
  for (const StackDir& d : kStackDirs) {
    if (StartsWith(path, d.dir)) return d.stack;
  }
  return "";
}

bool IsPersistPath(const std::string& path) {
  for (const StackDir& d : kStackDirs) {
    if (!StartsWith(path, d.dir)) continue;
    const std::string name = path.substr(std::string(d.dir).size());
    return !name.empty() && name.find('/') == std::string::npos && name[0] != '.' &&
           name.find("provisioner") != std::string::npos;
  }
  return false;
}

void PlanRailPersistence(const DesiredState& desired, const std::vector<RailWant>& rails,
                         const RailnetFacts& now, PlanSink& sink) {
  const bool ours = desired.network && desired.network->owner == kOwnerProvisioner;
  const std::string stack = PersistStack(now);
  const std::string field = ours ? "spec.network.owner" : "spec.nics";
  auto has_stack = [&](const char* s) {
    return std::find(now.network_stacks.begin(), now.network_stacks.end(), s) !=
           now.network_stacks.end();
  };
  // Item 3: a rail another file configures would lose its addresses to it.
  std::set<std::string> said_there;  // lasting names the stack's own file covers
  for (const RailWant& w : rails) {
    if (!w.addresses || w.addresses->empty()) continue;
    for (const auto& [path, text] : now.foreign_configs) {
      if (!NamesWord(text, w.netdev) && !NamesWord(text, w.lasting_name)) continue;
      const std::string file_stack = StackOfPath(path);
      if (ours && file_stack != "ifupdown") continue;  // marked unmanaged below
      if (SaysTheSame(text, w)) {
        said_there.insert(w.lasting_name);
        sink.Warning(w.path, path + " (" + file_stack + ") already gives " + w.netdev +
                                 " the rail's addresses: provisioner writes no file of its own "
                                 "for it; its table and rules persist only if that file has "
                                 "them too");
        continue;
      }
      const std::string fix =
          file_stack == "ifupdown"
              ? "remove the stanza of " + w.netdev + " from " + path +
                    " (ifupdown has no way to leave an interface it has a stanza for)"
              : "set spec.network.owner: provisioner (the rail interfaces become unmanaged in " +
                    file_stack + "), or remove " + w.netdev + " from " + path;
      sink.Error(w.path + ".addresses",
                 w.netdev + " is configured by " + file_stack + " in " + path +
                     ", which would replace the rail's addresses when it reconfigures the "
                     "interface; fix: " +
                     fix);
    }
  }

  std::vector<const RailWant*> persisted;
  std::vector<std::string> names;
  for (const RailWant& w : rails) {
    if (!Persists(w)) continue;
    names.push_back(w.lasting_name);
    if (!said_there.count(w.lasting_name)) persisted.push_back(&w);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());

  std::map<std::string, WantedFile> files;
  if (ours) {
    if (!names.empty() && has_stack("NetworkManager")) {
      files[kNmUnmanagedFile] = {RenderNmUnmanaged(names), 0644,
                                 "spec.network.owner: provisioner: NetworkManager leaves the "
                                 "rail interfaces alone"};
    }
    if (!names.empty() && (has_stack("systemd-networkd") || has_stack("netplan"))) {
      files[kNetworkdUnmanagedFile] = {RenderNetworkdUnmanaged(names), 0644,
                                       "spec.network.owner: provisioner: systemd-networkd "
                                       "leaves the rail interfaces alone"};
    }
  } else if (!persisted.empty()) {
    if (stack == "netplan") {
      files[kNetplanRailsFile] = {RenderNetplanRails(persisted), 0600,
                                  "the rails' addresses, tables and rules at every boot (netplan)"};
    } else if (stack == "systemd-networkd") {
      for (const RailWant* w : persisted) {
        files[NetworkdRailPath(*w)] = {RenderNetworkdRail(*w), 0644,
                                       "nic " + w->nic + " at every boot (systemd-networkd)"};
      }
    } else if (stack == "NetworkManager") {
      for (const RailWant* w : persisted) {
        files[NmRailPath(*w)] = {RenderNmKeyfileRail(*w), 0600,
                                 "nic " + w->nic + " at every boot (NetworkManager)"};
      }
    } else if (stack == "ifupdown") {
      if (!now.ifupdown_sources_dir) {
        sink.Warning("spec.nics", std::string(kIfupdownRailsFile) +
                                      " is read at boot only if /etc/network/interfaces sources "
                                      "it: add `source /etc/network/interfaces.d/*` there "
                                      "(Debian's default has it)");
      }
      files[kIfupdownRailsFile] = {RenderIfupdownRails(persisted), 0644,
                                   "the rails' addresses, tables and rules at every boot "
                                   "(ifupdown)"};
    }
  }

  std::set<std::string> paths;
  for (const auto& [path, f] : files) paths.insert(path);
  for (const auto& [path, text] : now.persist_files) paths.insert(path);
  for (const std::string& path : paths) {
    auto want = files.find(path);
    auto have = now.persist_files.find(path);
    const std::optional<std::string> current =
        have == now.persist_files.end() ? std::nullopt : std::optional<std::string>(have->second);
    const std::optional<std::string> after =
        want == files.end() ? std::nullopt : std::optional<std::string>(want->second.content);
    if (current == after) continue;
    Change c = MakeChange(
        kRailnetModule, Basename(path), kRailFile,
        current ? nlohmann::json(*current) : nlohmann::json(nullptr),
        after ? nlohmann::json(*after) : nlohmann::json(nullptr), Disruption::kLive, kPhaseRails,
        want != files.end() ? want->second.reason : "no longer wanted: " + path + " is removed",
        field);
    c.resource = "file:" + path;
    c.detail["path"] = path;
    c.detail["mode"] = want != files.end() ? want->second.mode : 0644;
    DeclareManagedFile(c, path, current, field, sink);
    sink.AddChange(std::move(c));
  }
}

}  // namespace provisioner
