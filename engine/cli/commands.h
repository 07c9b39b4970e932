// The subcommands behind the CLI.
#ifndef PROVISIONER_ENGINE_CLI_COMMANDS_H_
#define PROVISIONER_ENGINE_CLI_COMMANDS_H_

#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/base/temp_dir.h"
#include "engine/cli/version.h"  // kVersion
#include "engine/core/session.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "nlohmann/json.hpp"

namespace provisioner::cli {

// CONTRACT.md exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitError = 1;
inline constexpr int kExitChangesPending = 2;  // plan --detailed-exitcode
inline constexpr int kExitRebootRequired = 3;  // apply
// The longest duration an option takes (--settle-timeout, --lock-timeout): 24 h.
inline constexpr double kMaxDurationSeconds = 24 * 3600;

struct CommonOptions {
  std::string root = "/";
  std::string root_shown;  // the root as given, absolute (a .ttar stays one): JSON's "root"
  bool root_given = false;  // --root on the command line (else a saved plan's root)
  std::string output = "table";
  std::string file;
  std::string plan_out;
  std::string output_dir;
  bool detailed_exitcode = false;
  bool dry_run = false;
  bool rollback = false;  // apply --rollback: undo an interrupted apply
  double settle_timeout_s = 300;  // at most kMaxDurationSeconds, as every duration
  double lock_timeout_s = 0;  // apply: wait this long for another apply
  size_t parallelism = 0;     // apply --parallelism: changes at once (0: DefaultParallelism())
  bool color = false;                 // colours on stdout
  bool color_allowed = false;         // --no-color, NO_COLOR, TERM=dumb allow colours (a TTY decides)
  std::string flavor = "spiderpool";  // manifests: spiderpool | multus
  bool with_test_workload = false;    // manifests --with-test-workload
  std::vector<std::string> files;     // manifests FILE|DIR... (a fleet)
  std::string roots_dir;              // manifests --roots DIR: DIR/<metadata.name> per host
  std::string helm_values_out;        // manifests --helm-values FILE
  bool show_expanded = false;         // validate --show-expanded (spec.rails)
  bool auto_approve = false;          // apply -y/--auto-approve: never ask
  bool quiet = false;                 // -q/--quiet: errors only on stderr
  int verbose = 0;                    // -v (1), -vv, -vvv: also each step of a change
  std::string only;                   // doctor --only fail|warn|ok
};

// --root FILE (a regular file): a ttar archive of a host tree (the bundled
// examples/hosts/*.ttar), extracted into a private temporary directory,
// removed with the ArchiveRoot. For read-only commands only.
bool IsArchiveRoot(const std::string& root);
class ArchiveRoot {
 public:
  ArchiveRoot() = default;
  ~ArchiveRoot();
  ArchiveRoot(const ArchiveRoot&) = delete;
  ArchiveRoot& operator=(const ArchiveRoot&) = delete;
  // Extracts `archive`; "" on success (path() is the root), else the error.
  std::string Extract(const std::string& archive);
  const std::string& path() const { return dir_.path(); }

 private:
  ScopedTempDir dir_;
};

// The root as an absolute, normal path ("." -> "/home/me/tree"): what a
// saved plan stores and what apply names when it asks.
std::string AbsoluteRoot(const std::string& root);
// approval.cc: stdin is a terminal and the process has a controlling
// terminal: a person typed the command and can answer a question, whatever
// stdout is (`apply host.yaml | tee log`, `apply -o json > result.json`).
bool Interactive();
// Where apply shows its plan and asks: stdout when it is the terminal and
// the output is the table; else stderr when that is a terminal; else
// /dev/tty (stdout and stderr both redirected). Never null.
std::FILE* PromptStream(const CommonOptions& opt);
// Asks `question` on `out` and reads one line from stdin: true for "y" or
// "yes" (any case); false for anything else and at end of input. The only
// place apply reads an answer.
bool Confirm(std::FILE* out, const std::string& question);

// duration.cc: seconds from "300", "2.5", "30s", "5m", "1h", "1m30s"; at
// most a day. nullopt and `error` ("expected seconds ...") otherwise.
std::optional<double> ParseDurationSeconds(const std::string& text, std::string* error);

// show_cmd.cc: 1 when `file` is a saved plan (in *saved), 0 when it is
// something else (a host.yaml), -1 on a read error or a malformed saved
// plan (*error says which).
int SavedPlanState(const std::string& file, std::optional<SavedPlan>* saved, std::string* error);
// show_cmd.cc: `show PLANFILE`, a saved plan as plan printed it.
int RunShow(const CommonOptions& opt);

int RunDiscover(const CommonOptions& opt);
int RunValidate(const CommonOptions& opt);
int RunPlan(const CommonOptions& opt);
int RunApply(const CommonOptions& opt);
// manifests_cmd.cc: one host.yaml or a fleet of them.
int RunManifests(const CommonOptions& opt);
// doctor_cmd.cc: module checks; exit 1 when any fails.
int RunDoctor(const CommonOptions& opt);
// rails_cmd.cc: validate with --root and/or --show-expanded (spec.rails).
int RunValidateExpanded(const CommonOptions& opt);
// rails_cmd.cc: expands spec.rails count: allGpus for this host's GPUs
// (reloading FILE); prints diagnostics and returns false on errors. A no-op
// for any other desired state.
bool ExpandRailsForHost(const std::string& file, const HostFacts& facts, DesiredState* desired);
// agent_cmd.cc: `provisioner agent FILE` (engine/agent/agent.h) and
// `provisioner status` (the agent's status.json).
struct AgentCommandOptions {
  double debounce_s = 2;
  double resync_s = 600;
  std::string metrics_address = "127.0.0.1:9814";
  bool metrics_address_given = false;
};
int RunAgentCommand(const AgentCommandOptions& agent, const CommonOptions& opt);
int RunStatus(const CommonOptions& opt);
// snapshot_cmd.cc: copy what discovery reads into --output.
int RunSnapshot(const CommonOptions& opt);
// --root checked, modules discovered; errors printed. nullopt -> exit 1.
std::optional<HostFacts> DiscoverHost(const CommonOptions& opt);
// Loads host.yaml; prints every diagnostic; nullopt when there are errors.
std::optional<DesiredState> LoadOrReport(const std::string& file);
// A JSON document on stdout as JSON (format "json") or YAML ("yaml").
void PrintDocument(const nlohmann::json& doc, const std::string& format);
// selector_hints.cc: under a "nicSelector: selects no PCI function" error
// `d` (of `batch`), at its file:line:column, what could match: the field
// that excludes every function here, or the functions that satisfy the
// selector's other fields and the nearest of their names to the one asked
// for. Once per field (`done`); nothing for any other diagnostic.
void PrintSelectorHint(const std::string& file, const PlanOutcome& p, const FileDiagnostics& batch,
                       const Diagnostic& d, std::set<std::string>* done);
// Each diagnostic on stderr as file:line:column (warnings not under -q), and
// `after` (if given) under each one printed.
void PrintDiagnostics(const std::string& file, const FileDiagnostics& diagnostics,
                      const std::function<void(const Diagnostic&)>& after = nullptr);
// apply_recovery.cc: `apply --rollback` without FILE: opt->file becomes the
// host.yaml the interrupted apply's journal names. Returns -1 to go on, or
// the exit code when there is nothing to go on with (no journal: nothing to
// roll back, exit 0), after saying so. A journal an older provisioner wrote
// names none: opt->file becomes "", and the rollback runs from the journal
// alone over JournalOnlyHostYaml(), a host.yaml that declares nothing.
int UseJournalHostYaml(CommonOptions* opt);
std::string JournalOnlyHostYaml();
// "the interrupted apply's journal ROOT/run/provisioner/journal.json is
// kept; roll back with its host.yaml: provisioner apply --rollback FILE
// --root ROOT": when a rollback from the journal alone failed.
std::string RollbackWithFileHint(const std::string& root);
bool JournalKept(const std::string& root);  // the journal is under the root
// apply_recovery.cc: after a failed apply, what to do next for its kind of
// failure ("" when there is no better advice than the message): a wait that
// timed out (dmesg, a longer --settle-timeout), a write the kernel refused
// (dmesg, and the driver for what it does not support), a device held busy.
std::string ApplyNextStep(const Status& failure, double settle_timeout_s);
// stats_env.cc: PROVISIONER_STATS=<file> gets the host layer's counters as JSON at exit.
void WriteStatsAtExitIfAsked();

}  // namespace provisioner::cli

#endif  // PROVISIONER_ENGINE_CLI_COMMANDS_H_
