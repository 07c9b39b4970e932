// Kernel modules on the host: libkmod (the only file that includes
// <libkmod.h>) and the HostFs reads around it.
//
// libkmod reads /proc/modules, /sys/module and /proc/cmdline of the machine
// it runs on, whatever modules directory and config paths it is given. So
// it only runs for the live root: the loaded list and loading are a
// KmodBackend (kmod_backend.h): libkmod on the live root, <root>/proc/modules
// through HostFs under a tree root (same format: kmod_module_new_from_loaded
// parses that very file). modprobe.d is read through HostFs and parsed as
// libkmod parses it (ParseModprobeConf), on every root: libkmod's kmod_new()
// would add the running machine's kernel command line options to it (issue
// 26, item 14).
#ifndef PROVISIONER_MODULES_KMOD_KMOD_HOST_H_
#define PROVISIONER_MODULES_KMOD_KMOD_HOST_H_

#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/kmod_facts.h"
#include "modules/kmod/kmod_backend.h"
#include "modules/kmod/kmod_parse.h"

namespace provisioner {

// Everything the facts need; `release` names lib/modules/<release> ("" = skip
// it). The loaded list comes from `backend` (kmod_backend.h).
StatusOr<KmodFacts> DiscoverKmod(const HostFs& fs, KmodBackend& backend,
                                 const std::string& release);

// modprobe.d under the root (the files only, no kernel command line), read
// through HostFs: a file that cannot be read (a link leaving the root, a
// FIFO) is left out with a warning in facts->config_warnings.
Status ReadModprobeConfig(const HostFs& fs, const std::string& release, KmodFacts* facts);

// The `options` of each modprobe.d file under the root as libkmod parses them
// (module names with '-' as '_', continued lines joined), in modprobe's order:
// a file name in an earlier directory (/etc, /run, /usr/local/lib, /lib)
// hides the same name in later ones, then all by name. For callers that
// need to know which file sets an option (the rdma module's netns mode).
// (ModprobeFileOptions: engine/model/kmod_facts.h; KmodFacts::options_by_file.)
std::vector<ModprobeFileOptions> ModprobeOptionsByFile(const HostFs& fs);

// What libkmod 30 itself reads from the config paths given (files or
// directories, libkmod's order), without the entries it adds from this
// machine's /proc/cmdline (they come last): the reference ParseModprobeConf
// is checked against (kmod_host_test). Opens the paths itself, following
// links: not for a tree's files.
StatusOr<ModprobeConf> LibkmodModprobeConf(const std::vector<std::string>& config_paths);

// libkmod over the root's modules directory: the dependencies of module
// `name` (a name or an alias), in modules.dep order (the one loaded first is
// last): the reference the tree backend's modules.dep reading is checked
// against (kmod_host_test); opens the root's modprobe.d and this machine's
// /proc/cmdline itself, so it is not used on a tree. Needs depmod's index modules.dep.bin (libkmod
// does not read the text modules.dep); NotFound when the module is not in it.
StatusOr<std::vector<std::string>> LibkmodDependencies(const HostFs& fs, const std::string& release,
                                                       const std::string& name);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_HOST_H_
