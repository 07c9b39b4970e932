// spec.rails on the command line: `validate FILE [--root DIR]
// [--show-expanded]` and the plan-time expansion of `count: allGpus`
// (engine/config/rails.h) once the host's GPUs are known.
#include <cstdio>
#include <iostream>
#include <optional>

#include "engine/cli/commands.h"
#include "engine/core/session.h"
#include "engine/output/render.h"
#include "nlohmann/json.hpp"

namespace provisioner::cli {

bool ExpandRailsForHost(const std::string& file, const HostFacts& facts, DesiredState* desired) {
  FileDiagnostics diags;  // empty unless spec.rails count: allGpus reloads host.yaml
  const bool ok = ExpandRails(file, facts, desired, &diags);
  PrintDiagnostics(file, diags);
  if (ok) return true;
  const int n = diags.errors();
  std::fprintf(stderr, "provisioner: %s: %d error%s (spec.rails with count: allGpus, %zu GPUs)\n",
               file.c_str(), n, n == 1 ? "" : "s", diags.gpus);
  return false;
}

int RunValidateExpanded(const CommonOptions& opt) {
  std::optional<HostFacts> facts;
  if (opt.root_given) {
    facts = DiscoverHost(opt);
    if (!facts) return kExitError;
  }
  ValidateOutcome v = ValidateFile(opt.file, facts ? &*facts : nullptr);
  PrintDiagnostics(opt.file, v.diagnostics);
  if (!v.desired) {
    const int n = v.diagnostics.errors();
    std::fprintf(stderr, "provisioner: %s: %d error%s\n", opt.file.c_str(), n, n == 1 ? "" : "s");
    return kExitError;
  }
  if (opt.show_expanded) {
    if (v.desired->rails_need_gpu_count) {
      std::fprintf(stderr,
                   "provisioner: %s: spec.rails.count is allGpus: expanded at plan time; give "
                   "--root DIR to expand it for that host\n",
                   opt.file.c_str());
    }
    std::cout << OrderedJsonToYaml(nlohmann::ordered_json::parse(v.expanded_json));
    return kExitOk;
  }
  const DesiredState& d = *v.desired;
  std::printf("%s: valid (%zu nics, %zu ipPools, %zu multusConfigs, %zu kernelModules)\n",
              opt.file.c_str(), d.nics.size(), d.ip_pools.size(), d.multus_configs.size(),
              d.kernel_modules.size());
  return kExitOk;
}

}  // namespace provisioner::cli
