#include "modules/pci/testing/sysfs_tree.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace provisioner::sysfs_testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

// A resource file of one 64-bit memory BAR, like the kernel's.
constexpr char kResource[] =
    "0x00000000e2000000 0x00000000e3ffffff 0x000000000014220c\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n"
    "0x0000000000000000 0x0000000000000000 0x0000000000000000\n";

}  // namespace

std::string RelativeTarget(const std::string& link, const std::string& target) {
  std::vector<std::string> from = Split(link);
  from.pop_back();  // the link's directory
  std::vector<std::string> to = Split(target);
  size_t common = 0;
  while (common < from.size() && common < to.size() && from[common] == to[common]) ++common;
  std::string out;
  for (size_t i = common; i < from.size(); ++i) out += "../";
  for (size_t i = common; i < to.size(); ++i) out += to[i] + (i + 1 < to.size() ? "/" : "");
  if (!out.empty() && out.back() == '/') out.pop_back();
  return out.empty() ? "." : out;
}

void SysfsTree::WriteFile(const std::string& host_path, const std::string& content) {
  fs::path p = Fs(host_path);
  fs::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << content;
}

void SysfsTree::Symlink(const std::string& host_path, const std::string& target) {
  fs::path p = Fs(host_path);
  fs::create_directories(p.parent_path());
  std::error_code ec;
  fs::remove(p, ec);
  fs::create_symlink(RelativeTarget(host_path, target), p);
}

void SysfsTree::Remove(const std::string& host_path) {
  std::error_code ec;
  fs::remove_all(Fs(host_path), ec);
}

std::string SysfsTree::DevicePath(const std::string& address) const {
  fs::path link = Fs("/sys/bus/pci/devices/" + address);
  fs::path real = fs::canonical(link);
  return real.string().substr(root_.size());
}

std::string SysfsTree::AddFunction(const FunctionSpec& spec) {
  std::string parent = spec.parent;
  if (parent.empty()) parent = "pci" + spec.address.substr(0, 7);  // "pci0000:af"
  const std::string dev = "/sys/devices/" + parent + "/" + spec.address;
  fs::create_directories(Fs(dev));
  WriteFile(dev + "/vendor", "0x" + spec.vendor + "\n");
  WriteFile(dev + "/device", "0x" + spec.device + "\n");
  WriteFile(dev + "/class", "0x" + spec.class_code + "\n");
  WriteFile(dev + "/irq", "0\n");
  WriteFile(dev + "/resource", kResource);
  if (!spec.numa_node.empty()) WriteFile(dev + "/numa_node", spec.numa_node + "\n");
  Symlink("/sys/bus/pci/devices/" + spec.address, dev);
  if (!spec.driver.empty()) {
    fs::create_directories(Fs("/sys/bus/pci/drivers/" + spec.driver));
    Symlink(dev + "/driver", "/sys/bus/pci/drivers/" + spec.driver);
  }
  for (const auto& n : spec.netdevs) {
    fs::create_directories(Fs(dev + "/net/" + n));
    Symlink("/sys/class/net/" + n, dev + "/net/" + n);
  }
  for (const auto& r : spec.rdma_devices) {
    fs::create_directories(Fs(dev + "/infiniband/" + r));
    Symlink("/sys/class/infiniband/" + r, dev + "/infiniband/" + r);
  }
  return dev;
}

void SysfsTree::AddSriov(const std::string& pf, int total_vfs, const std::string& vf_device) {
  const std::string dev = DevicePath(pf);
  WriteFile(dev + "/sriov_totalvfs", std::to_string(total_vfs) + "\n");
  WriteFile(dev + "/sriov_numvfs", "0\n");
  WriteFile(dev + "/sriov_offset", "2\n");
  WriteFile(dev + "/sriov_stride", "1\n");
  WriteFile(dev + "/sriov_vf_device", vf_device + "\n");
  WriteFile(dev + "/sriov_drivers_autoprobe", "1\n");
}

std::string SysfsTree::AddVf(const std::string& pf, int index, FunctionSpec vf) {
  const std::string pf_dev = DevicePath(pf);
  std::string parent = pf_dev.substr(std::string("/sys/devices/").size());
  parent = parent.substr(0, parent.rfind('/'));
  vf.parent = parent;
  const std::string dev = AddFunction(vf);
  Symlink(dev + "/physfn", pf_dev);
  Symlink(pf_dev + "/virtfn" + std::to_string(index), dev);
  int n = 0;
  for (const auto& e : fs::directory_iterator(Fs(pf_dev))) {
    if (e.path().filename().string().rfind("virtfn", 0) == 0) ++n;
  }
  WriteFile(pf_dev + "/sriov_numvfs", std::to_string(n) + "\n");
  return dev;
}

}  // namespace provisioner::sysfs_testing
