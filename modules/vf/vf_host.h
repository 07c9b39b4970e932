// VFs on the host, through HostFs and a VfSettingsBackend (vf_backend.h): reading
// per-VF state, setting IB GUIDs / trust / spoof check, and moving VFs
// between drivers with driver_override + unbind + bind.
//
// Where the state lives:
// - driver, driver_override: sysfs of the VF (`driver` link, `driver_override`
//   file; the kernel reads "(null)" when unset).
// - IB node/port GUID: live root: set over netlink on the PF netdev (two
//   messages), read back from the VF's RDMA device (`node_guid`, the port GUID
//   in `ports/1/gids/0`) or the netlink dump. Under a tree root (and with
//   MLNX_OFED, where netlink is refused): the files
//   `/sys/bus/pci/devices/<PF>/sriov/<vf>/{node,port}` (= the
//   `/sys/class/infiniband/<PF RDMA dev>/device/sriov/<vf>/...` of the OFED
//   docs). mlx5 takes new GUIDs only when the VF is unbound and bound again.
// - trust, spoof check: no sysfs file exists in the real kernel. Live root:
//   netlink (IFLA_VF_TRUST / IFLA_VF_SPOOFCHK). Under a tree root: the tree
//   backend's capture files `/run/provisioner/vf/<PF>/<vf>/{trust,spoofchk}`
//   ("0"/"1"; absent = unknown), which `snapshot` writes from the live
//   netlink answer (the kernel simulator removes them with the VFs).
#ifndef PROVISIONER_MODULES_VF_VF_HOST_H_
#define PROVISIONER_MODULES_VF_VF_HOST_H_

#include <chrono>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/host_model.h"
#include "engine/module/module.h"
#include "engine/plan/change.h"
#include "modules/vf/vf_backend.h"
#include "modules/vf/vf_netlink.h"

namespace provisioner {

struct VfHostOptions {
  std::chrono::milliseconds poll_interval{20};
};
// "/sys/bus/pci/devices/<pf>/sriov/<vf>/<name>" (name: node | port | policy).
std::string OfedGuidPath(const std::string& pf, int vf, const std::string& name);

// Adds the vf module's facts: HostFacts::pci_drivers, each SR-IOV PF's
// ib_node_guid, each VF's driver_override, GUIDs, trust and spoof check.
// Unreadable optional facts stay unknown.
Status DiscoverVfFacts(const HostFs& fs, VfSettingsBackend& backend, HostFacts& facts);

// The PF's VFs by index (virtfnN links), as PCI addresses.
StatusOr<std::vector<std::string>> ResolveVfs(const HostFs& fs, const std::string& pf);

// Applies / verifies one change of the vf module (vf_planner.h).
Status ApplyVfChange(const Change& change, HostContext& ctx, VfSettingsBackend& backend,
                     const VfHostOptions& options);
Status VerifyVfChange(const Change& change, HostContext& ctx, VfSettingsBackend& backend);

// Moves one VF to `driver` ("" = unbound): unbind from its current driver,
// driver_override (vfio-pci: "vfio-pci"; others: cleared), bind through
// /sys/bus/pci/drivers/<driver>/bind, then waits (bounded by
// ctx.settle_timeout) for the `driver` link, and for a network driver for
// the VF's netdev. No write when it is already there.
Status BindVf(const std::string& vf, const std::string& driver, HostContext& ctx,
              const VfHostOptions& options);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_VF_VF_HOST_H_
