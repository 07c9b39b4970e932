// Kernel modules on the host: libkmod (the only file that includes
// <libkmod.h>) and the HostFs reads around it.
//
// libkmod takes the modules directory and the modprobe.d paths (we give it
// the root's), but reads /proc/modules, /sys/module and /proc/cmdline of the
// machine it runs on. So the loaded list (and loading) is a KmodBackend
// (kmod_backend.h): libkmod on the live root, <root>/proc/modules through
// HostFs under a tree root (same format: kmod_module_new_from_loaded parses
// that very file). The modprobe.d
// entries libkmod adds from the running kernel's command line are taken out
// again for a tree root (they belong to this machine, not the tree).
#ifndef PROVISIONER_MODULES_KMOD_KMOD_HOST_H_
#define PROVISIONER_MODULES_KMOD_KMOD_HOST_H_

#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/kmod_facts.h"
#include "modules/kmod/kmod_backend.h"

namespace provisioner {

// Everything the facts need; `release` names lib/modules/<release> ("" = skip
// it). The loaded list comes from `backend` (kmod_backend.h).
StatusOr<KmodFacts> DiscoverKmod(const HostFs& fs, KmodBackend& backend, const std::string& release);

// modprobe.d under the root through libkmod's config iterators.
Status ReadModprobeConfig(const HostFs& fs, const std::string& release, KmodFacts* facts);

// The `options` of each modprobe.d file under the root as libkmod reads them
// (module names with '-' as '_', continued lines joined), in modprobe's order:
// a file name in an earlier directory (/etc, /run, /usr/local/lib, /lib)
// hides the same name in later ones, then all by name. For callers that
// need to know which file sets an option (the rdma module's netns mode).
// (ModprobeFileOptions: engine/model/kmod_facts.h; KmodFacts::options_by_file.)
std::vector<ModprobeFileOptions> ModprobeOptionsByFile(const HostFs& fs);

// libkmod over the root's modules directory: the dependencies of module
// `name` (a name or an alias), in modules.dep order (the one loaded first is
// last). Needs depmod's index modules.dep.bin (libkmod does not read the text
// modules.dep); NotFound when the module is not in it.
StatusOr<std::vector<std::string>> LibkmodDependencies(const HostFs& fs, const std::string& release,
                                                       const std::string& name);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_HOST_H_
