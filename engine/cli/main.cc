// provisioner: a thin CLI. Each subcommand declares its flags and calls the
// engine; every command shares the same renderers and exit codes
// (CONTRACT.md section 2).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <optional>
#include <string>

#include "CLI/CLI.hpp"
#include "engine/base/interrupt.h"
#include "engine/cli/commands.h"
#include "engine/cli/version.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/sinks/stdout_sinks.h"
#include "spdlog/spdlog.h"

namespace {

using provisioner::cli::CommonOptions;

void SetUpLogging(const std::string& level, bool color) {
  auto logger = color ? spdlog::stderr_color_mt("provisioner") : spdlog::stderr_logger_mt("provisioner");
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
  CLI::App app{"provisioner: declarative provisioning of GPU/RDMA hosts (SR-IOV, RDMA, kernel modules)",
               "provisioner"};
  app.require_subcommand(1);
  app.set_version_flag("--version", provisioner::cli::VersionLine());

  CommonOptions opt;
  std::string log_level = "warn";
  bool no_color = false;
  app.add_option("--log-level", log_level, "Log level on stderr")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error"}))
      ->capture_default_str();
  app.add_flag("--no-color", no_color, "No ANSI colours (also NO_COLOR env)");

  std::vector<CLI::Option*> root_options;
  auto add_root = [&](CLI::App* sub) {
    root_options.push_back(sub->add_option("--root", opt.root, "Host root: resolve /sys, /proc, /etc ... under DIR"));
    root_options.back()
        ->capture_default_str();
  };
  auto add_output = [&](CLI::App* sub, const std::vector<std::string>& formats) {
    sub->add_option("-o,--output", opt.output, "Output format")
        ->check(CLI::IsMember(formats))
        ->capture_default_str();
  };

  CLI::App* discover = app.add_subcommand("discover", "Show what this host has (PCI, SR-IOV, RDMA, modules)");
  add_root(discover);
  add_output(discover, {"table", "json", "yaml"});

  CLI::App* validate = app.add_subcommand("validate", "Validate a host.yaml (schema and semantic checks)");
  validate->add_option("FILE", opt.file, "host.yaml")->required();
  add_root(validate);
  validate->add_flag("--show-expanded", opt.show_expanded,
                     "Print the spec with spec.rails expanded (YAML); with --root, for that host");

  CLI::App* plan = app.add_subcommand("plan", "Show the ordered changes that apply would make");
  plan->add_option("FILE", opt.file, "host.yaml")->required();
  add_root(plan);
  add_output(plan, {"table", "json"});
  plan->add_option("--out", opt.plan_out, "Write the plan to PLANFILE for a later apply");
  plan->add_flag("--detailed-exitcode", opt.detailed_exitcode,
                 "Exit 0 when there is nothing to change, 2 when changes are pending");

  CLI::App* apply = app.add_subcommand("apply", "Make the changes, verify each, roll back on failure");
  apply->add_option("FILE", opt.file, "host.yaml or a saved PLANFILE")->required();
  add_root(apply);
  add_output(apply, {"table", "json"});
  apply->add_flag("--dry-run", opt.dry_run, "Plan only, in apply's output shape; write nothing");
  apply->add_option("--settle-timeout", opt.settle_timeout_s,
                    "Seconds to wait for VFs and their netdevs to appear")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  apply->add_flag("--rollback", opt.rollback,
                  "Undo the changes of an interrupted apply (from its journal) instead of converging");
  apply->add_option("--lock-timeout", opt.lock_timeout_s,
                    "Seconds to wait for another apply on the same root (default: fail at once)")
      ->check(CLI::NonNegativeNumber);

  CLI::App* manifests = app.add_subcommand(
      "manifests", "Write the Kubernetes manifests for a host, or for a fleet of hosts (merged)");
  manifests->add_option("FILE", opt.files,
                        "host.yaml files (several: a fleet; a directory: its *.yaml files)")
      ->required();
  manifests->add_option("--output-dir", opt.output_dir, "One file per manifest in DIR");
  manifests->add_option("--flavor", opt.flavor, "Manifest flavor")
      ->check(CLI::IsMember({"spiderpool", "multus"}))
      ->capture_default_str();
  manifests->add_flag("--with-test-workload", opt.with_test_workload,
                      "Also emit an RDMA test DaemonSet attached to every multus config");
  add_root(manifests);
  manifests->add_option("--roots", opt.roots_dir,
                        "Fleet: each host's discovered tree is DIR/<metadata.name>");
  manifests->add_option("--helm-values", opt.helm_values_out,
                        "Also write the Spiderpool chart values these hosts need (YAML)");

  CLI::App* doctor = app.add_subcommand("doctor", "Check the host for RDMA/SR-IOV problems");
  doctor->add_option("FILE", opt.file, "host.yaml");
  add_root(doctor);
  add_output(doctor, {"table", "json"});

  CLI::App* snapshot = app.add_subcommand("snapshot", "Capture this host as a tree usable as --root");
  snapshot->add_option("--output", opt.output_dir, "Directory to write")->required();
  add_root(snapshot);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "provisioner: %s\nRun 'provisioner --help' for usage.\n", e.what());
    return provisioner::cli::kExitError;
  }

  for (CLI::Option* o : root_options) opt.root_given = opt.root_given || o->count() > 0;
  opt.color = !no_color && std::getenv("NO_COLOR") == nullptr && ::isatty(STDOUT_FILENO);
  SetUpLogging(log_level, !no_color && std::getenv("NO_COLOR") == nullptr && ::isatty(STDERR_FILENO));

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
    return opt.show_expanded || opt.root_given ? provisioner::cli::RunValidateExpanded(opt)
                                               : provisioner::cli::RunValidate(opt);
  }
  if (*plan) return provisioner::cli::RunPlan(opt);
  if (*apply) return provisioner::cli::RunApply(opt);
  if (*manifests) return provisioner::cli::RunManifests(opt);
  if (*doctor) return provisioner::cli::RunDoctor(opt);
  if (*snapshot) return provisioner::cli::RunSnapshot(opt);
  return provisioner::cli::kExitError;
}

}  // namespace
