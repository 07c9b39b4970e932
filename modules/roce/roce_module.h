// Module "roce": lossless RoCE QoS of the NIC PF netdevs (roce_planner.h):
//   spec.nics[].roce.trust  DCB trust state (dscp | pcp), dcbnl
//   spec.nics[].roce.pfc    PFC-enabled priorities, dcbnl DCB_ATTR_IEEE_PFC
//   spec.nics[].roce.ecn    mlx5 ECN per priority, ecn/roce_{np,rp}/enable/<p>
//   spec.nics[].roce.dscpMap  DSCP -> priority APP entries, dcbnl
//   spec.nics[].roce.dcbx   DCBX host/firmware-managed, dcbnl
//   spec.nics[].roce.pause  global pause frames, ethtool netlink (pause_backend.h)
//   spec.nics[].roce.tos    default RoCE ToS of the RDMA port (roce_tos.h)
// Trust and PFC go through a DcbBackend (roce_backend.h: dcbnl on the live
// root, the capture files under a tree root); ECN through the host layer on
// both. All live and lost at reboot: the systemd unit's apply at every boot
// puts them back. Plus the doctor check of roce_checks.h.
#ifndef PROVISIONER_MODULES_ROCE_ROCE_MODULE_H_
#define PROVISIONER_MODULES_ROCE_ROCE_MODULE_H_

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "engine/module/module.h"
#include "modules/roce/pause_backend.h"
#include "modules/roce/roce_backend.h"

namespace provisioner {

struct RoceModuleOptions {
  // The DCB backend for a root (NewDcbBackend unless a test says otherwise).
  BackendForRoot<DcbBackend> dcb = NewDcbBackend;
  // The pause frame backend for a root (NewPauseBackend unless a test says otherwise).
  BackendForRoot<PauseBackend> pause = NewPauseBackend;
  // NCCL_IB_TC of the environment (getenv unless a test says otherwise).
  std::function<const char*()> nccl_ib_tc_env;
};

class RoceModule final : public ModuleWithOptions<RoceModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;

  std::string_view name() const override { return "roce"; }
  // Discover reads every NIC PF netdev's DCB and ECN state and NCCL_IB_TC; while
  // planning a host.yaml without roce settings it reads nothing.
  // Apply re-reads and writes only what differs.
  // RenderFactsJson (discover output): roce_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange, Check, RenderFactsJson,
                               RenderFactsTable);
  // Different PFs at once: a DCB backend (netlink socket) per call.
  bool ConcurrentApply() const override { return true; }
};

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_ROCE_ROCE_MODULE_H_
