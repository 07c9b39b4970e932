// What `provisioner --version` prints. The values come from a stamped build
// (//engine/cli:version_stamp): VERSION, the git commit, the build time.
#ifndef PROVISIONER_ENGINE_CLI_VERSION_H_
#define PROVISIONER_ENGINE_CLI_VERSION_H_

#include <string>

namespace provisioner::cli {

extern const char* const kVersion;    // the top-level VERSION file, e.g. "0.9.0"
extern const char* const kGitCommit;  // short commit, or "unknown" (no git at build time)
extern const char* const kBuildDate;  // UTC, e.g. "2026-11-25T07:57:09Z"

// "provisioner 0.9.0 (commit 1a2b3c4d5e6f, built 2026-11-25T07:57:09Z)"
std::string VersionLine();

}  // namespace provisioner::cli

#endif  // PROVISIONER_ENGINE_CLI_VERSION_H_
