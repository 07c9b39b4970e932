// The help pages' footers: exit status, examples and environment of
// `provisioner --help` (and the man page, scripts/gen_manpage.py), and each
// subcommand's own: the global options (they work after the subcommand too)
// and that subcommand's examples.
#ifndef PROVISIONER_ENGINE_CLI_HELP_TEXT_H_
#define PROVISIONER_ENGINE_CLI_HELP_TEXT_H_

#include "CLI/CLI.hpp"

namespace provisioner::cli {

// Sets the footers of `app` and of every subcommand it has: call after the
// last option and subcommand are added.
void SetHelpFooters(CLI::App* app);

}  // namespace provisioner::cli

#endif  // PROVISIONER_ENGINE_CLI_HELP_TEXT_H_
