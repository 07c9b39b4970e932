// Builds small kernel-shaped sysfs trees in a temp directory for discovery
// and apply tests: /sys/devices/pci<dom>:<bus>/<bdf> directories with the
// files libpci needs (vendor, device, class, irq, resource), relative links
// /sys/bus/pci/devices/<bdf> and /sys/bus/pci/drivers/<driver>, net/ and
// infiniband/ children, SR-IOV files with virtfnN/physfn links.
#ifndef PROVISIONER_MODULES_PCI_TESTING_SYSFS_TREE_H_
#define PROVISIONER_MODULES_PCI_TESTING_SYSFS_TREE_H_

#include <string>
#include <vector>

namespace provisioner::sysfs_testing {

struct FunctionSpec {
  std::string address;  // "0000:af:00.0"
  std::string vendor = "15b3";
  std::string device = "1017";
  std::string class_code = "020000";
  std::string driver;           // "" = unbound
  std::string numa_node = "0";  // "" = no file
  std::vector<std::string> netdevs;
  std::vector<std::string> rdma_devices;
  // Parent directory under /sys/devices ("" = "pci<domain>:<bus>").
  std::string parent;

  // FunctionSpec::At("0000:af:00.0").Ids("15b3", "1017").Driver("mlx5_core")...
  static FunctionSpec At(std::string a) {
    FunctionSpec f;
    f.address = std::move(a);
    return f;
  }
  FunctionSpec& Ids(std::string v, std::string d) {
    vendor = std::move(v);
    device = std::move(d);
    return *this;
  }
  FunctionSpec& Class(std::string c) {
    class_code = std::move(c);
    return *this;
  }
  FunctionSpec& Driver(std::string d) {
    driver = std::move(d);
    return *this;
  }
  FunctionSpec& Numa(std::string n) {
    numa_node = std::move(n);
    return *this;
  }
  FunctionSpec& Net(std::string n) {
    netdevs.push_back(std::move(n));
    return *this;
  }
  FunctionSpec& Rdma(std::string r) {
    rdma_devices.push_back(std::move(r));
    return *this;
  }
  FunctionSpec& Parent(std::string p) {
    parent = std::move(p);
    return *this;
  }
};

class SysfsTree {
 public:
  // `root` must exist; the tree is built under it.
  explicit SysfsTree(std::string root) : root_(std::move(root)) {}

  const std::string& root() const { return root_; }

  // Adds a function; returns its resolved host path ("/sys/devices/...").
  std::string AddFunction(const FunctionSpec& spec);
  // Adds sriov_totalvfs, sriov_numvfs (0), offset, stride, vf_device, autoprobe.
  void AddSriov(const std::string& pf, int total_vfs, const std::string& vf_device = "1018");
  // Adds VF `index` of `pf` at `vf.address` (a sibling of the PF) with its
  // physfn/virtfnN links, and bumps the PF's sriov_numvfs.
  std::string AddVf(const std::string& pf, int index, FunctionSpec vf);
  // Writes a file (host path), creating directories.
  void WriteFile(const std::string& host_path, const std::string& content);
  void Symlink(const std::string& host_path, const std::string& target);
  void Remove(const std::string& host_path);
  // The filesystem path of a host path.
  std::string Fs(const std::string& host_path) const { return root_ + host_path; }
  // Resolved host path of a function added before.
  std::string DevicePath(const std::string& address) const;

 private:
  std::string root_;
};

// Relative link target from the directory of `link` to `target` (host paths).
std::string RelativeTarget(const std::string& link, const std::string& target);

}  // namespace provisioner::sysfs_testing

#endif  // PROVISIONER_MODULES_PCI_TESTING_SYSFS_TREE_H_
