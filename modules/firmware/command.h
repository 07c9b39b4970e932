// Runs an external program with an argv (posix_spawnp: no shell), a timeout,
// stdin from /dev/null, and stdout/stderr captured up to a cap: the one
// bounded runner of every command provisioner runs on the live root
// (mstconfig, mstflint, mstfwreset here; grubby, update-grub and
// kernel-install in modules/kernel), as a tree backend's reads are bounded
// by HostFs::kMaxFileRead.
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

// What RunCommand keeps of each of stdout and stderr at most: the size of
// the largest file a tree backend reads (HostFs::kMaxFileRead). A
// `mstconfig -e query` of a ConnectX-7 prints about 60 KiB.
inline constexpr size_t kMaxCommandOutput = size_t{16} * 1024 * 1024;

// Fails NOT_FOUND (ENOENT) when argv[0] is not found in PATH, DEADLINE_EXCEEDED
// when it runs longer than `timeout`, FAILED_PRECONDITION (EFBIG) when it
// prints more than `max_output` bytes on stdout or on stderr (it is killed
// in both cases, and waited for). A non-zero exit is a result, not an error.
StatusOr<CommandResult> RunCommand(const std::vector<std::string>& argv,
                                   std::chrono::milliseconds timeout,
                                   size_t max_output = kMaxCommandOutput);

// The full path of `name` in $PATH, "" when absent (or not executable).
std::string FindInPath(const std::string& name);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_FIRMWARE_COMMAND_H_
