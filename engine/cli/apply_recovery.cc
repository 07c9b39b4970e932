// After an apply that did not finish: `apply --rollback` finds its host.yaml
// in the journal, and a failed apply says what to do next.
#include <cerrno>
#include <cstdio>
#include <memory>
#include <string>

#include "engine/base/status.h"
#include "engine/cli/commands.h"
#include "engine/core/journal.h"
#include "engine/host/host_fs.h"

namespace provisioner::cli {
namespace {

void PrintError(const std::string& message) {
  std::fprintf(stderr, "provisioner: error: %s\n", message.c_str());
}

}  // namespace

int UseJournalHostYaml(CommonOptions* opt) {
  if (!opt->rollback || !opt->file.empty()) return -1;
  std::unique_ptr<HostFs> fs = NewLocalHostFs(opt->root);
  auto journal = ReadJournal(*fs);
  if (!journal.ok()) {
    PrintError(journal.status().message());
    return kExitError;
  }
  if (!*journal) {
    std::printf("Nothing to roll back: no interrupted apply under %s.\n",
                AbsoluteRoot(opt->root).c_str());
    return kExitOk;
  }
  if ((*journal)->host_yaml.empty()) {
    // An older provisioner's journal: no hostYaml. Its entries are what a
    // rollback runs (each change's prior value, each file's capture), so it
    // goes on from them alone, over a host.yaml that declares nothing.
    std::fprintf(stderr,
                 "provisioner: %s%s does not name its host.yaml (an older provisioner wrote "
                 "it): rolling back from its %zu recorded changes alone\n",
                 AbsoluteRoot(opt->root).c_str(), kJournalPath, (*journal)->entries.size());
    opt->file.clear();
    return -1;
  }
  opt->file = (*journal)->host_yaml;
  std::fprintf(stderr, "provisioner: the interrupted apply's journal names %s\n",
               opt->file.c_str());
  return -1;
}

std::string JournalOnlyHostYaml() {
  return "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n  name: "
         "rollback\nspec: {}\n";
}

std::string RollbackWithFileHint(const std::string& root) {
  return std::string("the interrupted apply's journal ") + AbsoluteRoot(root) + kJournalPath +
         " is kept; roll back with its host.yaml: provisioner apply --rollback FILE" +
         (root == "/" ? "" : " --root " + AbsoluteRoot(root));
}

bool JournalKept(const std::string& root) { return NewLocalHostFs(root)->Exists(kJournalPath); }

std::string ApplyNextStep(const Status& failure, double settle_timeout_s) {
  if (failure.ok()) return "";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", settle_timeout_s);
  if (failure.code() == StatusCode::kDeadlineExceeded) {
    return std::string(
               "`dmesg` shows what the driver did meanwhile; if the devices were only "
               "slow to appear, apply again with a longer --settle-timeout (it was ") +
           seconds + " s)";
  }
  switch (failure.err()) {
    case 0:
      break;
    case EBUSY:
      return "something holds the device (a VF given to a VM or a pod, an interface in use): "
             "`dmesg` names it; free it, then apply again";
    case EPERM:
    case EACCES:
      return "run apply as root (sudo); in a container, with the host's /sys writable";
    case EINVAL:
    case ERANGE:
    case ENODEV:
    case ENXIO:
    case ENOENT:
    case EOPNOTSUPP:
      return "the driver refused it: `dmesg` says why; check that the driver supports it "
             "(`ethtool -i IFNAME` names it; for numVfs, sriov_totalvfs and the firmware's "
             "SRIOV_EN/NUM_OF_VFS)";
    default:
      return "`dmesg` shows why the kernel failed the write; then apply again";
  }
  if (failure.code() == StatusCode::kFailedPrecondition ||
      failure.code() == StatusCode::kUnavailable) {
    return "`dmesg` for the driver's side; `provisioner doctor` checks the host, `provisioner "
           "plan` shows what is still different";
  }
  return "";
}

}  // namespace provisioner::cli
