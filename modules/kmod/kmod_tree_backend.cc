// The kernel's stand-in for kernel modules under a tree root (kmod_backend.h):
// <root>/proc/modules is the loaded list; loading or unloading rewrites it.
#include <algorithm>
#include <cerrno>

#include "modules/kmod/kmod_backend.h"
#include "modules/kmod/kmod_host.h"
#include "modules/kmod/kmod_parse.h"

namespace provisioner {
namespace {

class TreeKmodBackend final : public KmodBackend {
 public:
  explicit TreeKmodBackend(HostFs& fs) : fs_(fs) {}

  std::string Source() const override { return "/proc/modules"; }

  StatusOr<std::vector<LoadedModule>> ReadLoaded() override {
    ASSIGN_OR_RETURN(std::string text, fs_.ReadFile("/proc/modules"));
    auto parsed = ParseProcModules(text);
    if (!parsed.ok()) return parsed.status().WithContext(fs_.FsPath("/proc/modules"));
    return parsed;
  }

  Status Load(const std::string& name, const std::vector<std::string>& given_deps) override {
    std::vector<std::string> dependencies = given_deps;
    auto release = fs_.ReadAttr("/proc/sys/kernel/osrelease");
    if (release.ok() && !release->empty()) {
      // The tree's depmod output, as modprobe would look the module up: the
      // text modules.dep (depmod writes it with modules.dep.bin, from the
      // same data; kmod_host_test checks that libkmod agrees). Not libkmod
      // here: its kmod_new() reads this machine's /proc/cmdline.
      const std::string dep_path = "/lib/modules/" + *release + "/modules.dep";
      auto dep = fs_.ReadFile(dep_path);
      if (dep.ok()) {
        auto parsed = ParseModulesDep(*dep);
        if (!parsed.ok()) return parsed.status().WithContext(fs_.FsPath(dep_path));
        auto it = parsed->find(NormalizeModuleName(name));
        if (it != parsed->end()) {
          dependencies = it->second;
        } else if (fs_.Exists("/lib/modules/" + *release + "/modules.dep.bin")) {
          // A complete depmod output without it: modprobe would fail too.
          return NotFoundError("load " + name + ": kernel module " + name + " not found in " +
                               fs_.FsPath(dep_path));
        }
      } else if (dep.status().err() != ENOENT) {
        return dep.status().WithContext("load " + name);
      }
    }
    std::vector<LoadedModule> mods;
    auto cur = ReadLoaded();
    if (cur.ok()) {
      mods = std::move(*cur);
    } else if (cur.status().err() != ENOENT) {
      return cur.status().WithContext("load " + name);
    }
    auto loaded = [&](const std::string& n) {
      for (const auto& m : mods) {
        if (NormalizeModuleName(m.name) == NormalizeModuleName(n)) return true;
      }
      return false;
    };
    // modules.dep lists the dependency loaded first last (modprobe's order).
    std::vector<std::string> order(dependencies.rbegin(), dependencies.rend());
    order.push_back(name);
    for (const auto& n : order) {
      if (loaded(n)) continue;
      LoadedModule m;
      m.name = NormalizeModuleName(n);
      m.state = "Live";
      mods.insert(mods.begin(), m);  // newest first, as the kernel lists them
    }
    return fs_.WriteFileAtomic("/proc/modules", RenderProcModules(mods));
  }

  Status Unload(const std::string& name) override {
    ASSIGN_OR_RETURN(std::vector<LoadedModule> mods, ReadLoaded());
    mods.erase(std::remove_if(mods.begin(), mods.end(),
                              [&](const LoadedModule& m) {
                                return NormalizeModuleName(m.name) == NormalizeModuleName(name);
                              }),
               mods.end());
    return fs_.WriteFileAtomic("/proc/modules", RenderProcModules(mods));
  }

 private:
  HostFs& fs_;
};

}  // namespace

std::unique_ptr<KmodBackend> NewTreeKmodBackend(HostFs& fs) {
  return std::make_unique<TreeKmodBackend>(fs);
}

}  // namespace provisioner
