// The SR-IOV part of a simulated kernel, acting on a host tree: what Linux
// (drivers/pci/iov.c) and mlx5/igb do when `sriov_numvfs` is written
// (kernel-facts.md "SR-IOV"):
//   not a number -> EINVAL; above sriov_totalvfs -> ERANGE; equal to the
//   current count -> success, no-op; no PF driver -> ENOENT; 0 -> destroys
//   every VF; non-zero while non-zero -> EBUSY; N -> creates N VF functions.
// VF PCI functions exist when the write returns; their netdevs and RDMA
// devices are queued and appear on Flush() ("a little later"), which the
// in-process HostFs and the daemon call after a delay.
#ifndef PROVISIONER_TEST_SIM_SRIOV_SIM_H_
#define PROVISIONER_TEST_SIM_SRIOV_SIM_H_

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status.h"
#include "test/support/host_tree.h"

namespace provisioner::testing {

struct SriovSimOptions {
  // The driver enables at most this many VFs and still reports success
  // ("may enable fewer VFs than asked": callers must re-read). -1 = as asked.
  int max_enable = -1;
  // Errno for an enable that the simulated driver fails (0 = none), e.g.
  // ENOMEM, EIO. Applies to enables only, not to writes of 0.
  int enable_error = 0;
  // New VF netdevs registered administratively down, as the kernel does
  // (register_netdevice() leaves IFF_UP clear; only a dev_open(), by
  // userspace, sets it). Off: they copy the PF's state (a host where
  // NetworkManager or udev brings every new netdev up).
  bool vf_netdevs_down = false;
  // The daemon (kernel_sim): the writer's bytes are in sriov_numvfs while the
  // simulator acts on them, and the writer may write again before it is done
  // (a wait ended by a signal, then the rollback's 0). The count is written
  // back only while the file still holds the write acted on (or nothing), so
  // that the newer write stays for its own event. In Linux the write returns
  // only once the VFs are enabled; only the daemon is asynchronous.
  bool keep_newer_write = false;
};

// Parses a sriov_numvfs write like kstrtou16(buf, 0): optional '+', decimal,
// 0x-hex or 0-octal, one optional trailing newline. Returns the value, or
// -EINVAL / -ERANGE.
int ParseNumVfsWrite(std::string_view value);

// VF netdev name from the PF's ("ens6f0np0", 2) -> "ens6f0v2": the PF name
// without its "np<N>" phys_port_name suffix, then "v<index>".
std::string VfNetdevName(const std::string& pf_netdev, int vf_index);

// The driver a VF binds to when its PF uses `pf_driver` (mlx5_core ->
// mlx5_core, igb -> igbvf, ixgbe -> ixgbevf, i40e/ice -> iavf).
std::string VfDriverFor(const std::string& pf_driver);

class SriovSim {
 public:
  explicit SriovSim(std::string root, SriovSimOptions options = {});

  // A write of `value` to the sriov_numvfs of the PF at host path `pf` (any
  // path designating the PF directory, e.g. /sys/bus/pci/devices/<bdf>).
  // `current` is the count the kernel has enabled now; -1 reads it from the
  // sriov_numvfs file. Returns 0 or an errno. On success the file reads
  // "<n>\n" and the VF functions exist; netdevs/RDMA devices are queued as
  // batch last_batch().
  int WriteNumVfs(const std::string& pf, std::string_view value, int current = -1);

  // Creates the queued netdevs and RDMA devices of batches <= up_to.
  Status Flush(uint64_t up_to = UINT64_MAX);
  // Creates the queued netdevs and RDMA devices of batch `batch` only.
  Status FlushBatch(uint64_t batch);
  size_t pending() const { return pending_.size(); }
  uint64_t last_batch() const { return batch_; }
  // Why the last WriteNumVfs failed ("" after a success).
  const std::string& last_error() const { return last_error_; }

  // Number of virtfnN links of the PF (host path, resolved).
  int CountVfs(const std::string& pf) const;

  // Driver binding, as drivers/base and drivers/pci do it (kernel-facts.md
  // "Binding VFs"). All return 0 or an errno; last_error() says why.
  // A write to the device's driver_override (`dev`: any host path of the
  // device directory): "" or "\n" clears it (reads "(null)"), else the name.
  // It neither unbinds nor loads anything.
  int WriteDriverOverride(const std::string& dev, std::string_view value);
  // /sys/bus/pci/drivers/<driver>/unbind: ENOENT driver not registered,
  // ENODEV no such device or not bound to `driver`. The device loses its
  // driver link; a VF leaving a network driver loses its netdevs and RDMA
  // devices; leaving vfio-pci removes /dev/vfio/<iommu group>.
  int Unbind(const std::string& driver, std::string_view bdf);
  // /sys/bus/pci/drivers/<driver>/bind: ENOENT driver not registered, ENODEV
  // no such device or no match (driver_override names another driver; no
  // override and `driver` is not the VF driver of its PF), EBUSY already
  // bound, EINVAL vfio-pci without an IOMMU group. Binding vfio-pci creates
  // /dev/vfio/<iommu group>; binding a VF to a network driver queues its
  // netdev and RDMA device (Flush(), like new VFs), with the IB GUIDs written
  // to the PF's sriov/<vf>/{node,port} files.
  int Bind(const std::string& driver, std::string_view bdf);
  // /sys/bus/pci/drivers_probe: ENODEV no such device; otherwise success,
  // whether or not a driver (driver_override, else the VF's own) took it.
  int DriversProbe(std::string_view bdf);
  // Registers a PCI driver (as loading its module does): the directory
  // /sys/bus/pci/drivers/<name> with bind/unbind/new_id/remove_id/uevent.
  Status RegisterDriver(const std::string& name);
  // Registers the PCI drivers whose modules are loaded (/sys/module/<m>
  // exists; the kernel creates it on load) but not registered yet:
  // vfio_pci -> vfio-pci. Run after writes, so a module loaded by an apply
  // under a tree root brings its driver.
  Status SyncModuleDrivers();

 private:
  struct PendingVf {
    uint64_t batch;
    std::string pf_dir;
    std::string vf_dir;
    int index;
  };
  int Enable(const std::string& pf_dir, int n);
  Status Disable(const std::string& pf_dir);
  // Removes a VF's netdevs, RDMA devices and uverbs entries.
  Status RemoveVfDevices(const std::string& vf_dir);
  // The real directory of the device `bdf` ("" when there is none).
  std::string DeviceDir(std::string_view bdf) const;
  // The driver a device takes without driver_override ("" = none known).
  std::string NativeDriver(const std::string& dev_dir) const;
  int BindDevice(const std::string& driver, const std::string& dev_dir);
  Status SetUeventDriver(const std::string& dev_dir, const std::string& driver);
  Status RemoveVfioNode(const std::string& group);
  Status CreateVfDevices(const PendingVf& p);
  int Fail(int err, std::string why);
  // Allocators (loaded from the tree on first use, then kept up to date):
  // ifindex is monotonic like the kernel's; the others take the smallest
  // free number like an IDA.
  void LoadAllocators();
  int AllocIfindex();
  int AllocSmallest(std::set<int>* used);
  std::string AllocRdmaName(const std::string& prefix);

  TreeWriter w_;
  bool allocators_loaded_ = false;
  int next_ifindex_ = 1;
  std::set<int> iommu_groups_;
  std::set<int> uverbs_;
  std::set<std::string> rdma_names_;
  SriovSimOptions options_;
  std::vector<PendingVf> pending_;
  uint64_t batch_ = 0;
  std::string last_error_;
};

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_SRIOV_SIM_H_
