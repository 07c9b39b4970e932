// The host model: what discovery found. Filled by modules, read by planners,
// rendered by the engine (discover -o json has the contract's keys).
#ifndef PROVISIONER_ENGINE_MODEL_HOST_MODEL_H_
#define PROVISIONER_ENGINE_MODEL_HOST_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace provisioner {

// A VF as seen from its PF (contract: nics[].sriov.vfs[]).
struct VfInfo {
  std::string pci_address;
  int vf_index = 0;          // N of the PF's virtfnN link
  std::string driver;        // "" when unbound
  std::vector<std::string> netdevs;
  std::vector<std::string> rdma_devices;
};

// SR-IOV capability of a PF (absent without sriov_totalvfs, e.g. SRIOV_EN=0).
struct SriovInfo {
  int total_vfs = 0;
  int num_vfs = 0;
  std::optional<int> offset;
  std::optional<int> stride;
  std::string vf_device;  // sriov_vf_device, hex without 0x
  std::optional<bool> drivers_autoprobe;
  std::vector<VfInfo> vfs;  // ordered by vf_index
};

// One PCI function (libpci + sysfs).
struct PciFunction {
  std::string pci_address;   // "0000:af:00.0"
  std::string sysfs_path;    // resolved host path "/sys/devices/pci0000:ae/.../0000:af:00.0"
  std::string vendor;        // "15b3"
  std::string device_id;     // "1017"
  uint32_t class_code = 0;   // 0x020000 (class, subclass, prog-if)
  std::string vendor_name;   // from pci.ids ("" when unknown)
  std::string device_name;
  std::string driver;        // "" when unbound
  int numa_node = -1;
  std::vector<std::string> netdevs;
  std::vector<std::string> rdma_devices;
  std::optional<SriovInfo> sriov;  // PFs only
  std::string physfn;              // VFs: the PF's address; "" for a PF
  std::optional<int> vf_index;     // VFs: index under the PF
  std::string iommu_group;         // basename of the iommu_group link; "" without an IOMMU

  bool IsNetwork() const { return (class_code >> 16) == 0x02; }
  bool IsVf() const { return !physfn.empty(); }
};

struct KernelInfo {
  std::string release;  // from /proc/sys/kernel/osrelease
};

struct HostFacts {
  std::string root = "/";
  KernelInfo kernel;
  std::vector<PciFunction> pci;  // every function, ordered by address

  // RDMA netns mode, once the rdma module discovers it ("shared"/"exclusive").
  std::optional<std::string> rdma_netns_mode;
  std::vector<std::string> loaded_modules;

  const PciFunction* FindPci(const std::string& address) const;
  PciFunction* FindPci(const std::string& address);
  // Network-class functions that are SR-IOV PFs or carry an RDMA device
  // (contract: discover "nics"), in address order.
  std::vector<const PciFunction*> Nics() const;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_HOST_MODEL_H_
