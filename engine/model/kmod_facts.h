// Kernel module facts (module "kmod"): what is loaded, with which parameters,
// what the modules directory offers, and the modprobe.d configuration.
#ifndef PROVISIONER_ENGINE_MODEL_KMOD_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_KMOD_FACTS_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace provisioner {

// One line of /proc/modules.
struct LoadedModule {
  std::string name;    // "mlx5_ib"
  long long size = 0;  // bytes
  int refcount = 0;
  std::vector<std::string> used_by;  // "ib_core ... rdma_cm,iw_cm," -> {rdma_cm, iw_cm}
  std::string state;                 // "Live" | "Loading" | "Unloading"
};

// A modprobe.d line that names a module (options / install / remove / softdep).
struct ModprobeEntry {
  std::string module;
  std::string value;  // "netns_mode=0", the install command, ...
};

// The `options` lines of one modprobe.d file, as libkmod reads that file
// alone (continued lines joined, "ib-core" named ib_core).
struct ModprobeFileOptions {
  std::string path;  // host path
  std::vector<ModprobeEntry> options;
};

// etc/modules-load.d/provisioner.conf, the file the kmod module owns.
inline constexpr char kModulesLoadConf[] = "/etc/modules-load.d/provisioner.conf";

inline constexpr const char* kInferredLoadedSource = "inferred from the tree (no /proc/modules)";

struct KmodFacts {
  bool discovered = false;
  // Where the loaded list came from: "libkmod" (live root), "/proc/modules"
  // (a tree) or kInferredLoadedSource (a tree without /proc/modules).
  std::string loaded_source;
  std::vector<LoadedModule> loaded;  // /proc/modules order (newest first)
  // /sys/module/<m>/parameters/<p> of the loaded modules (unreadable ones left out).
  std::map<std::string, std::map<std::string, std::string>> parameters;
  // lib/modules/<release>/modules.dep: module name -> dependencies (names,
  // load order: the last one first). Empty when the file is absent.
  std::string modules_dir;  // "/lib/modules/6.1.0"; "" without a kernel release
  bool modules_dep_found = false;
  // The directory itself exists (an "unknown module" and "no modules for
  // this kernel here" are different errors).
  bool modules_dir_found = false;
  std::map<std::string, std::vector<std::string>> available;
  // <modules_dir>/modules.alias lines whose alias is a plain name (no
  // wildcard, no "bus:" prefix): alias (normalized) -> module. For the
  // did-you-mean of an unknown module name.
  std::map<std::string, std::string> name_aliases;
  // Built into the kernel (normalized names): <modules_dir>/modules.builtin,
  // and /sys/module/<m> without `initstate`, as libkmod's
  // kmod_module_get_initstate tells KMOD_MODULE_BUILTIN. Always loaded; no
  // modules-load.d line; never unloaded.
  std::set<std::string> builtin;
  // modprobe.d configuration under the root (libkmod's config iterators).
  std::vector<ModprobeEntry> options;
  std::vector<std::string> blacklist;
  std::vector<ModprobeEntry> install;
  std::vector<ModprobeEntry> remove;
  std::vector<ModprobeEntry> softdeps;
  std::vector<ModprobeEntry> aliases;  // alias pattern (module) -> module (value)
  // The options again, per file, in libkmod's order (a name in an earlier
  // directory hides it in later ones): for modules that need to know which
  // file sets an option (the rdma module's netns mode). Read once, with the
  // rest of the configuration.
  std::vector<ModprobeFileOptions> options_by_file;
  // modprobe.d files of a tree that were not read (a link leaving the root,
  // a dangling link, not a regular file), each with why; and the live root's
  // missing /proc/modules. Discover passes them on as plan/discover warnings.
  std::vector<std::string> config_warnings;
  // Modules listed in kModulesLoadConf; nullopt when the file is absent.
  std::optional<std::vector<std::string>> persisted;
  // That file's bytes as read (for a rollback that restores them exactly:
  // the administrator's comments and blank lines included).
  std::string persisted_text;
};

// kmod treats '-' and '_' in module names alike: "mlx5-ib" -> "mlx5_ib".
inline std::string NormalizeModuleName(std::string name) {
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_KMOD_FACTS_H_
