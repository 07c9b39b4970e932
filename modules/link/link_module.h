// Module "link": PF mtu and admin state, and the VFs of netdevice NICs up
// (link_planner.h). Over rtnetlink on the live root, through the
// /sys/class/net files under a tree root (link_backend.h). Registered at
// order 14 (after sriov and vf discovered the VFs); its changes run last
// (kPhaseLinks, see change.h).
#ifndef PROVISIONER_MODULES_LINK_LINK_MODULE_H_
#define PROVISIONER_MODULES_LINK_LINK_MODULE_H_

#include <functional>
#include <memory>
#include <string_view>

#include "engine/module/module.h"
#include "modules/link/link_backend.h"

namespace provisioner {

struct LinkModuleOptions {
  // The backend for a root: netlink on the live root, sysfs under a tree
  // root, unless a test says otherwise.
  BackendForRoot<LinkBackend> backend = NewLinkBackend;
};

class LinkModule final : public ModuleWithOptions<LinkModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "link"; }
  // RenderFactsJson (discover output): link_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange, RenderFactsJson);
  // Different PFs at once: a backend (netlink socket) per call.
  bool ConcurrentApply() const override { return true; }
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_LINK_LINK_MODULE_H_
