// Module "names": persistent names of the nics' PFs (names_planner.h): the
// udev rules file for every boot, and the live renames of the PF's netdev
// and RDMA device (names_backend.h). Registered after pci, link and rdma;
// its changes run last (kPhaseNames, see change.h).
#ifndef PROVISIONER_MODULES_NAMES_NAMES_MODULE_H_
#define PROVISIONER_MODULES_NAMES_NAMES_MODULE_H_

#include <functional>
#include <memory>
#include <string_view>

#include "engine/module/module.h"
#include "modules/names/names_backend.h"

namespace provisioner {

struct NamesModuleOptions {
  // The backend for a root: netlink on the live root, the tree's request
  // files under a tree root, unless a test says otherwise.
  BackendForRoot<NamesBackend> backend = NewNamesBackend;
};

class NamesModule final : public ModuleWithOptions<NamesModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "names"; }
  // Check: doctor: names.persistent per named PF (names_planner.h CheckNames).
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange, Check);
  // Different PFs at once (a socket per call); the rules file is its own resource.
  bool ConcurrentApply() const override { return true; }
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_NAMES_NAMES_MODULE_H_
