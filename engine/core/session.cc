// Opening a host, loading host.yaml and planning (session.h).
#include "engine/core/session.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <sstream>
#include <utility>

#include "engine/base/fd_io.h"
#include "engine/base/strings.h"
#include "engine/config/loader.h"
#include "engine/config/rails.h"
#include "engine/module/registry.h"
#include "engine/output/render.h"
#include "nlohmann/json.hpp"

namespace provisioner {
namespace {

using nlohmann::json;

// host.yaml as a saved plan names it (desiredFile): as bounded as the loader
// reads it, and only a regular file (a FIFO there hung, /dev/zero read
// gigabytes and aborted with bad_alloc).
StatusOr<std::string> ReadWholeFile(const std::string& path) {
  constexpr size_t kMaxDesiredBytes = size_t{4} << 20;  // the loader's bound
  std::string out;
  const char* not_regular = nullptr;
  if (int e = ReadRegularFile(path, kMaxDesiredBytes, &out, &not_regular); e != 0) {
    if (e < 0) {
      return FailedPreconditionError("read " + path + ": " + not_regular +
                                     ", not a regular file: refused");
    }
    if (e == EFBIG) {
      return FailedPreconditionError("read " + path + ": larger than " +
                                     std::to_string(kMaxDesiredBytes) + " bytes: refused");
    }
    return ErrnoToStatus(e, "read " + path);
  }
  return out;
}

// The first field in which two change records differ, with both values
// ("after: 4 in the plan file, 8 when planned again"); "" when equal.
std::string FirstDifference(const json& got, const json& want) {
  if (!got.is_object() || !want.is_object()) return "";
  std::vector<std::string> keys;
  for (auto it = want.begin(); it != want.end(); ++it) keys.push_back(it.key());
  for (auto it = got.begin(); it != got.end(); ++it) {
    if (!want.contains(it.key())) keys.push_back(it.key());
  }
  for (const std::string& k : keys) {
    const json a = got.contains(k) ? got[k] : json();
    const json b = want.contains(k) ? want[k] : json();
    if (a == b) continue;
    return Quote(k) + ": " + Quote(got.contains(k) ? a.dump() : "(none)") + " in the plan file, " +
           Quote(want.contains(k) ? b.dump() : "(none)") + " when planned again";
  }
  return "";
}

std::string AbsolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  if (::getcwd(cwd, sizeof cwd) == nullptr) return path;
  return std::string(cwd) + "/" + path;
}

// The diagnostics of one load of host.yaml.
FileDiagnostics DiagnosticsOf(const LoadResult& r, FileDiagnostics::Stage stage) {
  FileDiagnostics d;
  d.stage = stage;
  d.items = r.diagnostics;
  d.marks = r.marks;
  return d;
}

// host.yaml has errors: the last batch of diagnostics says which.
void StopInvalid(const std::string& file, PlanOutcome* p) {
  const int n = p->diagnostics.back().errors();
  p->file_invalid = true;
  p->status =
      InvalidArgumentError(file + ": " + std::to_string(n) + " error" + (n == 1 ? "" : "s"));
}

}  // namespace

int FileDiagnostics::errors() const {
  int n = 0;
  for (const auto& d : items) n += d.severity == Severity::kError;
  return n;
}

StatusOr<std::unique_ptr<Host>> OpenHost(const HostOptions& options) {
  struct stat st;
  if (::stat(options.root.c_str(), &st) != 0) {
    return ErrnoToStatus(errno, "--root " + options.root);
  }
  if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, "--root " + options.root);
  auto host = std::make_unique<Host>();
  host->fs = options.open_fs ? options.open_fs(options.root) : NewLocalHostFs(options.root);
  host->modules = ModuleRegistry::CreateAll();
  host->ctx.fs = host->fs.get();
  host->ctx.clock = options.clock != nullptr ? options.clock : &RealClock();
  host->ctx.progress = options.progress;
  host->ctx.settle_timeout = options.settle_timeout;
  return host;
}

StatusOr<HostFacts> DiscoverHost(const HostOptions& options) {
  auto host = OpenHost(options);
  if (!host.ok()) return host.status();
  return Discover((*host)->modules, (*host)->ctx);
}

LoadOutcome LoadFile(const std::string& file, const std::string* text) {
  LoadResult r = text != nullptr ? LoadDesiredStateFromString(*text, file)
                                 : LoadDesiredStateFromFile(file);
  LoadOutcome out;
  out.diagnostics = DiagnosticsOf(r, FileDiagnostics::Stage::kLoad);
  if (r.state && !HasErrors(r.diagnostics)) out.desired = std::move(r.state);
  return out;
}

bool ExpandRails(const std::string& file, const HostFacts& facts, DesiredState* desired,
                 FileDiagnostics* diagnostics) {
  if (!desired->rails_need_gpu_count) return true;
  LoadOptions options;
  options.gpu_count = static_cast<int>(facts.topology.gpus.size());
  // The document as loaded: host.yaml is read and parsed once.
  LoadResult r = desired->unexpanded
                     ? LoadDesiredStateFromDocument(*desired->unexpanded, file, options)
                     : LoadDesiredStateFromFile(file, options);
  *diagnostics = DiagnosticsOf(r, FileDiagnostics::Stage::kRails);
  diagnostics->gpus = facts.topology.gpus.size();
  if (!r.state || HasErrors(r.diagnostics)) return false;
  *desired = std::move(*r.state);
  return true;
}

std::vector<Diagnostic> AttributeToRails(const DesiredState& desired,
                                         std::vector<Diagnostic> diags) {
  return config::AttributeToRails(desired.rail_origins, std::move(diags));
}

// A saved plan's digest of its host.yaml (CanonicalDesiredText).
static std::string DesiredDigest(const std::string& bytes) {
  return Digest(CanonicalDesiredText(bytes));
}

std::string FactsDigest(const HostFacts& facts) {
  json j = FactsToJson(facts);
  j.erase("root");
  // What modules plan from beyond discover's output (Module::DigestedFacts).
  for (const auto& m : ModuleRegistry::CreateAll()) {
    json more = m->DigestedFacts(facts);
    if (!more.is_null()) j["digested"][std::string(m->name())] = std::move(more);
  }
  return Digest(j.dump());
}

PlanOutcome PlanFile(const PlanRequest& request) {
  PlanOutcome p;
  LoadOutcome loaded = LoadFile(request.file, request.text ? &*request.text : nullptr);
  p.diagnostics.push_back(std::move(loaded.diagnostics));
  if (!loaded.desired) {
    StopInvalid(request.file, &p);
    return p;
  }
  p.desired = std::move(*loaded.desired);
  auto host = OpenHost(request.host);
  if (!host.ok()) {
    p.status = host.status();
    return p;
  }
  p.host = std::move(host).value();
  if (request.lock) {
    auto lock = AcquireHostLock(*p.host->fs, kApplyLockPath, request.lock_timeout);
    if (!lock.ok()) {
      p.status = lock.status();
      // Who holds it, as plan's warning says: the running apply's journal.
      if (auto holder = ReadJournal(*p.host->fs);
          p.status.code() == StatusCode::kUnavailable && holder.ok() && *holder) {
        p.status = Status(StatusCode::kUnavailable,
                          "an apply is in progress (pid " + std::to_string((*holder)->pid) +
                              ", since " + (*holder)->started_at + "): " + p.status.message(),
                          EWOULDBLOCK);
      }
      return p;
    }
    p.lock = std::move(lock).value();
  }
  // For planning: modules may skip facts no Plan reads (HostContext::plan_for).
  auto facts = Discover(p.host->modules, p.host->ctx, p.desired);
  if (!facts.ok()) {
    p.status = facts.status();
    return p;
  }
  if (p.desired.rails_need_gpu_count) {
    p.diagnostics.emplace_back();
    if (!ExpandRails(request.file, *facts, &p.desired, &p.diagnostics.back())) {
      StopInvalid(request.file, &p);
      return p;
    }
    // The rails' nics may ask for facts the unexpanded state did not.
    Status more = DiscoverForPlan(p.host->modules, p.host->ctx, p.desired, *facts);
    if (!more.ok()) {
      p.status = more;
      return p;
    }
  }
  for (const auto& f : facts->pci) {
    if (f.IsNetwork() && !f.IsVf()) {
      p.nics_here.push_back({f.pci_address, f.netdevs, f.vendor + ":" + f.device_id});
    }
  }
  PlanResult result = BuildPlan(p.host->modules, p.desired, *facts);
  p.plan = std::move(result.plan);
  if (auto pending = p.host->fs->ReadFile(kPendingRebootPath); pending.ok()) {
    const json deferred = json::parse(*pending, nullptr, false);
    for (const auto& c : p.plan.changes) {
      if (!deferred.is_array()) break;
      for (const auto& d : deferred) {
        if (d.is_object() && d.value("id", "") == c.id && d.contains("after") &&
            d["after"] == c.after) {
          p.plan.pending_reboot.push_back(c.id);
          break;
        }
      }
    }
  }
  p.facts_digest = FactsDigest(*facts);
  auto journal = ReadJournal(*p.host->fs);
  if (!journal.ok()) {
    p.status = journal.status();
    return p;
  }
  if (*journal) {
    p.interrupted = std::move(**journal);
    if (!request.lock && HostLockHeld(*p.host->fs, kApplyLockPath)) {
      // Its journal, but the apply holds the lock: running, not interrupted.
      p.plan.warnings.push_back(
          "an apply is in progress (pid " + std::to_string(p.interrupted->pid) + ", since " +
          p.interrupted->started_at + "); this plan is of the host mid-apply");
    } else {
      p.plan.warnings.push_back(
          "an earlier apply was interrupted (" + p.interrupted->Describe() +
          "); apply converges from the current state, apply --rollback undoes it");
    }
  }
  FileDiagnostics planned;
  planned.stage = FileDiagnostics::Stage::kPlan;
  planned.items = AttributeToRails(p.desired, std::move(result.diagnostics));
  planned.marks = p.desired.marks;
  // In file order, causes before their knock-ons (not module order).
  SortDiagnostics(planned.marks, &planned.items);
  p.diagnostics.push_back(std::move(planned));
  if (p.diagnostics.back().errors() > 0) StopInvalid(request.file, &p);
  p.facts = std::move(*facts);
  return p;
}

PlanOutcome PlanSavedFile(const SavedPlan& saved, const std::string& plan_file, PlanRequest request,
                          bool root_given) {
  if (!root_given) request.host.root = saved.root;
  request.file = saved.desired_file;
  PlanOutcome refused;
  auto bytes = ReadWholeFile(request.file);
  if (!bytes.ok()) {
    refused.status = bytes.status().WithContext("saved plan " + plan_file + ": its host.yaml");
    return refused;
  }
  // The digest of the parsed document (a comment or layout edit keeps it);
  // a plan saved by an older binary holds the bytes' digest.
  const std::string now = DesiredDigest(*bytes);
  if (now != saved.desired_digest && Digest(*bytes) != saved.desired_digest) {
    refused.status =
        FailedPreconditionError("refusing saved plan " + plan_file + ": " + request.file +
                                " changed since the plan was made (desired-state digest " +
                                saved.desired_digest + ", now " + now + "); run plan again");
    return refused;
  }
  PlanOutcome p = PlanFile(request);
  if (!p.status.ok()) return p;
  if (p.facts_digest != saved.facts_digest && p.plan.changes.empty() && !saved.changes.empty() &&
      !p.interrupted) {
    // Applied already (this plan, or another run to the same state).
    p.already_applied = true;
    return p;
  }
  if (p.facts_digest != saved.facts_digest) {
    p.status = FailedPreconditionError(
        "refusing saved plan " + plan_file + ": the host under " + request.host.root +
        " changed since the plan was made (facts digest " + saved.facts_digest + ", now " +
        p.facts_digest + "); run plan again");
    return p;
  }
  // Apply exactly the saved changes, each by a module this binary has.
  for (const auto& c : saved.changes) {
    bool known = false;
    for (const auto& m : p.host->modules) known = known || m->name() == c.module;
    if (!known) {
      p.status = FailedPreconditionError("saved plan " + plan_file + ": change " + c.id +
                                         " needs module " + c.module +
                                         ", which this provisioner does not have");
      return p;
    }
  }
  // The digests say the host.yaml and the host are those the plan was made
  // from, so planning again gives the same changes. A saved change that is
  // not one of them was edited (a target leaving the root, another value):
  // refused before anything is applied, as terraform refuses a changed plan.
  // Both sides as the plan file holds them: the re-planned changes go
  // through the same record writer and reader as the saved ones did.
  const size_t n = std::max(saved.changes.size(), p.plan.changes.size());
  for (size_t i = 0; i < n; ++i) {
    const json got = i < saved.changes.size() ? ChangeToRecord(saved.changes[i]) : json();
    json want;
    if (i < p.plan.changes.size()) {
      auto round_trip = ParseChangeRecord(ChangeToRecord(p.plan.changes[i]));
      want = round_trip.ok() ? ChangeToRecord(*round_trip) : ChangeToRecord(p.plan.changes[i]);
    }
    if (got == want) continue;
    const std::string got_id =
        got.is_object() ? got.value("id", std::string()) : std::string("(none)");
    const std::string want_id =
        want.is_object() ? want.value("id", std::string()) : std::string("(none)");
    std::string what;
    if (!got.is_object()) {
      what = "is missing from the plan file (" + request.file + " plans " + Quote(want_id) + ")";
    } else if (!want.is_object()) {
      what = "(" + Quote(got_id) + ") is not planned by " + request.file + " for this host";
    } else if (got_id != want_id) {
      what = "(" + Quote(got_id) + ") is not what " + request.file + " plans for this host (" +
             Quote(want_id) + ")";
    } else {
      what = "(" + Quote(got_id) + ") differs from what " + request.file +
             " plans: " + FirstDifference(got, want);
    }
    p.status = FailedPreconditionError("refusing saved plan " + plan_file + ": change " +
                                       std::to_string(i + 1) + " " + what +
                                       "; the plan file was edited; run plan again");
    return p;
  }
  p.plan.changes = saved.changes;
  return p;
}

json SavedPlanRecord(const PlanOutcome& planned, const std::string& file, const std::string& root) {
  auto desired_bytes = ReadWholeFile(file);
  json saved = PlanToJson(planned.plan, root);
  saved["kind"] = kSavedPlanKind;
  saved["desiredFile"] = AbsolutePath(file);
  saved["digests"] = {{"desired", desired_bytes.ok() ? DesiredDigest(*desired_bytes) : ""},
                      {"facts", planned.facts_digest}};
  json records = json::array();
  for (const auto& c : planned.plan.changes) records.push_back(ChangeToRecord(c));
  saved["changes"] = records;
  return saved;
}

}  // namespace provisioner
