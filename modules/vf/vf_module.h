// Module "vf": per-VF settings (IB GUIDs for ib-sriov, vfTrust, vfSpoofChk)
// and the VF driver binding (deviceType). Registered at order 12, after sriov
// (which discovers the VFs); its changes run in phases kPhaseVfSettings and
// kPhaseVfBinding, after numVfs (engine/plan/change.h explains the order).
#ifndef PROVISIONER_MODULES_VF_VF_MODULE_H_
#define PROVISIONER_MODULES_VF_VF_MODULE_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>

#include "engine/module/module.h"
#include "modules/vf/vf_backend.h"
#include "modules/vf/vf_host.h"
#include "modules/vf/vf_netlink.h"

namespace provisioner {

struct VfModuleOptions {
  // Netlink (GUIDs, trust, spoof check) or the tree's files: by default the
  // factory of vf_backend.h picks by root. Tests force either.
  std::optional<bool> use_netlink;
  // Makes the netlink backend; default libnl.
  std::function<std::unique_ptr<VfNetlink>()> netlink_factory;
  std::chrono::milliseconds poll_interval{20};
};

class VfModule final : public ModuleWithOptions<VfModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "vf"; }
  // RenderFactsJson (discover output): vf_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, RenderFactsJson);
  // Different PFs at once: one netlink socket per thread (Netlink()).
  bool ConcurrentApply() const override { return true; }

 private:
  VfHostOptions HostOptions() const;
  VfNetlink* Netlink();
  std::unique_ptr<VfSettingsBackend> Backend(HostFs& fs);

  // A netlink socket is one conversation (sequence numbers, replies): one per
  // thread that asks, kept for the module's life (apply's workers are few).
  std::mutex netlink_mu_;
  std::map<std::thread::id, std::unique_ptr<VfNetlink>> netlinks_;
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_VF_VF_MODULE_H_
