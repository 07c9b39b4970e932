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

// The names libkmod 30 reads in a config directory (conf_files_filter_out):
// not hidden, ending in .conf or .alias.
bool IsConfName(const std::string& n) {
  auto ends = [&](const char* suffix, size_t len) {
    return n.size() >= 6 && n.size() >= len && n.compare(n.size() - len, len, suffix) == 0;
  };
  return !n.empty() && n[0] != '.' && (ends(".conf", 5) || ends(".alias", 6));
}

// The modprobe.d files under the root in libkmod's order
// (conf_files_insert_sorted): all directories merged by file name (strcmp),
// a name in an earlier directory hiding the same name in later ones.
std::vector<std::string> ModprobeFiles(const HostFs& fs) {
  std::map<std::string, std::string> by_name;  // std::string compares as strcmp
  for (const char* dir : kConfigDirs) {
    for (const std::string& n : ListDirIfPresent(fs, dir)) {
      if (IsConfName(n)) by_name.emplace(n, JoinPath(dir, n));
    }
  }
  std::vector<std::string> out;
  out.reserve(by_name.size());
  for (const auto& [name, path] : by_name) out.push_back(path);
  return out;
}

std::string StateOf(kmod_module* mod) {
  // /proc/modules says Live/Loading/Unloading; libkmod gives sysfs initstate.
  int s = kmod_module_get_initstate(mod);
  if (s == KMOD_MODULE_COMING) return "Loading";
  if (s == KMOD_MODULE_GOING) return "Unloading";
  return "Live";
}

// Each modprobe.d file, read through the host layer (a link leaving the
// root, a dangling one, a FIFO: skipped, with a warning in `warnings`) and
// parsed on its own.
struct ReadConf {
  std::string path;
  ModprobeConf conf;
};
std::vector<ReadConf> ReadModprobeFiles(const HostFs& fs, std::vector<std::string>* warnings) {
  std::vector<ReadConf> out;
  for (const std::string& path : ModprobeFiles(fs)) {
    auto text = fs.ReadFile(path);
    if (!text.ok()) {
      if (warnings != nullptr) warnings->push_back(path + " not read: " + text.status().message());
      continue;
    }
    ReadConf r;
    r.path = path;
    ParseModprobeConf(*text, &r.conf);
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ModprobeFileOptions> OptionsByFile(const std::vector<ReadConf>& files) {
  std::vector<ModprobeFileOptions> out;
  for (const ReadConf& r : files) out.push_back({r.path, r.conf.options});
  return out;
}

}  // namespace

// Not libkmod: its kmod_new() always adds `mod.param=` options and
// `modprobe.blacklist=` from the running machine's /proc/cmdline (libkmod 30
// libkmod-config.c, kmod_config_parse_kcmdline, a fixed path), so under a
// tree root the facts would depend on the machine that reads the tree, and
// the machine's file would be read (issue 26, item 14). The facts are what
// the root's modprobe.d files say, read through the host layer and parsed as
// libkmod parses them (ParseModprobeConf; kmod_host_test compares the two).
Status ReadModprobeConfig(const HostFs& fs, const std::string& release, KmodFacts* facts) {
  (void)release;  // libkmod's <moddir>/modules.softdep was never part of these facts
  const std::vector<ReadConf> files = ReadModprobeFiles(fs, &facts->config_warnings);
  ModprobeConf all;
  for (const ReadConf& r : files) {
    auto append = [](auto* to, const auto& from) {
      to->insert(to->end(), from.begin(), from.end());
    };
    append(&all.options, r.conf.options);
    append(&all.blacklist, r.conf.blacklist);
    append(&all.install, r.conf.install);
    append(&all.remove, r.conf.remove);
    append(&all.softdeps, r.conf.softdeps);
    append(&all.aliases, r.conf.aliases);
  }
  facts->options = std::move(all.options);
  facts->blacklist = std::move(all.blacklist);
  facts->install = std::move(all.install);
  facts->remove = std::move(all.remove);
  facts->softdeps = std::move(all.softdeps);
  facts->aliases = std::move(all.aliases);
  facts->options_by_file = OptionsByFile(files);  // the same reads
  return OkStatus();
}

std::vector<ModprobeFileOptions> ModprobeOptionsByFile(const HostFs& fs) {
  return OptionsByFile(ReadModprobeFiles(fs, nullptr));  // ReadModprobeConfig warns
}

StatusOr<ModprobeConf> LibkmodModprobeConf(const std::vector<std::string>& config_paths) {
  std::vector<const char*> cpaths;
  for (const auto& p : config_paths) cpaths.push_back(p.c_str());
  cpaths.push_back(nullptr);
  const char* none[] = {"/nonexistent-provisioner-modprobe.d", nullptr};
  Ctx ctx = NewCtx("/nonexistent-provisioner-moddir", cpaths.data());
  Ctx cmdline_only = NewCtx("/nonexistent-provisioner-moddir", none);
  if (!ctx || !cmdline_only) return InternalError("libkmod: kmod_new failed");
  using Entry = std::pair<std::string, std::string>;
  enum Kind { kOptions, kBlacklist, kInstall, kRemove, kSoftdep, kAlias, kKinds };
  auto entries = [](kmod_ctx* c) {
    std::vector<std::vector<Entry>> out(kKinds);
    auto take = [&](int kind, kmod_config_iter* it) {
      if (it == nullptr) return;
      while (kmod_config_iter_next(it)) {
        const char* k = kmod_config_iter_get_key(it);
        const char* v = kmod_config_iter_get_value(it);
        out[kind].emplace_back(k ? k : "", v ? v : "");
      }
      kmod_config_iter_free_iter(it);
    };
    take(kOptions, kmod_config_get_options(c));
    take(kBlacklist, kmod_config_get_blacklists(c));
    take(kInstall, kmod_config_get_install_commands(c));
    take(kRemove, kmod_config_get_remove_commands(c));
    take(kSoftdep, kmod_config_get_softdeps(c));
    take(kAlias, kmod_config_get_aliases(c));
    return out;
  };
  std::vector<std::vector<Entry>> got = entries(ctx.get());
  const std::vector<std::vector<Entry>> cmdline = entries(cmdline_only.get());
  // libkmod appends the command line's entries after the files' ones.
  for (int k = 0; k < kKinds; ++k) {
    if (got[k].size() < cmdline[k].size() ||
        !std::equal(cmdline[k].begin(), cmdline[k].end(), got[k].end() - cmdline[k].size())) {
      return InternalError("libkmod: the kernel command line's entries are not last");
    }
    got[k].resize(got[k].size() - cmdline[k].size());
  }
  ModprobeConf conf;
  auto to = [](const std::vector<Entry>& from, std::vector<ModprobeEntry>* out) {
    for (const auto& [k, v] : from) out->push_back({k, v});
  };
  to(got[kOptions], &conf.options);
  for (const auto& [k, v] : got[kBlacklist]) conf.blacklist.push_back(k);
  to(got[kInstall], &conf.install);
  to(got[kRemove], &conf.remove);
  to(got[kSoftdep], &conf.softdeps);
  to(got[kAlias], &conf.aliases);
  return conf;
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
    return loaded.status();
  } else if (fs.Captured("/proc/modules")) {
    // Absent, not just left out of a capture: a kernel without loadable
    // modules has no /proc/modules, and neither has a container without
    // procfs: plan as if nothing were loaded, but say so (a tree without
    // proc/modules is a partial capture: the module infers the loaded list
    // from the tree instead, kmod_module.cc).
    k.config_warnings.push_back(
        "/proc/modules: ENOENT: loaded kernel modules unknown (no procfs?)");
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
      if (!parsed.ok())
        return parsed.status().WithContext(fs.FsPath(k.modules_dir + "/modules.dep"));
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
  if (err < 0)
    return ErrnoToStatus(-err, "look up kernel module " + name + " in " + moddir + " (libkmod)");
  if (list == nullptr) {
    return NotFoundError("kernel module " + name + " not found in " + moddir +
                         "/modules.dep.bin (libkmod)");
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
        result =
            FailedPreconditionError("load kernel module " + name + ": blacklisted in modprobe.d");
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
