#include "modules/kmod/kmod_module.h"

#include <set>
#include <string>
#include <vector>

#include "engine/base/config_value.h"
#include "engine/base/strings.h"
#include "engine/module/managed_file.h"
#include "engine/module/registry.h"
#include "modules/kmod/kmod_backend.h"
#include "modules/kmod/kmod_host.h"
#include "modules/kmod/kmod_parse.h"
#include "modules/kmod/kmod_planner.h"

namespace provisioner {
namespace {

// A tree without proc/modules (hwloc's and ghw's captures) says nothing of
// what is loaded; "nothing" would be wrong (its mlx4_0 needs mlx4_ib and
// ib_core). What the tree shows instead: each bound driver is loaded, an
// RDMA device means ib_core and its driver's RDMA half, an IPoIB netdev
// ib_ipoib, a /sys/module/<m>/initstate a loadable module that is live.
std::vector<std::string> LoadedByEvidence(const HostFs& fs, const HostFacts& facts) {
  // In natural order, as every list people read (NaturalLess).
  auto natural = [](const std::string& a, const std::string& b) { return NaturalLess(a, b); };
  std::set<std::string, decltype(natural)> names(natural);
  bool rdma = false;
  for (const PciFunction& f : facts.pci) {
    if (!f.driver.empty()) names.insert(NormalizeModuleName(f.driver));
    if (f.rdma_devices.empty()) continue;
    rdma = true;
    if (f.driver == "mlx5_core") names.insert("mlx5_ib");
    if (f.driver == "mlx4_core") names.insert("mlx4_ib");
  }
  if (rdma || !ListDirIfPresent(fs, "/sys/class/infiniband").empty()) names.insert("ib_core");
  if (!ListDirIfPresent(fs, "/sys/class/infiniband_verbs").empty()) names.insert("ib_uverbs");
  for (const std::string& n : ListDirIfPresent(fs, "/sys/class/net")) {
    if (n.rfind("ib", 0) == 0 && fs.Exists("/sys/class/net/" + n + "/pkey"))
      names.insert("ib_ipoib");
  }
  for (const std::string& m : ListDirIfPresent(fs, "/sys/module")) {
    if (fs.Exists("/sys/module/" + m + "/initstate")) names.insert(NormalizeModuleName(m));
  }
  return {names.begin(), names.end()};
}

}  // namespace

Status KmodModule::Discover(HostContext& ctx, HostFacts& facts) {
  std::unique_ptr<KmodBackend> backend = NewKmodBackend(*ctx.fs);
  ASSIGN_OR_RETURN(KmodFacts k, DiscoverKmod(*ctx.fs, *backend, facts.kernel.release));
  facts.warnings.insert(facts.warnings.end(), k.config_warnings.begin(), k.config_warnings.end());
  if (k.loaded_source.empty() && !ctx.fs->Captured("/proc/modules")) {
    for (std::string& n : LoadedByEvidence(*ctx.fs, facts)) {
      LoadedModule m;
      m.name = std::move(n);
      m.state = "Live";
      k.loaded.push_back(std::move(m));
    }
    k.loaded_source = kInferredLoadedSource;
    facts.warnings.push_back(
        "/proc/modules is not in the tree: the loaded kernel modules are inferred from bound "
        "drivers, RDMA and IPoIB devices and /sys/module (" +
        std::to_string(k.loaded.size()) + " found)");
  }
  facts.loaded_modules.clear();
  for (const LoadedModule& m : k.loaded) facts.loaded_modules.push_back(m.name);
  facts.kmod = std::move(k);
  return OkStatus();
}

void KmodModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanKernelModules(desired, facts, sink);
}

Status KmodModule::Apply(const Change& change, HostContext& ctx) {
  if (change.attribute == kKmodAttrLoaded) {
    if (!change.after.is_boolean())
      return InvalidArgumentError(change.id + ": after must be a boolean");
    std::unique_ptr<KmodBackend> backend = NewKmodBackend(*ctx.fs);
    if (!change.after.get<bool>()) return backend->Unload(change.target);
    std::vector<std::string> deps;
    if (change.detail.is_object() && change.detail.contains("dependencies") &&
        change.detail["dependencies"].is_array()) {
      for (const auto& d : change.detail["dependencies"]) {
        if (d.is_string()) deps.push_back(d.get<std::string>());
      }
    }
    return backend->Load(change.target, deps);
  }
  if (change.attribute == kKmodAttrPersist) {
    if (change.after.is_null() || RestoresManagedFile(change, kModulesLoadConf)) {
      return WriteManagedFile(*ctx.fs, change, kModulesLoadConf, std::nullopt);
    }
    if (!change.after.is_array()) return InvalidArgumentError(change.id + ": after must be a list");
    std::vector<std::string> mods;
    for (const auto& m : change.after) {
      if (!m.is_string()) continue;
      mods.push_back(m.get<std::string>());
      // One module name per line: data, never a comment or a second token.
      RETURN_IF_ERROR(
          CheckConfigValue(ConfigSyntax::kModprobeToken, "kernel module name", mods.back())
              .WithContext("write " + std::string(kModulesLoadConf)));
    }
    return WriteManagedFile(*ctx.fs, change, kModulesLoadConf, RenderModulesLoad(mods));
  }
  return InvalidArgumentError("module kmod: unknown change " + change.id);
}

Status KmodModule::Verify(const Change& change, HostContext& ctx) {
  if (change.attribute == kKmodAttrLoaded) {
    KmodFacts k;
    auto loaded = NewKmodBackend(*ctx.fs)->ReadLoaded();
    if (!loaded.ok() && loaded.status().err() != ENOENT) return loaded.status();
    if (loaded.ok()) k.loaded = std::move(*loaded);
    const bool want = change.after.is_boolean() && change.after.get<bool>();
    const bool is = IsModuleLoaded(k, change.target);
    if (is != want) {
      return FailedPreconditionError(change.field_path + ": kernel module " + change.target +
                                     (want ? " is not loaded" : " is still loaded") +
                                     " after apply");
    }
    return OkStatus();
  }
  if (change.attribute == kKmodAttrPersist) {
    return VerifyManagedFile(*ctx.fs, change, kModulesLoadConf,
                             [&](const std::string& text) -> std::optional<std::string> {
                               const nlohmann::json got = ParseModulesLoad(text);
                               if (got == change.after) return std::nullopt;
                               return "lists " + got.dump() + ", desired " + change.after.dump();
                             });
  }
  return InvalidArgumentError("module kmod: unknown change " + change.id);
}

// Order 6: after pci (0, which reads the kernel release), before rdma (8),
// whose doctor checks read the loaded modules.
PROVISIONER_REGISTER_MODULE("kmod", KmodModule, "pci")

}  // namespace provisioner
