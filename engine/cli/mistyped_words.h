// What a mistyped command line gets: the command or option nearest to the
// word typed (kubectl's "did you mean"), or the subcommand that has it.
#ifndef PROVISIONER_ENGINE_CLI_MISTYPED_WORDS_H_
#define PROVISIONER_ENGINE_CLI_MISTYPED_WORDS_H_

#include <string>
#include <vector>

#include "CLI/CLI.hpp"

namespace provisioner::cli {

// `provisioner dicover` (and `help dicover`, `dicover --help`): false after
// saying "unknown command", with the nearest one; true for a known command
// or none.
bool KnownCommand(const CLI::App& app, const std::vector<std::string>& args);

// The option of `sub` (or a global one) nearest to `arg` ("--dryrun" ->
// "--dry-run"); "" when none is near or `arg` is no option.
std::string NearestOption(const CLI::App& app, const CLI::App* sub, const std::string& arg);

// `plan --dryrun`, `plan --rollback`: an option (or the one nearest to
// `arg`) that only another subcommand has: "--dry-run is an option of
// `provisioner apply`"; "" when none has it.
std::string OptionOfAnother(const CLI::App& app, const CLI::App* sub, const std::string& arg);

}  // namespace provisioner::cli

#endif  // PROVISIONER_ENGINE_CLI_MISTYPED_WORDS_H_
