// provisioner manifests FILE|DIR... [--root DIR | --roots DIR] [--helm-values FILE]
// One host.yaml, or a fleet: several files (a directory stands for its
// *.yaml/*.yml files), rendered one by one and merged (engine/manifests/
// fleet.h). Each host's discovered tree: --root for one host, --roots DIR for
// a fleet (DIR/<metadata.name>, e.g. the output of `provisioner snapshot`).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "engine/cli/commands.h"
#include "engine/core/session.h"
#include "engine/manifests/fleet.h"
#include "engine/manifests/manifests.h"
#include "engine/output/render.h"

namespace provisioner::cli {
namespace {

void PrintError(const std::string& message) {
  std::fprintf(stderr, "provisioner: error: %s\n", message.c_str());
}

bool IsDir(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool HasYamlSuffix(const std::string& name) {
  auto ends = [&](const char* s) {
    const size_t n = std::strlen(s);
    return name.size() > n && name.compare(name.size() - n, n, s) == 0;
  };
  return ends(".yaml") || ends(".yml");
}

// FILE arguments with each directory replaced by its *.yaml/*.yml files
// (sorted by name, not recursive).
std::optional<std::vector<std::string>> ExpandFiles(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const auto& arg : args) {
    if (!IsDir(arg)) {
      out.push_back(arg);
      continue;
    }
    DIR* dir = ::opendir(arg.c_str());
    if (dir == nullptr) {
      PrintError(arg + ": " + std::strerror(errno));
      return std::nullopt;
    }
    std::vector<std::string> names;
    while (dirent* e = ::readdir(dir)) {
      std::string name = e->d_name;
      if (name[0] != '.' && HasYamlSuffix(name)) names.push_back(name);
    }
    ::closedir(dir);
    std::sort(names.begin(), names.end());
    if (names.empty()) {
      PrintError(arg + ": no *.yaml or *.yml host files in this directory");
      return std::nullopt;
    }
    for (const auto& n : names) out.push_back(arg + (arg.back() == '/' ? "" : "/") + n);
  }
  return out;
}

// One host: load, discover its tree when there is one, render.
std::optional<manifests::HostRender> RenderHost(const CommonOptions& opt, const std::string& file,
                                                bool fleet) {
  auto desired = LoadOrReport(file);
  if (!desired) return std::nullopt;
  const std::string label = fleet ? desired->name + " (" + file + ")" : file;
  std::optional<HostFacts> facts;
  CommonOptions host_opt = opt;
  bool have_root = opt.root_given;
  if (!opt.roots_dir.empty()) {
    host_opt.root = opt.roots_dir + "/" + desired->name;
    if (!IsDir(host_opt.root)) {
      PrintError(label + ": no discovered tree at " + host_opt.root +
                 " (--roots DIR holds one directory per host, named by metadata.name)");
      return std::nullopt;
    }
    have_root = true;
  }
  if (have_root) {
    facts = DiscoverHost(host_opt);
    if (!facts) return std::nullopt;
    if (!ExpandRailsForHost(file, *facts, &*desired)) return std::nullopt;
  }
  if (desired->rails_need_gpu_count) {
    PrintError(label + ": spec.rails.count is allGpus: give --root DIR (or --roots) to count the GPUs");
    return std::nullopt;
  }
  manifests::ManifestOptions options;
  options.flavor = opt.flavor;
  options.with_test_workload = opt.with_test_workload;
  options.facts = facts ? &*facts : nullptr;
  if (facts) {
    // The node's health label: doctor's checks over the same facts.
    manifests::DoctorSummary doctor;
    for (const CheckResult& r : CheckHost(&*desired, *facts)) {
      ++doctor.checks;
      if (r.verdict == Verdict::kFail) ++doctor.failed;
      if (r.verdict == Verdict::kWarn) ++doctor.warnings;
    }
    options.doctor = doctor;
  }
  auto out = manifests::BuildHostManifests(*desired, options);
  if (!out.ok()) {
    PrintError(label + ": " + out.status().message());
    return std::nullopt;
  }
  return manifests::HostRender{desired->name + " (" + file + ")", std::move(out).value()};
}

}  // namespace

int RunManifests(const CommonOptions& opt) {
  std::vector<std::string> args = opt.files;
  if (args.empty() && !opt.file.empty()) args.push_back(opt.file);
  auto files = ExpandFiles(args);
  if (!files) return kExitError;
  const bool fleet = files->size() > 1;
  if (fleet && opt.root_given) {
    PrintError("--root is one host's tree; for " + std::to_string(files->size()) +
               " hosts give --roots DIR (DIR/<metadata.name> per host)");
    return kExitError;
  }
  if (opt.root_given && !opt.roots_dir.empty()) {
    PrintError("--root and --roots: give one of them");
    return kExitError;
  }
  std::vector<manifests::HostRender> hosts;
  hosts.reserve(files->size());
  bool failed = false;
  for (const auto& file : *files) {
    auto out = RenderHost(opt, file, fleet);
    if (!out) {
      failed = true;  // every host's problems are reported, then exit 1
      continue;
    }
    hosts.push_back(std::move(*out));
  }
  if (failed) return kExitError;
  auto merged = manifests::MergeHosts(std::move(hosts));
  if (!merged.ok()) {
    PrintError(merged.status().message());
    return kExitError;
  }
  for (const auto& w : merged->warnings) {
    std::fprintf(stderr, "provisioner: warning: %s\n", w.c_str());
  }
  if (!opt.helm_values_out.empty()) {
    if (opt.flavor != "spiderpool") {
      PrintError("--helm-values: the Spiderpool chart's values go with --flavor spiderpool");
      return kExitError;
    }
    std::ofstream f(opt.helm_values_out, std::ios::trunc);
    f << manifests::HelmValuesHeader(*merged, opt.helm_values_out);
    f << (merged->helm_values.empty() ? std::string("{}\n") : JsonToYaml(merged->helm_values));
    f.close();
    if (!f) {
      PrintError("write " + opt.helm_values_out + ": " + std::strerror(errno));
      return kExitError;
    }
  }
  Status s = manifests::WriteManifests(merged->manifests, opt.output_dir, std::cout);
  if (!s.ok()) {
    PrintError(s.message());
    return kExitError;
  }
  return kExitOk;
}

}  // namespace provisioner::cli
