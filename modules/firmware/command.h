// Runs an external program with an argv (posix_spawnp: no shell), a timeout,
// stdin from /dev/null, and stdout/stderr captured.
#ifndef PROVISIONER_MODULES_FIRMWARE_COMMAND_H_
#define PROVISIONER_MODULES_FIRMWARE_COMMAND_H_

#include <chrono>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace provisioner {

struct CommandResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

// Fails NOT_FOUND (ENOENT) when argv[0] is not found in PATH, DEADLINE_EXCEEDED
// when it runs longer than `timeout` (it is killed). A non-zero exit is a
// result, not an error.
StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout);

// The full path of `name` in $PATH, "" when absent (or not executable).
std::string FindInPath(const std::string& name);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_FIRMWARE_COMMAND_H_
