#include "modules/kmod/kmod_planner.h"

#include <optional>
#include <string>
#include <vector>

#include "engine/base/strings.h"
#include "engine/module/managed_file.h"

namespace provisioner {

bool IsModuleLoaded(const KmodFacts& facts, const std::string& name) {
  const std::string key = NormalizeModuleName(name);
  for (const LoadedModule& m : facts.loaded) {
    if (NormalizeModuleName(m.name) == key) return true;
  }
  return false;
}

namespace {

// Why `name` (neither loaded nor built in nor in modules.dep) cannot be
// loaded, in words that tell an unknown name from a root without the
// modules of its kernel, and a did-you-mean from the names the root has.
std::string NotLoadable(const KmodFacts& k, const std::string& name) {
  std::string msg = "kernel module " + name + " is not loaded and ";
  if (k.modules_dir.empty()) {
    msg +=
        "cannot be looked up: the kernel release is unknown (no /proc/sys/kernel/osrelease), "
        "so there is no /lib/modules/<release> to look in";
  } else if (!k.modules_dir_found) {
    msg += "cannot be looked up: this root has no " + k.modules_dir +
           " (no modules installed for its kernel)";
  } else if (!k.modules_dep_found) {
    msg += "cannot be looked up: " + k.modules_dir + " has no modules.dep (depmod has not run)";
  } else {
    msg += "is unknown: not built in and not in " + k.modules_dir + "/modules.dep";
  }
  const std::string key = NormalizeModuleName(name);
  if (auto alias = k.name_aliases.find(key); alias != k.name_aliases.end()) {
    return msg + "; " + name + " is an alias of " + alias->second + " (" + k.modules_dir +
           "/modules.alias): did you mean " + alias->second + "?";
  }
  std::vector<std::string> names;
  for (const LoadedModule& m : k.loaded) names.push_back(NormalizeModuleName(m.name));
  for (const auto& [n, deps] : k.available) names.push_back(n);
  names.insert(names.end(), k.builtin.begin(), k.builtin.end());
  const std::vector<std::string> near = NearestNames(key, names);
  for (size_t i = 0; i < near.size(); ++i) {
    msg += (i == 0 ? "; did you mean " : " or ") + near[i];
  }
  if (!near.empty()) msg += "?";
  return msg;
}

}  // namespace

void PlanKernelModules(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  const KmodFacts& k = facts.kmod;
  if (desired.kernel_modules.empty() || !k.discovered) return;  // unspecified: unmanaged

  std::vector<std::string> persist;
  for (size_t i = 0; i < desired.kernel_modules.size(); ++i) {
    const KernelModuleSpec& spec = desired.kernel_modules[i];
    const std::string path = "spec.kernelModules[" + std::to_string(i) + "]";
    const std::string key = NormalizeModuleName(spec.name);
    if (spec.name.empty()) continue;     // the schema reported it
    if (k.builtin.count(key)) continue;  // built in: loaded, nothing to load at boot
    const bool loaded = IsModuleLoaded(k, key);
    auto avail = k.available.find(key);
    if (!loaded && avail == k.available.end()) {
      const std::string msg = NotLoadable(k, spec.name);
      if (spec.required) {
        sink.Error(path, msg);
      } else {
        sink.Warning(path, msg + "; skipped (required: false), not listed in " +
                               std::string(kModulesLoadConf));
      }
      continue;
    }
    persist.push_back(spec.name);
    if (loaded) continue;
    Change c = MakeChange(kKmodModule, key, kKmodAttrLoaded, false, true, Disruption::kLive,
                          kPhaseKernelModules, "spec.kernelModules lists " + spec.name, path);
    // What a tree-root apply loads with it; the live root asks libkmod again.
    nlohmann::json deps = nlohmann::json::array();
    for (const auto& d : avail->second) {
      if (!IsModuleLoaded(k, d)) deps.push_back(d);
    }
    c.detail = {{"dependencies", deps}};
    sink.AddChange(std::move(c));
  }

  if (k.persisted && *k.persisted == persist) return;
  if (!k.persisted && persist.empty()) return;
  // After the live loads (the same phase): the file records what is loaded.
  Change c = MakeChange(kKmodModule, kKmodPersistTarget, kKmodAttrPersist,
                        k.persisted ? nlohmann::json(*k.persisted) : nlohmann::json(nullptr),
                        persist, Disruption::kLive, kPhaseKernelModules,
                        "load at boot: " + std::string(kModulesLoadConf), "spec.kernelModules");
  // Captured before apply writes it, restored byte for byte by a rollback;
  // someone else's file is taken over with a warning (managed_file.h).
  DeclareManagedFile(c, kModulesLoadConf,
                     k.persisted ? std::optional<std::string>(k.persisted_text) : std::nullopt,
                     c.field_path, sink);
  sink.AddChange(std::move(c));
}

}  // namespace provisioner
