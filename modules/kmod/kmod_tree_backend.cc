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
    if (release.ok() && !release->empty() &&
        fs_.Exists("/lib/modules/" + *release + "/modules.dep.bin")) {
      // The tree has depmod's indexes: ask libkmod, as modprobe would.
      auto deps = LibkmodDependencies(fs_, *release, name);
      if (!deps.ok()) return deps.status().WithContext("load " + name);
      dependencies = std::move(*deps);
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
