#include "engine/cli/help_text.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace provisioner::cli {
namespace {

constexpr const char* kExitStatus = R"(EXIT STATUS:
  0  success; plan --detailed-exitcode: no changes
  1  error: bad input, discovery failure, apply failed (rolled back), apply cancelled
  2  plan --detailed-exitcode: changes pending
  3  apply converged, but a change takes effect only after a reboot or firmware reset
)";

constexpr const char* kEnvironment = R"(
ENVIRONMENT:
  NO_COLOR  set and not empty: no ANSI colours (no-color.org); so does TERM=dumb
  PROVISIONER_STATS  FILE: write the host layer's counters as JSON at exit
)";

constexpr const char* kMainExamples = R"(
EXAMPLES:
  provisioner discover  what this host has (--root DIR: a captured tree)
  provisioner validate host.yaml  offline schema and semantic checks (--root / checks this host too)
  provisioner plan host.yaml --out plan.json  the ordered changes, saved for apply
  provisioner apply plan.json  applies exactly that plan (asks first on a terminal; -y skips)
  provisioner doctor host.yaml --only fail  what is wrong for RDMA/SR-IOV, and the fix
)";

// Each subcommand's EXAMPLES: one command and what it does per line.
const std::map<std::string, std::vector<const char*>>& SubcommandExamples() {
  static const auto* examples = new std::map<std::string, std::vector<const char*>>{
      {"discover",
       {"provisioner discover  this host's PCI functions, SR-IOV, RDMA devices and modules",
        "provisioner discover --root worker1.ttar -o json  a captured tree, as JSON"}},
      {"validate",
       {"provisioner validate host.yaml  schema and semantic checks, offline",
        "provisioner validate host.yaml --root /  also plan's checks against this host",
        "provisioner validate rails.yaml --show-expanded  spec.rails written out as nics"}},
      {"plan",
       {"provisioner plan host.yaml  the ordered changes apply would make to this host",
        "provisioner plan host.yaml --out plan.json  saved: provisioner apply plan.json",
        "provisioner plan host.yaml --detailed-exitcode  exit 2 when changes are pending (CI)"}},
      {"apply",
       {"provisioner apply host.yaml  shows the plan, asks, applies, verifies each change",
        "provisioner apply plan.json  exactly a saved plan (it is the approval: no question)",
        "provisioner apply host.yaml --dry-run -o json  what would be done, as JSON",
        "provisioner apply --rollback  undoes an interrupted apply (its journal names host.yaml)"}},
      {"manifests",
       {"provisioner manifests host.yaml --root /  this host's manifests (discovery fills in "
        "PF names, nearest NICs)",
        "provisioner manifests hosts/ --roots trees/ --output-dir out/  a fleet, one file per "
        "object"}},
      {"doctor",
       {"provisioner doctor  what is wrong for RDMA/SR-IOV on this host, and the fix",
        "provisioner doctor host.yaml --only fail  the failures only, with host.yaml's intent"}},
      {"show", {"provisioner show plan.json  a saved plan, as plan printed it"}},
      {"snapshot",
       {"provisioner snapshot --output-dir worker1/  this host as a tree for --root "
        "(tar it into a .ttar to keep)"}},
      {"agent",
       {"provisioner agent host.yaml  keeps this host converged (the systemd unit runs this)"}},
      {"status", {"provisioner status -o json  the agent's last reconcile, as JSON"}},
  };
  return *examples;
}

// The options of `app` itself, as its help lists them (without --help and
// --version), under one heading.
std::string GlobalOptions(const CLI::App& app) {
  std::vector<const CLI::Option*> opts = app.get_options([&app](const CLI::Option* o) {
    return !o->get_group().empty() && o->nonpositional() && o != app.get_help_ptr() &&
           o->get_name() != "--version";
  });
  // The app's own formatter when it is CLI11's (it is: the columns match).
  auto formatter = std::dynamic_pointer_cast<CLI::Formatter>(app.get_formatter());
  if (formatter == nullptr) formatter = std::make_shared<CLI::Formatter>();
  return formatter->make_group("Global options", false, opts);
}

}  // namespace

void SetHelpFooters(CLI::App* app) {
  app->footer(std::string(kExitStatus) + kMainExamples + kEnvironment);
  for (CLI::App* sub : app->get_subcommands({})) {
    std::string examples;
    if (auto it = SubcommandExamples().find(sub->get_name()); it != SubcommandExamples().end()) {
      examples = "\nEXAMPLES:\n";
      for (const char* e : it->second) examples += std::string("  ") + e + "\n";
    }
    // CLI11 prints the callback's text, a newline, then the string.
    sub->footer([app, examples] { return GlobalOptions(*app).substr(1) + examples; });
    sub->footer(std::string(kExitStatus) + kEnvironment);
  }
}

}  // namespace provisioner::cli
