#include "engine/cli/version.h"

namespace provisioner::cli {

std::string VersionLine() {
  return std::string("provisioner ") + kVersion + " (commit " + kGitCommit + ", built " + kBuildDate + ")";
}

}  // namespace provisioner::cli
