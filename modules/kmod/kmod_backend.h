// Where kernel modules are loaded and unloaded, chosen once per root by
// NewKmodBackend (kmod_backend_factory.cc, the one place the module asks whether the root
// is the live one):
// - live root: libkmod (kmod_module_new_from_loaded, probe_insert, remove);
// - tree root (--root: images, CI, the kernel simulator): the tree's
//   <root>/proc/modules file, which the tree backend reads and rewrites as the
//   kernel would list the modules (kmod_tree_backend.cc).
// Discovery of everything else (modules.dep, modprobe.d, parameters) reads
// the root through HostFs either way; libkmod never runs for a tree (its
// kmod_new() reads the running machine's /proc/cmdline).
#ifndef PROVISIONER_MODULES_KMOD_KMOD_BACKEND_H_
#define PROVISIONER_MODULES_KMOD_KMOD_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/kmod_facts.h"

namespace provisioner {

class KmodBackend {
 public:
  virtual ~KmodBackend() = default;
  // Where the loaded list comes from (KmodFacts::loaded_source):
  // "libkmod" | "/proc/modules".
  virtual std::string Source() const = 0;
  // The loaded modules, newest first. ENOENT: a kernel without loadable
  // modules (no /proc/modules).
  virtual StatusOr<std::vector<LoadedModule>> ReadLoaded() = 0;
  // Loads `name` with its dependencies (`dependencies` as modules.dep lists
  // them, a fallback for backends that cannot look them up).
  virtual Status Load(const std::string& name, const std::vector<std::string>& dependencies) = 0;
  // The inverse (rollback): removes `name` only.
  virtual Status Unload(const std::string& name) = 0;
};

// libkmod on the running kernel. `fs` (the live root) only hears which host
// files libkmod read, for `snapshot`.
std::unique_ptr<KmodBackend> NewLibkmodBackend(const HostFs& fs);
// The kernel's stand-in under a tree root: <root>/proc/modules. Load adds the
// missing dependencies (the tree's modules.dep line for the module when it
// has one, else `dependencies`; NotFound when the tree has depmod's index
// modules.dep.bin and no line for it; loaded last-first) and then `name` at
// the top of the file, as the kernel lists a newly loaded module; Unload
// removes its line.
std::unique_ptr<KmodBackend> NewTreeKmodBackend(HostFs& fs);
// The one factory: libkmod for the live root, the tree backend otherwise.
std::unique_ptr<KmodBackend> NewKmodBackend(HostFs& fs);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_KMOD_KMOD_BACKEND_H_
