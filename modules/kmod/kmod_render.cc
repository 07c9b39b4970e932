// discover output of the kmod module: `kernelModules` (loaded modules; with
// kmod discovery, their parameters and what modprobe.d says).
#include "engine/output/facts_output.h"
#include "modules/kmod/kmod_module.h"

namespace provisioner {

using nlohmann::json;

void KmodModule::RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
  json km = {{"loaded", StringList(facts.loaded_modules)}};
  if (facts.kmod.discovered) {
    km["parameters"] = facts.kmod.parameters;
    km["loadedSource"] = facts.kmod.loaded_source.empty() ? json() : json(facts.kmod.loaded_source);
    auto entries = [](const std::vector<ModprobeEntry>& v) {
      json a = json::array();
      for (const auto& e : v) a.push_back({{"module", e.module}, {"value", e.value}});
      return a;
    };
    km["modprobe"] = {{"options", entries(facts.kmod.options)},
                      {"blacklist", StringList(facts.kmod.blacklist)},
                      {"install", entries(facts.kmod.install)},
                      {"remove", entries(facts.kmod.remove)},
                      {"softdeps", entries(facts.kmod.softdeps)}};
    km["modulesDir"] = facts.kmod.modules_dir;
    km["modulesDepFound"] = facts.kmod.modules_dep_found;
    km["persisted"] = facts.kmod.persisted ? json(*facts.kmod.persisted) : json(nullptr);
  }
  out.doc()["kernelModules"] = std::move(km);
}

}  // namespace provisioner
