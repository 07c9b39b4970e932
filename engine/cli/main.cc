// provisioner: a thin CLI. Each subcommand declares its flags and calls the
// engine; every command shares the same renderers and exit codes
// (CONTRACT.md section 2).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "engine/base/interrupt.h"
#include "engine/base/strings.h"
#include "engine/cli/commands.h"
#include "engine/cli/help_text.h"
#include "engine/cli/mistyped_words.h"
#include "engine/cli/version.h"
#include "engine/output/progress.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace {

using provisioner::cli::CommonOptions;
using provisioner::cli::KnownCommand;
using provisioner::cli::NearestOption;
using provisioner::cli::OptionOfAnother;

// Rewrites argv before CLI11 sees it: `help [COMMAND]` is `[COMMAND] --help`,
// and `-o=json` is `-o json` (CLI11 would read the value "=json"). Returns
// false (after printing why) for terraform's single-dash `-out`.
bool NormalizeArgs(int argc, char** argv, std::vector<std::string>* args) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-out" || a.rfind("-out=", 0) == 0) {
      std::fprintf(stderr,
                   "provisioner: unknown option %s (terraform's); to save a plan for apply: "
                   "provisioner plan FILE --out PLANFILE\n",
                   a.c_str());
      return false;
    }
    if (a.size() > 3 && a.rfind("-o=", 0) == 0) {
      args->push_back("-o");
      args->push_back(a.substr(3));
      continue;
    }
    args->push_back(a);
  }
  // The first word that is not a global option (or its value).
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string& a = (*args)[i];
    if (a == "--log-level") {
      ++i;
      continue;
    }
    if (!a.empty() && a[0] == '-') continue;
    if (a == "help") {
      args->erase(args->begin() + static_cast<std::ptrdiff_t>(i));
      args->push_back("--help");
    }
    break;
  }
  return true;
}

// --settle-timeout / --lock-timeout: ParseDurationSeconds's words on error.
CLI::Validator Duration(bool zero_ok) {
  return CLI::Validator(
      [zero_ok](std::string& text) -> std::string {
        std::string error;
        auto seconds = provisioner::cli::ParseDurationSeconds(text, &error);
        if (!seconds) return error;
        if (!zero_ok && *seconds <= 0) return "want more than 0 s up to 86400 (24 h), got \"" + text + "\"";
        return "";
      },
      "");
}

// no-color.org: NO_COLOR set and not empty; TERM=dumb has no colours either.
bool ColorAllowed(bool no_color_flag) {
  if (no_color_flag) return false;
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  return term == nullptr || std::string(term) != "dumb";
}

// stderr's sink, with the terminal progress's status lines cleared before
// each log line and drawn again after it (ConsoleProgress::WriteAbove): a
// warning during apply starts on its own line instead of after "| provisioner:
// enable SR-IOV (1.2s)", and the status line comes back below it.
class AboveProgressSink final : public spdlog::sinks::sink {
 public:
  explicit AboveProgressSink(std::shared_ptr<spdlog::sinks::sink> inner)
      : inner_(std::move(inner)) {}
  void log(const spdlog::details::log_msg& msg) override {
    provisioner::ConsoleProgress::WriteAbove([&] {
      inner_->log(msg);
      inner_->flush();
    });
  }
  void flush() override { inner_->flush(); }
  void set_pattern(const std::string& pattern) override { inner_->set_pattern(pattern); }
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override {
    inner_->set_formatter(std::move(formatter));
  }

 private:
  std::shared_ptr<spdlog::sinks::sink> inner_;
};

void SetUpLogging(const std::string& level, bool color) {
  std::shared_ptr<spdlog::sinks::sink> stderr_sink;
  if (color) {
    stderr_sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  } else {
    stderr_sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  }
  auto logger = std::make_shared<spdlog::logger>(
      "provisioner", std::make_shared<AboveProgressSink>(std::move(stderr_sink)));
  logger->set_pattern("provisioner: %l: %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(spdlog::level::from_str(level));
}

// A closed stdout (`>&-`): fd 1 would be the next file opened (the lock,
// a temporary file) and the output written into it. /dev/full in its place
// makes every write fail, which FinishStdout reports.
bool OccupyClosedStdout() {
  if (::fcntl(STDOUT_FILENO, F_GETFD) != -1 || errno != EBADF) return false;
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  if (fd >= 0 && fd != STDOUT_FILENO) {
    ::dup2(fd, STDOUT_FILENO);
    ::close(fd);
  }
  return true;
}

// Flushes stdout and reports a write that failed (/dev/full, a closed
// stdout, a full disk): exit 1 with a message on stderr, never exit 0 with
// the output cut. EPIPE keeps the conventional SIGPIPE (the process dies of
// it on the write).
int FinishStdout(int rc, bool stdout_closed) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int e = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return rc;
  if (stdout_closed) {
    std::fprintf(stderr, "provisioner: stdout is closed: the output was not written\n");
  } else {
    std::fprintf(stderr, "provisioner: write to stdout failed: %s; the output is incomplete\n",
                 e != 0 ? std::strerror(e) : "an earlier write failed");
  }
  return provisioner::cli::kExitError;
}

int Dispatch(int argc, char** argv);

// SIGTERM/SIGINT/SIGHUP from main's first instruction on: recorded, not
// fatal. apply keeps it (its own guard nests inside and rolls back); the
// other commands exit 1 if one came before they start, then get the
// default dispositions back.
std::optional<provisioner::InterruptGuard> early_guard;

}  // namespace

int main(int argc, char** argv) {
  const bool stdout_closed = OccupyClosedStdout();
  early_guard.emplace();
  // Delivered now if pending: a supervisor may start us with them blocked.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&stop_signals, sig);
  ::sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
  int rc = Dispatch(argc, argv);
  return FinishStdout(rc, stdout_closed);
}

namespace {

int Dispatch(int argc, char** argv) {
  provisioner::cli::WriteStatsAtExitIfAsked();
  CLI::App app{
      "provisioner: declarative provisioning of GPU/RDMA hosts (SR-IOV, RDMA, kernel modules)",
      "provisioner"};
  app.require_subcommand(1);
  app.set_version_flag("--version", provisioner::cli::VersionLine());
  // Global options after the subcommand too (`plan f.yaml --log-level debug`).
  app.fallthrough();

  CommonOptions opt;
  std::string settle_timeout = "300";
  std::string lock_timeout = "0";
  std::string log_level = "warn";
  bool no_color = false;
  int verbose = 0;
  CLI::Option* log_level_opt =
      app.add_option("--log-level", log_level, "Log level on stderr")
          ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
          ->type_name("LEVEL")
          ->capture_default_str();
  app.add_flag("--no-color", no_color,
               "No ANSI colours (also NO_COLOR set and not empty, TERM=dumb)");
  CLI::Option* quiet_opt =
      app.add_flag("-q,--quiet", opt.quiet, "Errors only on stderr: no progress, no warnings")
          ->excludes(log_level_opt);
  app.add_flag("-v,--verbose", verbose, "More on stderr: -v info, -vv debug, -vvv trace")
      ->excludes(log_level_opt)
      ->excludes(quiet_opt);

  std::vector<CLI::Option*> root_options;
  auto add_root = [&](CLI::App* sub, bool show_default = true) {
    root_options.push_back(
        sub->add_option("--root", opt.root,
                        "Host root: resolve /sys, /proc, /etc ... under DIR (a FILE.ttar "
                        "archive of a tree: read-only)"));
    root_options.back()->type_name("DIR");
    if (show_default) root_options.back()->capture_default_str();
  };
  auto add_output = [&](CLI::App* sub, const std::vector<std::string>& formats) {
    sub->add_option("-o,--output", opt.output, "Output format")
        ->check(CLI::IsMember(formats))
        ->type_name("FORMAT")
        ->capture_default_str();
  };

  CLI::App* discover =
      app.add_subcommand("discover", "Show what this host has (PCI, SR-IOV, RDMA, modules)");
  add_root(discover);
  add_output(discover, {"table", "json", "yaml"});

  CLI::App* validate = app.add_subcommand(
      "validate",
      "Validate a host.yaml (schema and semantics, offline; with --root also against that host)");
  validate->add_option("FILE", opt.file, "host.yaml")->required();
  root_options.push_back(validate->add_option(
      "--root", opt.root,
      "Also run plan's host checks against the host under DIR (/ for this host)"));
  root_options.back()->type_name("DIR");
  add_output(validate, {"table", "json", "yaml"});
  validate->add_flag("--show-expanded", opt.show_expanded,
                     "Print the spec with spec.rails expanded (YAML); with --root, for that host");

  CLI::App* plan = app.add_subcommand("plan", "Show the ordered changes that apply would make");
  plan->add_option("FILE", opt.file, "host.yaml")->required();
  add_root(plan);
  add_output(plan, {"table", "json", "yaml"});
  plan->add_option("--out", opt.plan_out, "Write the plan to PLANFILE for a later apply")
      ->type_name("PLANFILE");
  plan->add_flag("--detailed-exitcode", opt.detailed_exitcode,
                 "Exit 0 when there is nothing to change, 2 when changes are pending");

  CLI::App* apply =
      app.add_subcommand("apply", "Make the changes, verify each, roll back on failure");
  // Required but with --rollback (the journal names its host.yaml): checked below.
  CLI::Option* apply_file =
      apply->add_option("FILE", opt.file, "host.yaml or a saved PLANFILE")
          ->type_name("FILE|PLANFILE");
  add_root(apply);
  add_output(apply, {"table", "json", "yaml"});
  apply->add_flag(
      "-y,--auto-approve", opt.auto_approve,
      "Do not ask (on a terminal apply shows the plan and asks first; never without one)");
  apply->add_flag("--dry-run", opt.dry_run, "Plan only, in apply's output shape; write nothing");
  apply
      ->add_option("--settle-timeout", settle_timeout,
                   "How long to wait for VFs and their netdevs to appear: seconds, or 30s, 5m, 1h")
      ->check(Duration(/*zero_ok=*/false))
      ->type_name("SECONDS")
      ->capture_default_str();
  apply->add_flag(
      "--rollback", opt.rollback,
      "Undo the changes of an interrupted apply (from its journal, which names its host.yaml: "
      "no FILE needed) instead of converging");
  apply
      ->add_option("--parallelism", opt.parallelism,
                   "Changes applied at once at most, independent PFs and cards concurrently "
                   "(default: max(16, CPUs); 1: one after another, in plan order)")
      ->check(CLI::Range(1, 1024));
  apply
      ->add_option("--lock-timeout", lock_timeout,
                   "How long to wait for another apply on the same root: seconds, or 30s, 5m "
                   "(default: fail at once)")
      ->check(Duration(/*zero_ok=*/true))
      ->type_name("SECONDS");

  CLI::App* manifests = app.add_subcommand(
      "manifests", "Write the Kubernetes manifests for a host, or for a fleet of hosts (merged)");
  manifests
      ->add_option("FILE", opt.files,
                   "host.yaml files (several: a fleet; a directory: its *.yaml files)")
      ->required();
  manifests->add_option("--output-dir", opt.output_dir, "One file per manifest in DIR")
      ->type_name("DIR");
  manifests->add_option("--flavor", opt.flavor, "Manifest flavor")
      ->check(CLI::IsMember({"spiderpool", "multus"}))
      ->capture_default_str();
  manifests->add_flag("--with-test-workload", opt.with_test_workload,
                      "Also emit an RDMA test DaemonSet attached to every multus config");
  add_root(manifests, /*show_default=*/false);
  manifests
      ->add_option("--roots", opt.roots_dir,
                   "Fleet: each host's discovered tree is DIR/<metadata.name>")
      ->type_name("DIR");
  manifests
      ->add_option("--helm-values", opt.helm_values_out,
                   "Also write the Spiderpool chart values these hosts need (YAML)")
      ->type_name("FILE");

  CLI::App* doctor = app.add_subcommand("doctor", "Check the host for RDMA/SR-IOV problems");
  doctor->add_option("FILE", opt.file, "host.yaml");
  add_root(doctor);
  add_output(doctor, {"table", "json", "yaml"});
  doctor
      ->add_option("--only", opt.only,
                   "Only the checks with this verdict (and worse: warn = warn and fail)")
      ->check(CLI::IsMember({"fail", "warn", "ok"}))
      ->type_name("VERDICT");

  CLI::App* show =
      app.add_subcommand("show", "Print a saved plan (plan --out PLANFILE) as plan printed it");
  show->add_option("PLANFILE", opt.file, "A plan saved by plan --out")->required();
  add_output(show, {"table", "json", "yaml"});

  CLI::App* snapshot =
      app.add_subcommand("snapshot", "Capture this host as a tree usable as --root");
  std::string snapshot_output_old;
  snapshot->add_option("--output-dir", opt.output_dir, "Directory to write (missing or empty)")
      ->type_name("DIR");
  // The old name, hidden: -o/--output is a format everywhere else.
  snapshot->add_option("--output", snapshot_output_old, "")->group("")->type_name("DIR");
  add_root(snapshot);

  provisioner::cli::AgentCommandOptions agent_opt;
  CLI::App* agent = app.add_subcommand(
      "agent", "Keep the host converged: apply at start, then on every kernel event (docs/agent.md)");
  agent->add_option("FILE", opt.file, "host.yaml")->required();
  add_root(agent);
  agent->add_option("--debounce", agent_opt.debounce_s, "Seconds of quiet after an event burst")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  agent->add_option("--resync", agent_opt.resync_s, "Seconds between safety resyncs")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  agent
      ->add_option("--settle-timeout", opt.settle_timeout_s,
                   "Seconds to wait for VFs and their netdevs to appear")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  CLI::Option* metrics_opt =
      agent
          ->add_option("--metrics-address", agent_opt.metrics_address,
                       "Prometheus endpoint HOST:PORT (off: none; loopback unless given)")
          ->type_name("HOST:PORT")
          ->capture_default_str();

  CLI::App* status = app.add_subcommand("status", "Show the agent's status (status.json)");
  add_root(status);
  add_output(status, {"table", "json", "yaml"});

  provisioner::cli::SetHelpFooters(&app);

  std::vector<std::string> args;
  if (!NormalizeArgs(argc, argv, &args)) return provisioner::cli::kExitError;
  if (!KnownCommand(app, args)) return provisioner::cli::kExitError;
  try {
    // CLI11 takes a reversed vector (it pops from the back).
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // Point at the help of the subcommand the error is about.
    std::string help = "provisioner --help";
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->parsed() || std::find(args.begin(), args.end(), sub->get_name()) != args.end()) {
        help = "provisioner " + sub->get_name() + " --help";
        break;
      }
    }
    std::string what = e.what();
    if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
      // CLI11 lists them from the reversed vector it parsed: in command-line order instead.
      std::set<std::string> listed;
      std::istringstream words(
          what.substr(what.find(": ") == std::string::npos ? 0 : what.find(": ") + 2));
      for (std::string w; words >> w;) listed.insert(w);
      std::vector<std::string> extras;
      for (const std::string& a : args) {
        if (listed.erase(a) > 0) extras.push_back(a);
      }
      what = "unexpected argument" + std::string(extras.size() == 1 ? "" : "s") + ":";
      for (const std::string& x : extras) what += " " + x;
      // --dryrun: did you mean --dry-run?
      const CLI::App* sub = nullptr;
      for (const CLI::App* s : app.get_subcommands({})) {
        if (s->parsed()) sub = s;
      }
      for (const std::string& x : extras) {
        if (std::string near = NearestOption(app, sub, x); !near.empty()) {
          what += "; did you mean " + near + "?";
          break;
        }
        if (std::string elsewhere = OptionOfAnother(app, sub, x); !elsewhere.empty()) {
          what += "; " + elsewhere;
          break;
        }
      }
    }
    std::fprintf(stderr, "provisioner: %s\nRun '%s' for usage.\n", what.c_str(), help.c_str());
    return provisioner::cli::kExitError;
  }

  if (*apply && !opt.rollback && apply_file->count() == 0) {
    std::fprintf(stderr,
                 "provisioner: FILE is required (host.yaml or a saved PLANFILE; apply --rollback "
                 "needs none)\nRun 'provisioner apply --help' for usage.\n");
    return provisioner::cli::kExitError;
  }
  for (CLI::Option* o : root_options) opt.root_given = opt.root_given || o->count() > 0;
  {
    std::string unused;
    opt.settle_timeout_s = *provisioner::cli::ParseDurationSeconds(settle_timeout, &unused);
    opt.lock_timeout_s = *provisioner::cli::ParseDurationSeconds(lock_timeout, &unused);
  }
  opt.verbose = verbose;
  if (opt.quiet) log_level = "error";
  if (verbose > 0) log_level = verbose == 1 ? "info" : verbose == 2 ? "debug" : "trace";
  // --log-level error (or -q): errors only, no step lines either.
  opt.quiet = log_level == "error";
  const bool color_allowed = ColorAllowed(no_color);
  opt.color_allowed = color_allowed;
  opt.color = color_allowed && ::isatty(STDOUT_FILENO);
  SetUpLogging(log_level, color_allowed && ::isatty(STDERR_FILENO));
  if (*snapshot) {
    if (!snapshot_output_old.empty()) {
      spdlog::warn("snapshot --output DIR is now --output-dir DIR (-o/--output is a format)");
      if (opt.output_dir.empty()) opt.output_dir = snapshot_output_old;
    }
    if (opt.output_dir.empty()) {
      std::fprintf(
          stderr,
          "provisioner: snapshot needs --output-dir DIR\nRun 'provisioner snapshot --help' "
          "for usage.\n");
      return provisioner::cli::kExitError;
    }
  }

  opt.root_shown = provisioner::cli::AbsoluteRoot(opt.root);
  // --root FILE.ttar (a bundled tree, README "Host trees"): read-only.
  provisioner::cli::ArchiveRoot archive;
  if (opt.root_given && provisioner::cli::IsArchiveRoot(opt.root)) {
    const char* writes = (*apply || *agent) ? "apply changes the root"
                         : (*plan && !opt.plan_out.empty())
                             ? "a saved plan names its root, and this one is removed at exit"
                             : nullptr;
    if (writes != nullptr) {
      std::fprintf(stderr,
                   "provisioner: --root %s is a file (a ttar archive): read-only use only, and %s; "
                   "extract it to a directory first (README, \"Host trees\")\n",
                   opt.root.c_str(), writes);
      return provisioner::cli::kExitError;
    }
    if (std::string err = archive.Extract(opt.root); !err.empty()) {
      std::fprintf(stderr, "provisioner: %s\n", err.c_str());
      return provisioner::cli::kExitError;
    }
    opt.root = archive.path();
  }

  if (!*apply) {
    // Only apply has something to roll back; the others end at once, as
    // the signal's default would, but with exit 1 and a word.
    const int early = provisioner::InterruptGuard::signal().load();
    early_guard.reset();
    if (int sig = early != 0 ? early : provisioner::InterruptGuard::signal().load(); sig != 0) {
      std::fprintf(stderr, "provisioner: interrupted by %s\n",
                   provisioner::SignalName(sig).c_str());
      return provisioner::cli::kExitError;
    }
  }
  if (*discover) return provisioner::cli::RunDiscover(opt);
  if (*validate) {
    return opt.show_expanded ? provisioner::cli::RunValidateExpanded(opt)
                             : provisioner::cli::RunValidate(opt);
  }
  if (*plan) return provisioner::cli::RunPlan(opt);
  if (*apply) return provisioner::cli::RunApply(opt);
  if (*manifests) return provisioner::cli::RunManifests(opt);
  if (*doctor) return provisioner::cli::RunDoctor(opt);
  if (*snapshot) return provisioner::cli::RunSnapshot(opt);
  if (*show) return provisioner::cli::RunShow(opt);
  if (*agent) {
    agent_opt.metrics_address_given = metrics_opt->count() > 0;
    return provisioner::cli::RunAgentCommand(agent_opt, opt);
  }
  if (*status) return provisioner::cli::RunStatus(opt);
  return provisioner::cli::kExitError;
}

}  // namespace
