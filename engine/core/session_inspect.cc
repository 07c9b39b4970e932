// validate against a host, doctor's checks, snapshot (session.h).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <utility>

#include "engine/config/loader.h"
#include "engine/core/session.h"
#include "engine/model/topology.h"
#include "engine/module/registry.h"
#include "engine/output/facts_output.h"
#include "engine/output/render.h"

namespace provisioner {
namespace {

int Rank(Verdict v) { return v == Verdict::kFail ? 2 : v == Verdict::kWarn ? 1 : 0; }

// Creates `dir` (and its parents) or accepts it when it is an empty directory.
Status PrepareOutput(const std::string& dir) {
  if (dir.empty()) return InvalidArgumentError("--output: empty path");
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, "--output " + dir);
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return ErrnoToStatus(errno, "--output " + dir);
    bool empty = true;
    while (struct dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") empty = false;
    }
    ::closedir(d);
    if (!empty) {
      return FailedPreconditionError(
          "--output " + dir +
          ": directory is not empty; a snapshot needs a new or empty directory");
    }
    return OkStatus();
  }
  if (errno != ENOENT) return ErrnoToStatus(errno, "--output " + dir);
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoToStatus(errno, "--output: mkdir " + part);
    }
  }
  return OkStatus();
}

}  // namespace

ValidateOutcome ValidateFile(const std::string& file, const HostFacts* facts) {
  LoadOptions options;
  if (facts != nullptr) options.gpu_count = static_cast<int>(facts->topology.gpus.size());
  LoadResult r = LoadDesiredStateFromFile(file, options);
  ValidateOutcome out;
  out.diagnostics.items = r.diagnostics;
  out.diagnostics.marks = r.marks;
  out.expanded_json = r.expanded_json;
  if (r.state && facts != nullptr) {
    // Against this host: the nearGpu selectors (rails use them).
    std::vector<Diagnostic> near;
    for (auto& [path, message] : CheckNearGpu(*r.state, *facts)) {
      near.push_back(Diagnostic{Severity::kError, path, message});
    }
    for (auto& d : AttributeToRails(*r.state, std::move(near))) {
      out.diagnostics.items.push_back(std::move(d));
    }
    SortDiagnostics(out.diagnostics.marks, &out.diagnostics.items);
  }
  if (r.state && !HasErrors(out.diagnostics.items)) out.desired = std::move(r.state);
  return out;
}

std::vector<CheckResult> CheckHost(const DesiredState* desired, const HostFacts& facts) {
  CheckSink sink;
  // Checks are pure (desired + facts), so fresh module instances serve.
  for (const auto& m : ModuleRegistry::CreateAll()) m->Check(desired, facts, sink);
  std::vector<CheckResult> results = sink.results();
  std::stable_sort(results.begin(), results.end(), [](const CheckResult& a, const CheckResult& b) {
    return Rank(a.verdict) > Rank(b.verdict);
  });
  return results;
}

nlohmann::json FactsToJson(const HostFacts& facts) {
  nlohmann::json doc;
  doc["formatVersion"] = kFormatVersion;
  doc["root"] = facts.root;
  doc["kernel"] = {{"release", facts.kernel.release}};
  FactsJson out(&doc);
  for (const auto& m : ModuleRegistry::CreateAll()) m->RenderFactsJson(facts, out);
  doc["warnings"] = facts.warnings;
  return doc;
}

std::string RenderFactsTable(const HostFacts& facts) {
  std::string out =
      "Kernel: " + (facts.kernel.release.empty() ? "(unknown)" : facts.kernel.release) +
      "    RDMA netns mode: " + facts.rdma_netns_mode.value_or("(unknown)") + "\n\n";
  for (const auto& m : ModuleRegistry::CreateAll()) out += m->RenderFactsTable(facts);
  if (!facts.warnings.empty()) {
    out += "\nWarnings (discovery skipped these):\n";
    for (const auto& w : facts.warnings) out += "  " + w + "\n";
  }
  return out;
}

StatusOr<SnapshotStats> SnapshotHost(const std::string& root, const std::string& output_dir) {
  struct stat st;
  int root_err = ::stat(root.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  if (root_err != 0) return ErrnoToStatus(root_err, "--root " + root);
  struct stat out_st;
  const bool existed = ::stat(output_dir.c_str(), &out_st) == 0;
  RETURN_IF_ERROR(PrepareOutput(output_dir));
  // Never a partial snapshot: on failure, what was written goes (the
  // directory too when this call made it), so that a retry starts clean and
  // nobody mistakes half a tree for a capture.
  auto discard = [&](Status s) -> Status {
    std::error_code ec;
    if (!existed) {
      std::filesystem::remove_all(output_dir, ec);
    } else {
      for (const auto& e : std::filesystem::directory_iterator(output_dir, ec)) {
        std::filesystem::remove_all(e.path(), ec);
      }
    }
    return s;
  };
  std::unique_ptr<HostFs> host = NewLocalHostFs(root);
  HostFsRecord record;
  std::unique_ptr<HostFs> recording = NewRecordingHostFs(host.get(), &record);
  auto modules = ModuleRegistry::CreateAll();
  HostContext ctx;
  ctx.fs = recording.get();
  ctx.clock = &RealClock();
  auto facts = Discover(modules, ctx);
  if (!facts.ok()) {
    const Status& s = facts.status();
    return discard(Status(s.code(), "snapshot: " + s.message(), s.err()));
  }
  auto stats = WriteSnapshot(*host, record, output_dir);
  if (!stats.ok()) return discard(stats.status());
  // Read without root, sysfs gives the first 64 bytes of `config`: the
  // copies hold no capability (ACS, MaxReadReq), and plans from the tree
  // say "not captured".
  size_t short_configs = 0;
  std::string example;
  for (const auto& [bdf, f] : facts->pcie.functions) {
    if (f.config_size > 64) continue;
    if (example.empty()) example = "/sys/bus/pci/devices/" + bdf + "/config";
    ++short_configs;
  }
  if (short_configs > 0) {
    stats->partial.push_back(
        "config space copies are partial: " + std::to_string(short_configs) + " of " +
        std::to_string(facts->pcie.functions.size()) + " `config` files hold 64 bytes (e.g. " +
        example +
        "; read without root): ACS Control and MaxReadReq are not captured; run snapshot as "
        "root for them");
  }
  return stats;
}

}  // namespace provisioner
