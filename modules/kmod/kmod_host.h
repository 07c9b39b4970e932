// Kernel modules on the host: libkmod (the only file that includes
// <libkmod.h>) and the HostFs reads around it.
//
// libkmod takes the modules directory and the modprobe.d paths (we give it
// the root's), but reads /proc/modules, /sys/module and /proc/cmdline of the
// machine it runs on. So: on the live root the loaded list comes from
// libkmod; under a tree root from <root>/proc/modules through HostFs (same
// format: kmod_module_new_from_loaded parses that very file). The modprobe.d
// entries libkmod adds from the running kernel's command line are taken out
// again for a tree root (they belong to this machine, not the tree).
#ifndef PROVISIONER_MODULES_KMOD_KMOD_HOST_H_
#define PROVISIONER_MODULES_KMOD_KMOD_HOST_H_

#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/kmod_facts.h"

namespace provisioner {

// Everything the facts need; `release` names lib/modules/<release> ("" = skip it).
StatusOr<KmodFacts> DiscoverKmod(const HostFs& fs, const std::string& release);

// The loaded modules: libkmod on the live root, <root>/proc/modules otherwise.
StatusOr<std::vector<LoadedModule>> ReadLoadedModules(const HostFs& fs);
// Each way on its own (the agreement test compares them).
StatusOr<std::vector<LoadedModule>> LoadedFromLibkmod();
StatusOr<std::vector<LoadedModule>> LoadedFromProcModules(const HostFs& fs);

// modprobe.d under the root through libkmod's config iterators.
Status ReadModprobeConfig(const HostFs& fs, const std::string& release, KmodFacts* facts);

// libkmod over the root's modules directory: the dependencies of module
// `name` (a name or an alias), in modules.dep order (the one loaded first is
// last). Needs depmod's index modules.dep.bin (libkmod does not read the text
// modules.dep); NotFound when the module is not in it.
StatusOr<std::vector<std::string>> LibkmodDependencies(const HostFs& fs, const std::string& release,
                                                       const std::string& name);

// Loads `name` with its dependencies. Live root: libkmod
// (kmod_module_probe_insert_module, modprobe.d options and install commands
// applied). Tree root: the kernel stand-in: the missing dependencies (libkmod's
// answer when the tree has depmod's index files, else `dependencies`, as
// modules.dep lists them, loaded last-first) and then `name` are added to the
// top of <root>/proc/modules, as the kernel lists a newly loaded module.
Status LoadModule(HostFs& fs, const std::string& name, const std::vector<std::string>& dependencies);
// The inverse (rollback): removes `name` only (live: kmod_module_remove_module).
Status UnloadModule(HostFs& fs, const std::string& name);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_HOST_H_
