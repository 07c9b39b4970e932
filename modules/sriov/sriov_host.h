// SR-IOV on the host, through HostFs only: reading a PF's sriov_* files and
// virtfnN links, changing sriov_numvfs the way the kernel accepts it, and
// waiting (bounded, on the injected clock) for the VFs to settle.
#ifndef PROVISIONER_MODULES_SRIOV_SRIOV_HOST_H_
#define PROVISIONER_MODULES_SRIOV_SRIOV_HOST_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/host_model.h"
#include "engine/module/module.h"

namespace provisioner {

// "/sys/bus/pci/devices/<bdf>"
std::string PciDevicePath(const std::string& bdf);

// The SR-IOV facts of a function: nullopt when it has no sriov_totalvfs.
// VFs come from the virtfnN links; their driver, netdevs and RDMA devices
// from `facts.pci` when PCI discovery saw them, else from the tree. A count
// outside the kernel's range, or a virtfnN link that is no VF (the PF
// itself, a link leaving the tree), is a warning appended to `warnings`
// (the function's SR-IOV facts, or that VF, left out), not an error.
StatusOr<std::optional<SriovInfo>> ReadSriovInfo(const HostFs& fs, const std::string& bdf,
                                                 const HostFacts& facts,
                                                 std::vector<std::string>* warnings);

// What one poll of a PF shows while VFs come and go.
struct VfState {
  std::string pci_address;
  std::string driver;         // "" when unbound
  bool needs_netdev = false;  // bound to a network driver
  bool has_netdev = false;    // a netdev listed in /sys/class/net
};
struct NumVfsState {
  int num_vfs = 0;           // sriov_numvfs
  std::vector<VfState> vfs;  // virtfnN links, by N
  int Ready() const;         // VFs that have their netdevs or need none
};
StatusOr<NumVfsState> ReadNumVfsState(const HostFs& fs, const std::string& bdf);

struct NumVfsApplyOptions {
  std::chrono::milliseconds poll_interval{100};
  std::chrono::milliseconds progress_interval{1000};
  // A write of sriov_numvfs may block (writing 0 while a VM holds a vfio-pci
  // VF open); sriov-network-operator gives up after 2 minutes too.
  std::chrono::milliseconds write_timeout{std::chrono::minutes(2)};
};

// Sets sriov_numvfs of `bdf` to `target`: 0 first when going between two
// non-zero counts (re-reading the current count, not trusting the plan),
// then waits until the count reads `target`, as many virtfn links exist and
// every VF bound to a network driver has its netdev(s); bounded by
// ctx.settle_timeout. Errors keep the errno of the write. `bdf` goes into a
// path as it is: only the full form "0000:af:00.0" (PciAddress::ParseFull).
Status ApplyNumVfs(const std::string& bdf, int target, HostContext& ctx,
                   const NumVfsApplyOptions& options = {});

// Re-reads sriov_numvfs and counts virtfn links. `label` names the desired
// value in the message ("nics[gpu1-nic].numVfs: desired 12, current 8").
// `bdf` as for ApplyNumVfs.
Status VerifyNumVfs(const std::string& bdf, int target, const std::string& label, const HostFs& fs);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_SRIOV_SRIOV_HOST_H_
