#include "modules/kmod/kmod_host.h"

#include <libkmod.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include "engine/base/temp_dir.h"
#include "modules/kmod/kmod_parse.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

void LogToSpdlog(void* data, int priority, const char* file, int line, const char* fn,
                 const char* format, va_list args) {
  (void)data;
  (void)file;
  (void)line;
  (void)fn;
  char buf[1024];
  std::vsnprintf(buf, sizeof buf, format, args);
  std::string msg(buf);
  while (!msg.empty() && msg.back() == '\n') msg.pop_back();
  // libkmod's errors are ours to report (as Status); its chatter is debug.
  if (priority <= 3) {
    spdlog::debug("libkmod: {}", msg);
  } else {
    spdlog::trace("libkmod: {}", msg);
  }
}

struct CtxDeleter {
  void operator()(kmod_ctx* c) const { kmod_unref(c); }
};
using Ctx = std::unique_ptr<kmod_ctx, CtxDeleter>;

Ctx NewCtx(const char* dirname, const char* const* config_paths) {
  Ctx ctx(kmod_new(dirname, config_paths));
  if (ctx) kmod_set_log_fn(ctx.get(), LogToSpdlog, nullptr);
  return ctx;
}

// modprobe.d directories, in libkmod's own order (its defaults, re-rooted).
const char* const kConfigDirs[] = {"/etc/modprobe.d", "/run/modprobe.d",
                                   "/usr/local/lib/modprobe.d", "/lib/modprobe.d"};

std::string ReleaseDir(const std::string& release) { return "/lib/modules/" + release; }

bool IsConfName(const std::string& n) {
  return n.size() > 5 && n.compare(n.size() - 5, 5, ".conf") == 0;
}

// libkmod opens the config paths it is given itself, following any link
// (an absolute one in a tree leads to this machine's /etc). It gets
// confined copies instead, on every root (the module never asks which one):
// each *.conf read through the host layer (a link leaving the root, a
// dangling one, a FIFO: skipped, with a warning), one directory per config
// directory, in libkmod's order. On the live root the copies hold what
// modprobe reads.
class ConfigView {
 public:
  ConfigView(const HostFs& fs, std::vector<std::string>* warnings) {
    if (std::string err = dir_.Create("provisioner-modprobe"); !err.empty()) {
      warnings->push_back("modprobe.d of the tree not read: " + err);
      return;
    }
    for (size_t i = 0; i < sizeof kConfigDirs / sizeof kConfigDirs[0]; ++i) {
      const std::string copy = dir_.path() + "/" + std::to_string(i);
      std::filesystem::create_directory(copy);
      paths_.push_back(copy);
      for (const std::string& n : ListDirIfPresent(fs, kConfigDirs[i])) {
        if (!IsConfName(n)) continue;
        const std::string path = JoinPath(kConfigDirs[i], n);
        auto text = fs.ReadFile(path);
        if (!text.ok()) {
          warnings->push_back(path + " not read: " + text.status().message());
          continue;
        }
        std::ofstream(copy + "/" + n, std::ios::binary) << *text;
        origin_[copy + "/" + n] = path;
      }
    }
  }

  // The directories to give libkmod, in its order.
  const std::vector<std::string>& paths() const { return paths_; }
  // The files to read one at a time (name -> path given to libkmod and host
  // path), first directory wins, as libkmod merges them.
  std::map<std::string, std::pair<std::string, std::string>> Files(const HostFs& fs) const {
    std::map<std::string, std::pair<std::string, std::string>> out;
    for (size_t i = 0; i < paths_.size(); ++i) {
      for (const auto& [copy, host] : origin_) {
        if (copy.compare(0, paths_[i].size() + 1, paths_[i] + "/") != 0) continue;
        out.emplace(std::string(Basename(host)), std::make_pair(copy, host));
      }
    }
    return out;
  }

 private:
  ScopedTempDir dir_;
  std::vector<std::string> paths_;
  std::map<std::string, std::string> origin_;  // copy -> host path
};

using Entry = std::tuple<int, std::string, std::string>;  // kind, key, value

enum Kind { kOptions, kBlacklist, kInstall, kRemove, kSoftdep, kAlias };

std::vector<Entry> ConfigEntries(kmod_ctx* ctx) {
  std::vector<Entry> out;
  auto take = [&](int kind, kmod_config_iter* it) {
    if (it == nullptr) return;
    while (kmod_config_iter_next(it)) {
      const char* k = kmod_config_iter_get_key(it);
      const char* v = kmod_config_iter_get_value(it);
      out.emplace_back(kind, k ? k : "", v ? v : "");
    }
    kmod_config_iter_free_iter(it);
  };
  take(kOptions, kmod_config_get_options(ctx));
  take(kBlacklist, kmod_config_get_blacklists(ctx));
  take(kInstall, kmod_config_get_install_commands(ctx));
  take(kRemove, kmod_config_get_remove_commands(ctx));
  take(kSoftdep, kmod_config_get_softdeps(ctx));
  take(kAlias, kmod_config_get_aliases(ctx));
  return out;
}

std::string StateOf(kmod_module* mod) {
  // /proc/modules says Live/Loading/Unloading; libkmod gives sysfs initstate.
  int s = kmod_module_get_initstate(mod);
  if (s == KMOD_MODULE_COMING) return "Loading";
  if (s == KMOD_MODULE_GOING) return "Unloading";
  return "Live";
}

// Defined below ModprobeOptionsByFile's neighbours.
std::vector<ModprobeFileOptions> OptionsByFile(const HostFs& fs, const ConfigView& view);

}  // namespace

Status ReadModprobeConfig(const HostFs& fs, const std::string& release, KmodFacts* facts) {
  ConfigView view(fs, &facts->config_warnings);
  for (const char* dir : kConfigDirs) {
    // For the snapshot: libkmod reads these itself on the live root.
    for (const std::string& n : ListDirIfPresent(fs, dir)) {
      if (IsConfName(n)) fs.NoteExternalRead(JoinPath(dir, n));
    }
  }
  std::vector<const char*> cpaths;
  cpaths.reserve(view.paths().size() + 1);
  for (const auto& p : view.paths()) cpaths.push_back(p.c_str());
  cpaths.push_back(nullptr);
  std::string moddir = fs.FsPath(ReleaseDir(release.empty() ? "none" : release));
  Ctx ctx = NewCtx(moddir.c_str(), cpaths.data());
  // The same with no config file: what libkmod takes from this machine's
  // kernel command line, which is not the root's modprobe.d.
  const std::string none = fs.FsPath("/nonexistent-provisioner-modprobe.d");
  const char* no_paths[] = {none.c_str(), nullptr};
  Ctx cmdline_only = NewCtx(moddir.c_str(), no_paths);
  if (!ctx || !cmdline_only) return InternalError("libkmod: kmod_new failed");

  std::vector<Entry> entries = ConfigEntries(ctx.get());
  for (const Entry& e : ConfigEntries(cmdline_only.get())) {
    auto it = std::find(entries.begin(), entries.end(), e);
    if (it != entries.end()) entries.erase(it);
  }
  for (const auto& [kind, key, value] : entries) {
    switch (kind) {
      case kOptions: facts->options.push_back({key, value}); break;
      case kBlacklist: facts->blacklist.push_back(key); break;
      case kInstall: facts->install.push_back({key, value}); break;
      case kRemove: facts->remove.push_back({key, value}); break;
      case kSoftdep: facts->softdeps.push_back({key, value}); break;
      default: facts->aliases.push_back({key, value}); break;
    }
  }
  facts->options_by_file = OptionsByFile(fs, view);  // the same copies: one read
  return OkStatus();
}

namespace {

// Each file of `view` through libkmod on its own.
std::vector<ModprobeFileOptions> OptionsByFile(const HostFs& fs, const ConfigView& view) {
  const auto files = view.Files(fs);  // name -> (path for libkmod, host path)
  std::vector<ModprobeFileOptions> out;
  if (files.empty()) return out;
  const std::string moddir = fs.FsPath("/lib/modules/none");
  // What libkmod adds from this machine's kernel command line: taken out.
  const std::string none = fs.FsPath("/nonexistent-provisioner-modprobe.d");
  const char* no_paths[] = {none.c_str(), nullptr};
  Ctx cmdline_only = NewCtx(moddir.c_str(), no_paths);
  if (!cmdline_only) return out;
  const std::vector<Entry> cmdline = ConfigEntries(cmdline_only.get());
  for (const auto& [name, where] : files) {
    const auto& [given, path] = where;
    const std::string& file = given;
    const char* paths[] = {file.c_str(), nullptr};
    Ctx ctx = NewCtx(moddir.c_str(), paths);
    if (!ctx) continue;
    fs.NoteExternalRead(path);  // for the snapshot: libkmod reads it itself
    ModprobeFileOptions f;
    f.path = path;
    std::vector<Entry> rest = cmdline;
    for (const auto& e : ConfigEntries(ctx.get())) {
      auto it = std::find(rest.begin(), rest.end(), e);
      if (it != rest.end()) {
        rest.erase(it);
        continue;
      }
      if (std::get<0>(e) == kOptions) f.options.push_back({std::get<1>(e), std::get<2>(e)});
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<ModprobeFileOptions> ModprobeOptionsByFile(const HostFs& fs) {
  std::vector<std::string> ignored;  // ReadModprobeConfig reports the same files
  ConfigView view(fs, &ignored);
  return OptionsByFile(fs, view);
}

// KmodFacts::builtin. modules.builtin lists one module a line by its path
// in the kernel tree ("kernel/drivers/net/virtio_net.ko"); a /sys/module
// entry that is not a loaded module and has no `initstate` is built in (the
// kernel makes those for built-ins with parameters or a version).
static Status ReadBuiltin(const HostFs& fs, KmodFacts* k) {
  if (!k->modules_dir.empty()) {
    const std::string path = k->modules_dir + "/modules.builtin";
    auto text = fs.ReadFile(path);
    if (text.ok()) {
      std::istringstream lines(*text);
      for (std::string line; std::getline(lines, line);) {
        std::string name = line.substr(line.rfind('/') + 1);
        if (const size_t ko = name.find(".ko"); ko != std::string::npos) name.resize(ko);
        if (!name.empty()) k->builtin.insert(NormalizeModuleName(name));
      }
    } else if (text.status().err() != ENOENT) {
      return text.status();
    }
  }
  std::set<std::string> loaded;
  for (const LoadedModule& m : k->loaded) loaded.insert(NormalizeModuleName(m.name));
  for (const std::string& m : ListDirIfPresent(fs, "/sys/module")) {
    const std::string name = NormalizeModuleName(m);
    if (loaded.count(name) || fs.Exists("/sys/module/" + m + "/initstate")) continue;
    k->builtin.insert(name);
  }
  return OkStatus();
}

// KmodFacts::name_aliases: "alias <pattern> <module>" lines of
// modules.alias (depmod's text index) whose pattern is a plain module-like
// name ("alias nvidia-peermem nvidia_peermem"), not a device match
// ("pci:v000015B3d*", "net-pf-16-*").
static Status ReadNameAliases(const HostFs& fs, KmodFacts* k) {
  if (!k->modules_dir_found) return OkStatus();
  auto text = fs.ReadFile(k->modules_dir + "/modules.alias");
  if (!text.ok()) return text.status().err() == ENOENT ? OkStatus() : text.status();
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string kw, alias, module;
    if (!(words >> kw >> alias >> module) || kw != "alias") continue;
    if (alias.find_first_of("*?[:") != std::string::npos) continue;
    k->name_aliases.emplace(NormalizeModuleName(alias), module);
  }
  return OkStatus();
}

StatusOr<KmodFacts> DiscoverKmod(const HostFs& fs, KmodBackend& backend,
                                 const std::string& release) {
  KmodFacts k;
  auto loaded = backend.ReadLoaded();
  if (loaded.ok()) {
    k.loaded = std::move(*loaded);
    k.loaded_source = backend.Source();
  } else if (loaded.status().err() != ENOENT) {
    // A kernel without loadable modules has no /proc/modules: nothing loaded.
    return loaded.status();
  }
  for (const LoadedModule& m : k.loaded) {
    const std::string dir = "/sys/module/" + m.name + "/parameters";
    auto names = fs.ListDir(dir);
    if (!names.ok()) continue;
    auto values = fs.ReadFilesIn(dir, *names);
    for (size_t i = 0; i < names->size(); ++i) {
      if (!values[i].ok()) continue;  // write-only parameters
      std::string v = *values[i];
      while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
      k.parameters[m.name][(*names)[i]] = v;
    }
  }
  if (!release.empty()) {
    k.modules_dir = ReleaseDir(release);
    auto dep = fs.ReadFile(k.modules_dir + "/modules.dep");
    if (dep.ok()) {
      auto parsed = ParseModulesDep(*dep);
      if (!parsed.ok()) return parsed.status().WithContext(fs.FsPath(k.modules_dir + "/modules.dep"));
      k.available = std::move(*parsed);
      k.modules_dep_found = true;
    } else if (dep.status().err() != ENOENT) {
      return dep.status();
    }
    k.modules_dir_found = k.modules_dep_found || fs.IsDir(k.modules_dir);
  }
  RETURN_IF_ERROR(ReadBuiltin(fs, &k));
  RETURN_IF_ERROR(ReadNameAliases(fs, &k));
  RETURN_IF_ERROR(ReadModprobeConfig(fs, release, &k));
  auto conf = fs.ReadFile(kModulesLoadConf);
  if (conf.ok()) {
    k.persisted = ParseModulesLoad(*conf);
    k.persisted_text = std::move(*conf);
  } else if (conf.status().err() != ENOENT) {
    return conf.status();
  }
  k.discovered = true;
  return k;
}

StatusOr<std::vector<std::string>> LibkmodDependencies(const HostFs& fs, const std::string& release,
                                                       const std::string& name) {
  const std::string moddir = fs.FsPath(ReleaseDir(release));
  std::vector<std::string> paths;
  for (const char* dir : kConfigDirs) paths.push_back(fs.FsPath(dir));
  std::vector<const char*> cpaths;
  cpaths.reserve(paths.size() + 1);
  for (const auto& p : paths) cpaths.push_back(p.c_str());
  cpaths.push_back(nullptr);
  Ctx ctx = NewCtx(moddir.c_str(), cpaths.data());
  if (!ctx) return InternalError("libkmod: kmod_new failed");
  kmod_list* list = nullptr;
  int err = kmod_module_new_from_lookup(ctx.get(), name.c_str(), &list);
  if (err < 0) return ErrnoToStatus(-err, "look up kernel module " + name + " in " + moddir + " (libkmod)");
  if (list == nullptr) {
    return NotFoundError("kernel module " + name + " not found in " + moddir + "/modules.dep.bin (libkmod)");
  }
  kmod_module* mod = kmod_module_get_module(list);
  std::vector<std::string> out;
  kmod_list* deps = kmod_module_get_dependencies(mod);
  kmod_list* itr;
  kmod_list_foreach(itr, deps) {
    kmod_module* d = kmod_module_get_module(itr);
    out.push_back(kmod_module_get_name(d));
    kmod_module_unref(d);
  }
  kmod_module_unref_list(deps);
  kmod_module_unref(mod);
  kmod_module_unref_list(list);
  // libkmod gives them in load order, the reverse of the modules.dep line.
  std::reverse(out.begin(), out.end());
  return out;
}

namespace {

// The live root: libkmod on the running kernel.
class LibkmodBackend final : public KmodBackend {
 public:
  explicit LibkmodBackend(const HostFs& fs) : fs_(fs) {}

  std::string Source() const override { return "libkmod"; }

  StatusOr<std::vector<LoadedModule>> ReadLoaded() override {
    Ctx ctx = NewCtx(nullptr, nullptr);
    if (!ctx) return InternalError("libkmod: kmod_new failed");
    kmod_list* list = nullptr;
    int err = kmod_module_new_from_loaded(ctx.get(), &list);
    if (err < 0) return ErrnoToStatus(-err, "read /proc/modules (libkmod)");
    std::vector<LoadedModule> out;
    kmod_list* itr;
    kmod_list_foreach(itr, list) {
      kmod_module* mod = kmod_module_get_module(itr);
      LoadedModule m;
      m.name = kmod_module_get_name(mod);
      m.size = kmod_module_get_size(mod);
      m.refcount = kmod_module_get_refcnt(mod);
      kmod_list* holders = kmod_module_get_holders(mod);
      kmod_list* h;
      kmod_list_foreach(h, holders) {
        kmod_module* hm = kmod_module_get_module(h);
        m.used_by.push_back(kmod_module_get_name(hm));
        kmod_module_unref(hm);
      }
      kmod_module_unref_list(holders);
      m.state = StateOf(mod);
      kmod_module_unref(mod);
      out.push_back(std::move(m));
    }
    kmod_module_unref_list(list);
    // What the tree backend reads under a snapshot's root.
    fs_.NoteExternalRead("/proc/modules");
    return out;
  }

  Status Load(const std::string& name, const std::vector<std::string>& dependencies) override {
    (void)dependencies;  // libkmod looks them up itself
    Ctx ctx = NewCtx(nullptr, nullptr);
    if (!ctx) return InternalError("libkmod: kmod_new failed");
    kmod_list* list = nullptr;
    int err = kmod_module_new_from_lookup(ctx.get(), name.c_str(), &list);
    if (err < 0) return ErrnoToStatus(-err, "look up kernel module " + name + " (libkmod)");
    if (list == nullptr) {
      return NotFoundError("kernel module " + name + " not found in /lib/modules (libkmod lookup)");
    }
    Status result = OkStatus();
    kmod_list* itr;
    kmod_list_foreach(itr, list) {
      kmod_module* mod = kmod_module_get_module(itr);
      // Like `modprobe name`: the blacklist applies to aliases only, and
      // modprobe.d options and install commands are honoured.
      int r = kmod_module_probe_insert_module(mod, KMOD_PROBE_APPLY_BLACKLIST_ALIAS_ONLY, nullptr,
                                              nullptr, nullptr, nullptr);
      if (r < 0 && result.ok()) {
        result = ErrnoToStatus(-r, "load kernel module " + std::string(kmod_module_get_name(mod)) +
                                       " (libkmod probe)");
      } else if (r > 0 && result.ok()) {
        result = FailedPreconditionError("load kernel module " + name + ": blacklisted in modprobe.d");
      }
      kmod_module_unref(mod);
    }
    kmod_module_unref_list(list);
    return result;
  }

  Status Unload(const std::string& name) override {
    Ctx ctx = NewCtx(nullptr, nullptr);
    if (!ctx) return InternalError("libkmod: kmod_new failed");
    kmod_module* mod = nullptr;
    int err = kmod_module_new_from_name(ctx.get(), name.c_str(), &mod);
    if (err < 0) return ErrnoToStatus(-err, "unload kernel module " + name + " (libkmod)");
    int r = kmod_module_remove_module(mod, 0);
    kmod_module_unref(mod);
    if (r < 0) return ErrnoToStatus(-r, "unload kernel module " + name + " (libkmod)");
    return OkStatus();
  }

 private:
  const HostFs& fs_;
};

}  // namespace

std::unique_ptr<KmodBackend> NewLibkmodBackend(const HostFs& fs) {
  return std::make_unique<LibkmodBackend>(fs);
}

}  // namespace provisioner
