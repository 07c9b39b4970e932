// provisioner snapshot --output DIR [--root DIR]: runs every module's
// discovery through a recording HostFs and copies exactly what it read (files,
// symlinks with their link text, directories as listed) into DIR, so that
// `plan --root DIR` elsewhere sees this host. See engine/host/recording_host_fs.h.
//
// DIR must be missing (it is created) or an empty directory: a snapshot
// never mixes with or overwrites an existing tree.
#include <dirent.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "engine/base/status.h"
#include "engine/cli/commands.h"
#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "engine/host/recording_host_fs.h"
#include "engine/module/registry.h"

namespace provisioner::cli {
namespace {

// Creates `dir` (and its parents) or accepts it when it is an empty directory.
Status PrepareOutput(const std::string& dir) {
  if (dir.empty()) return InvalidArgumentError("--output: empty path");
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) return ErrnoToStatus(ENOTDIR, "--output " + dir);
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return ErrnoToStatus(errno, "--output " + dir);
    bool empty = true;
    while (struct dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") empty = false;
    }
    ::closedir(d);
    if (!empty) {
      return FailedPreconditionError("--output " + dir +
                                     ": directory is not empty; a snapshot needs a new or empty directory");
    }
    return OkStatus();
  }
  if (errno != ENOENT) return ErrnoToStatus(errno, "--output " + dir);
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i != dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoToStatus(errno, "--output: mkdir " + part);
    }
  }
  return OkStatus();
}

}  // namespace

int RunSnapshot(const CommonOptions& opt) {
  struct stat st;
  int root_err = ::stat(opt.root.c_str(), &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
  if (root_err != 0) {
    std::fprintf(stderr, "provisioner: %s\n", ErrnoToStatus(root_err, "--root " + opt.root).message().c_str());
    return kExitError;
  }
  Status out = PrepareOutput(opt.output_dir);
  if (!out.ok()) {
    std::fprintf(stderr, "provisioner: %s\n", out.message().c_str());
    return kExitError;
  }
  std::unique_ptr<HostFs> host = NewLocalHostFs(opt.root);
  HostFsRecord record;
  std::unique_ptr<HostFs> recording = NewRecordingHostFs(host.get(), &record);
  auto modules = ModuleRegistry::CreateAll();
  HostContext ctx;
  ctx.fs = recording.get();
  ctx.clock = &RealClock();
  auto facts = Discover(modules, ctx);
  if (!facts.ok()) {
    std::fprintf(stderr, "provisioner: snapshot: %s\n", facts.status().message().c_str());
    return kExitError;
  }
  auto stats = WriteSnapshot(*host, record, opt.output_dir);
  if (!stats.ok()) {
    std::fprintf(stderr, "provisioner: %s\n", stats.status().message().c_str());
    return kExitError;
  }
  std::printf("snapshot of %s written to %s: %zu files, %zu symlinks, %zu directories, %zu listed-only entries (empty)\n",
              opt.root.c_str(), opt.output_dir.c_str(), stats->files, stats->links, stats->dirs,
              stats->placeholders);
  return kExitOk;
}

}  // namespace provisioner::cli
