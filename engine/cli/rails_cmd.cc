// spec.rails on the command line: `validate FILE [--root DIR]
// [--show-expanded]` and the plan-time expansion of `count: allGpus`
// (engine/config/rails.h) once the host's GPUs are known.
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>

#include "engine/cli/commands.h"
#include "engine/config/loader.h"
#include "engine/config/rails.h"
#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "engine/model/topology.h"
#include "engine/module/registry.h"
#include "engine/output/render.h"
#include "nlohmann/json.hpp"

namespace provisioner::cli {
namespace {

void PrintDiagnostics(const std::string& file, const LoadResult& r) {
  for (const auto& d : r.diagnostics) {
    std::fprintf(stderr, "%s\n", FormatDiagnostic(file, r.marks, d).c_str());
  }
}

int CountErrors(const std::vector<Diagnostic>& diags) {
  int n = 0;
  for (const auto& d : diags) n += d.severity == Severity::kError;
  return n;
}

}  // namespace

bool ExpandRailsForHost(const std::string& file, const HostFacts& facts, DesiredState* desired) {
  if (!desired->rails_need_gpu_count) return true;
  LoadOptions options;
  options.gpu_count = static_cast<int>(facts.topology.gpus.size());
  LoadResult r = LoadDesiredStateFromFile(file, options);
  PrintDiagnostics(file, r);
  if (!r.state || HasErrors(r.diagnostics)) {
    const int n = CountErrors(r.diagnostics);
    std::fprintf(stderr, "provisioner: %s: %d error%s (spec.rails with count: allGpus, %zu GPUs)\n",
                 file.c_str(), n, n == 1 ? "" : "s", facts.topology.gpus.size());
    return false;
  }
  *desired = std::move(*r.state);
  return true;
}

std::vector<Diagnostic> AttributeToRails(const DesiredState& desired,
                                         std::vector<Diagnostic> diags) {
  return config::AttributeToRails(desired.rail_origins, std::move(diags));
}

int RunValidateExpanded(const CommonOptions& opt) {
  std::optional<HostFacts> facts;
  if (opt.root_given) {
    facts = DiscoverHost(opt);
    if (!facts) return kExitError;
  }
  LoadOptions options;
  if (facts) options.gpu_count = static_cast<int>(facts->topology.gpus.size());
  LoadResult r = LoadDesiredStateFromFile(opt.file, options);
  std::vector<Diagnostic> diags = r.diagnostics;
  if (r.state && facts) {
    // Against this host: the nearGpu selectors (rails use them).
    std::vector<Diagnostic> near;
    for (auto& [path, message] : CheckNearGpu(*r.state, *facts)) {
      near.push_back(Diagnostic{Severity::kError, path, message});
    }
    for (auto& d : AttributeToRails(*r.state, std::move(near))) diags.push_back(std::move(d));
  }
  for (const auto& d : diags) {
    std::fprintf(stderr, "%s\n", FormatDiagnostic(opt.file, r.marks, d).c_str());
  }
  if (!r.state || HasErrors(diags)) {
    const int n = CountErrors(diags);
    std::fprintf(stderr, "provisioner: %s: %d error%s\n", opt.file.c_str(), n, n == 1 ? "" : "s");
    return kExitError;
  }
  if (opt.show_expanded) {
    if (r.state->rails_need_gpu_count) {
      std::fprintf(stderr,
                   "provisioner: %s: spec.rails.count is allGpus: expanded at plan time; give "
                   "--root DIR to expand it for that host\n",
                   opt.file.c_str());
    }
    std::cout << JsonToYaml(nlohmann::json::parse(r.expanded_json));
    return kExitOk;
  }
  const DesiredState& d = *r.state;
  std::printf("%s: valid (%zu nics, %zu ipPools, %zu multusConfigs, %zu kernelModules)\n",
              opt.file.c_str(), d.nics.size(), d.ip_pools.size(), d.multus_configs.size(),
              d.kernel_modules.size());
  return kExitOk;
}

}  // namespace provisioner::cli
