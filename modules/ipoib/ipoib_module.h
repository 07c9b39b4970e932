// Module "ipoib": the IPoIB host interface of an InfiniBand NIC
// (nics[].ipoib, ipoib_planner.h): mode (sysfs `mode`), one child interface
// per P_Key (sysfs `create_child` / `delete_child` of the PF's IPoIB netdev),
// MTU and up (the link module's LinkBackend: rtnetlink, or /sys/class/net
// under a tree), global addresses (ipoib_backend.h: rtnetlink, or the
// run/provisioner/ipoib-addresses capture under a tree). Discovers every
// IPoIB netdev of the NICs, its children and its port's P_Key table; doctor
// checks in ipoib_checks.h. Registered after link; its changes run in the
// links phase, after the link module's.
#ifndef PROVISIONER_MODULES_IPOIB_IPOIB_MODULE_H_
#define PROVISIONER_MODULES_IPOIB_IPOIB_MODULE_H_

#include <functional>
#include <memory>
#include <string_view>

#include "engine/module/module.h"
#include "modules/ipoib/ipoib_backend.h"
#include "modules/link/link_backend.h"

namespace provisioner {

struct IpoibModuleOptions {
  // Backends for a root; the factories' choice unless a test says otherwise.
  BackendForRoot<IpoibAddressBackend> addresses = NewIpoibAddressBackend;
  BackendForRoot<LinkBackend> link = NewLinkBackend;
};

class IpoibModule final : public ModuleWithOptions<IpoibModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "ipoib"; }
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange, Check, RenderFactsJson,
                               RenderFactsTable);
  // Different PFs at once: a backend (netlink socket) per call.
  bool ConcurrentApply() const override { return true; }
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_IPOIB_IPOIB_MODULE_H_
