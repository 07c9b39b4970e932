// provisioner snapshot --output DIR [--root DIR]: copies exactly what
// discovery reads (files, symlinks with their link text, directories as
// listed) into DIR, so that `plan --root DIR` elsewhere sees this host
// (SnapshotHost in engine/core/session.h, engine/host/recording_host_fs.h).
//
// DIR must be missing (it is created) or an empty directory: a snapshot
// never mixes with or overwrites an existing tree.
#include <cstdio>

#include "engine/cli/commands.h"
#include "engine/core/session.h"
#include "spdlog/spdlog.h"

namespace provisioner::cli {

int RunSnapshot(const CommonOptions& opt) {
  auto stats = SnapshotHost(opt.root, opt.output_dir);
  if (!stats.ok()) {
    std::fprintf(stderr, "provisioner: %s\n", stats.status().message().c_str());
    return kExitError;
  }
  std::printf("snapshot of %s written to %s: %zu files, %zu symlinks, %zu directories, %zu listed-only entries (empty)\n",
              opt.root.c_str(), opt.output_dir.c_str(), stats->files, stats->links, stats->dirs,
              stats->placeholders);
  for (const std::string& note : stats->partial) {
    spdlog::warn("{}", note);
  }
  return kExitOk;
}

}  // namespace provisioner::cli
