#include "test/support/host_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/fd_io.h"
#include "engine/host/host_fs.h"
#include "engine/model/pci_address.h"

namespace provisioner::testing {
namespace {

std::string Fmt(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Fmt(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

std::vector<std::string> Components(std::string_view path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = i;
    while (j < path.size() && path[j] != '/') ++j;
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

Status RemoveAllFs(const std::string& fs) {
  struct stat st;
  if (::lstat(fs.c_str(), &st) != 0) {
    return errno == ENOENT ? OkStatus() : ErrnoToStatus(errno, "lstat " + fs);
  }
  if (S_ISDIR(st.st_mode)) {
    ::chmod(fs.c_str(), (st.st_mode & 07777) | 0700);
    DIR* d = ::opendir(fs.c_str());
    if (d == nullptr) return ErrnoToStatus(errno, "opendir " + fs);
    std::vector<std::string> names;
    while (struct dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(n);
    }
    ::closedir(d);
    for (const auto& n : names) RETURN_IF_ERROR(RemoveAllFs(fs + "/" + n));
    if (::rmdir(fs.c_str()) != 0) return ErrnoToStatus(errno, "rmdir " + fs);
    return OkStatus();
  }
  if (::unlink(fs.c_str()) != 0 && errno != ENOENT) return ErrnoToStatus(errno, "unlink " + fs);
  return OkStatus();
}

std::vector<int> ParseCpuList(const std::string& list) {
  std::vector<int> out;
  std::stringstream ss(list);
  std::string part;
  while (std::getline(ss, part, ',')) {
    if (part.empty()) continue;
    size_t dash = part.find('-');
    int a = std::atoi(part.substr(0, dash).c_str());
    int b = dash == std::string::npos ? a : std::atoi(part.substr(dash + 1).c_str());
    for (int c = a; c <= b; ++c) out.push_back(c);
  }
  return out;
}

std::vector<uint8_t> ParseMac(const std::string& mac) {
  std::vector<uint8_t> out;
  std::stringstream ss(mac);
  std::string byte;
  while (std::getline(ss, byte, ':'))
    out.push_back(static_cast<uint8_t>(std::strtoul(byte.c_str(), nullptr, 16)));
  return out;
}

std::string ResourceLine(uint64_t start, uint64_t size, uint64_t flags) {
  uint64_t end = size == 0 ? 0 : start + size - 1;
  if (size == 0) start = 0, flags = 0;
  return Fmt("0x%016llx 0x%016llx 0x%016llx\n", static_cast<unsigned long long>(start),
             static_cast<unsigned long long>(end), static_cast<unsigned long long>(flags));
}

constexpr uint64_t kMem64Prefetch = 0x14220c;
constexpr const char* kZeroGid = "0000:0000:0000:0000:0000:0000:0000:0000";

}  // namespace

// ------------------------------------------------------------------ PciBdf

std::optional<PciBdf> PciBdf::FromRoutingId(int domain, int rid) {
  if (rid < 0 || rid > 0xffff) return std::nullopt;
  PciBdf b;
  b.domain = domain;
  b.bus = rid >> 8;
  b.dev = (rid >> 3) & 0x1f;
  b.fn = rid & 7;
  return b;
}

std::string PciBdf::ToString() const { return Fmt("%04x:%02x:%02x.%d", domain, bus, dev, fn); }

std::optional<PciBdf> ParseBdf(std::string_view s) {
  auto a = PciAddress::ParseFull(s);
  if (!a) return std::nullopt;
  PciBdf b;
  b.domain = static_cast<int>(a->domain());  // four hex digits: fits
  b.bus = a->bus();
  b.dev = a->device();
  b.fn = a->function();
  return b;
}

std::optional<PciBdf> VfBdf(const PciBdf& pf, int offset, int stride, int vf_index) {
  return PciBdf::FromRoutingId(pf.domain, pf.RoutingId() + offset + vf_index * stride);
}

// -------------------------------------------------------------- TreeWriter

TreeWriter::TreeWriter(std::string root) : root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  reader_ = std::shared_ptr<HostFs>(NewLocalHostFs(root_));
}

std::string TreeWriter::Fs(std::string_view host_path) const {
  std::string out = root_;
  for (const auto& c : Components(host_path)) out += "/" + c;
  return out;
}

Status TreeWriter::MakeDir(std::string_view path, int mode) {
  std::string fs = root_;
  for (const auto& c : Components(path)) {
    fs += "/" + c;
    struct stat st;
    if (::lstat(fs.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) continue;
      return ErrnoToStatus(ENOTDIR, "mkdir " + std::string(path));
    }
    if (::mkdir(fs.c_str(), static_cast<mode_t>(mode)) != 0) {
      if (errno == EEXIST) continue;
      return ErrnoToStatus(errno, "mkdir " + fs);
    }
    ::chmod(fs.c_str(), static_cast<mode_t>(mode));  // independent of the umask
  }
  return OkStatus();
}

Status TreeWriter::WriteFile(std::string_view path, std::string_view content, int mode) {
  std::string fs = Fs(path);
  // Fast path: the parent exists and `fs` is a regular file or absent.
  int fd = ::open(fs.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0 && (errno == ENOENT || errno == ELOOP || errno == EISDIR || errno == ENOTDIR)) {
    RETURN_IF_ERROR(MakeDir(Dirname(path)));
    struct stat st;
    if (::lstat(fs.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) RETURN_IF_ERROR(RemoveAllFs(fs));
    fd = ::open(fs.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  }
  if (fd < 0) return ErrnoToStatus(errno, "create " + fs);
  if (int e = WriteAll(fd, content); e != 0) {
    ::close(fd);
    return ErrnoToStatus(e, "write " + fs);
  }
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0) {
    int e = errno;
    ::close(fd);
    return ErrnoToStatus(e, "chmod " + fs);
  }
  ::close(fd);
  return OkStatus();
}

Status TreeWriter::Link(std::string_view link, std::string_view target) {
  std::string fs = Fs(link);
  std::string text = SysfsRelativeLink(link, target);
  if (::symlink(text.c_str(), fs.c_str()) == 0) return OkStatus();
  if (errno == ENOENT) {
    RETURN_IF_ERROR(MakeDir(Dirname(link)));
  } else if (errno == EEXIST) {
    RETURN_IF_ERROR(RemoveAllFs(fs));
  }
  if (::symlink(text.c_str(), fs.c_str()) != 0) return ErrnoToStatus(errno, "symlink " + fs);
  return OkStatus();
}

Status TreeWriter::RemoveAll(std::string_view path) {
  if (Components(path).empty()) return InvalidArgumentError("refusing to remove the root");
  return RemoveAllFs(Fs(path));
}

bool TreeWriter::Exists(std::string_view path) const {
  struct stat st;
  return ::lstat(Fs(path).c_str(), &st) == 0;
}

StatusOr<std::string> TreeWriter::ReadFile(std::string_view path) const {
  return reader_->ReadFile(path);
}

StatusOr<std::string> TreeWriter::ReadAttr(std::string_view path) const {
  return reader_->ReadAttr(path);
}

std::vector<std::string> TreeWriter::List(std::string_view path) const {
  auto l = reader_->ListDir(path);
  return l.ok() ? *l : std::vector<std::string>{};
}

StatusOr<std::string> TreeWriter::RealPath(std::string_view path) const {
  return reader_->Resolve(path);
}

std::string TreeWriter::ReadLink(std::string_view path) const {
  char buf[PATH_MAX];
  ssize_t n = ::readlink(Fs(path).c_str(), buf, sizeof buf - 1);
  return n < 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

std::string SysfsRelativeLink(std::string_view link, std::string_view target) {
  std::vector<std::string> from = Components(Dirname(link));
  std::vector<std::string> to = Components(target);
  // Longest common prefix that is a strict ancestor of the target.
  size_t common = 0;
  while (common < from.size() && common + 1 < to.size() && from[common] == to[common]) ++common;
  std::string out;
  for (size_t i = common; i < from.size(); ++i) out += "../";
  for (size_t i = common; i < to.size(); ++i) {
    out += to[i];
    if (i + 1 < to.size()) out += "/";
  }
  return out;
}

// ----------------------------------------------------------------- helpers

std::string GuidFromMac(const std::string& mac) {
  std::vector<uint8_t> m = ParseMac(mac);
  if (m.size() != 6) return "0000:0000:0000:0000";
  return Fmt("%02x%02x:%02x03:00%02x:%02x%02x", m[0], m[1], m[2], m[3], m[4], m[5]);
}

std::string LinkLocalGidFromMac(const std::string& mac) {
  std::vector<uint8_t> m = ParseMac(mac);
  if (m.size() != 6) return kZeroGid;
  return Fmt("fe80:0000:0000:0000:%02x%02x:%02xff:fe%02x:%02x%02x", m[0] ^ 0x02, m[1], m[2], m[3],
             m[4], m[5]);
}

std::string Ipv4MappedGid(const std::string& ipv4) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (sscanf(ipv4.c_str(), "%u.%u.%u.%u", &a, &b, &c, &d) != 4) return kZeroGid;
  return Fmt("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", a, b, c, d);
}

std::string IbGidFromGuid(const std::string& guid) { return "fe80:0000:0000:0000:" + guid; }

std::string CpuMaskFromList(const std::string& cpulist, int nr_cpus) {
  std::vector<int> cpus = ParseCpuList(cpulist);
  int words = std::max(1, (nr_cpus + 31) / 32);
  std::vector<uint32_t> mask(static_cast<size_t>(words), 0);
  for (int c : cpus) {
    if (c >= 0 && c < words * 32) mask[static_cast<size_t>(c / 32)] |= 1u << (c % 32);
  }
  std::string out;
  for (int i = words - 1; i >= 0; --i) {
    out += Fmt("%08x", mask[static_cast<size_t>(i)]);
    if (i > 0) out += ",";
  }
  return out;
}

int NextFreeIfindex(const TreeWriter& w) {
  int max = 0;
  for (const auto& n : w.List("/sys/class/net")) {
    auto v = w.ReadAttr("/sys/class/net/" + n + "/ifindex");
    if (v.ok()) max = std::max(max, std::atoi(v->c_str()));
  }
  return max + 1;
}

int NextFreeUverbs(const TreeWriter& w) {
  std::set<int> used;
  for (const auto& n : w.List("/sys/class/infiniband_verbs")) {
    if (n.rfind("uverbs", 0) == 0) used.insert(std::atoi(n.c_str() + 6));
  }
  int i = 0;
  while (used.count(i)) ++i;
  return i;
}

int NextFreeIommuGroup(const TreeWriter& w) {
  int max = -1;
  for (const auto& n : w.List("/sys/kernel/iommu_groups"))
    max = std::max(max, std::atoi(n.c_str()));
  return max + 1;
}

std::string NextFreeRdmaName(const TreeWriter& w, const std::string& prefix) {
  std::set<std::string> used;
  for (const auto& n : w.List("/sys/class/infiniband")) used.insert(n);
  int i = 0;
  while (used.count(prefix + std::to_string(i))) ++i;
  return prefix + std::to_string(i);
}

// ---------------------------------------------------------- object writers

namespace {

void Put8(std::string& c, size_t off, unsigned v) { c[off] = static_cast<char>(v & 0xff); }
void Put16(std::string& c, size_t off, unsigned v) {
  Put8(c, off, v);
  Put8(c, off + 1, v >> 8);
}
void Put32(std::string& c, size_t off, uint32_t v) {
  Put16(c, off, v & 0xffff);
  Put16(c, off + 2, v >> 16);
}

}  // namespace

std::string PcieConfigBytes(const PciFunctionSpec& f) {
  const PcieConfigSpec spec = f.config.value_or(PcieConfigSpec());
  const bool bridge = (f.class_code >> 8) == 0x0604;
  std::string c(4096, '\0');
  // Header (PCI Local Bus 3.0 §6.1): IDs, Command (memory space + bus
  // master), Status bit 4 = Capabilities List, revision and class code.
  Put16(c, 0x00, f.vendor);
  Put16(c, 0x02, f.device);
  Put16(c, 0x04, 0x0006);
  Put16(c, 0x06, 0x0010);
  Put8(c, 0x08, f.revision);
  Put8(c, 0x09, f.class_code & 0xff);
  Put16(c, 0x0a, f.class_code >> 8);
  Put8(c, 0x0e, bridge ? 0x01 : 0x00);  // header type 1 = PCI-to-PCI bridge
  if (bridge) {
    // Type 1: primary, secondary, subordinate bus numbers at 0x18..0x1a.
    std::optional<PciBdf> b = ParseBdf(f.bdf);
    Put8(c, 0x18, b ? b->bus : 0);
    Put8(c, 0x19, f.secondary_bus < 0 ? 0 : f.secondary_bus);
    Put8(c, 0x1a, f.subordinate_bus < 0 ? 0 : f.subordinate_bus);
  } else {
    Put16(c, 0x2c, f.subsystem_vendor);
    Put16(c, 0x2e, f.subsystem_device);
  }
  Put8(c, 0x34, 0x40);  // Capabilities Pointer
  Put8(c, 0x3c, f.irq & 0xff);
  // 0x40 Power Management (ID 0x01), next 0x60; PMC version 3, PMCSR D0.
  Put8(c, 0x40, 0x01);
  Put8(c, 0x41, 0x60);
  Put16(c, 0x42, 0x0003);
  // 0x60 PCI Express (ID 0x10), last standard capability (PCIe Base 5.0 §7.5.3):
  //   +0x02 PCI Express Capabilities: version 2, Device/Port Type bits 7:4,
  //         Slot Implemented (bit 8) on root and downstream ports
  //   +0x04 Device Capabilities: Max_Payload_Size Supported 512 (code 2)
  //   +0x08 Device Control: Relaxed Ordering (bit 4), MPS 256 (bits 7:5 = 1),
  //         No Snoop (bit 11), Max_Read_Request_Size (bits 14:12: 128 << code)
  Put8(c, 0x60, 0x10);
  Put8(c, 0x61, 0x00);
  const bool slot = spec.port_type == 4 || spec.port_type == 6;
  Put16(c, 0x62, 0x0002 | (spec.port_type << 4) | (slot ? 0x0100 : 0));
  Put32(c, 0x64, 0x00000002);
  int code = 0;
  while (code < 5 && (128 << code) < spec.max_read_request) ++code;
  Put16(c, 0x68, 0x0010 | (1 << 5) | 0x0800 | (code << 12));
  // Extended capabilities from 0x100 (PCIe Base 5.0 §7.6): header dword =
  // ID (15:0) | version (19:16) | next offset (31:20).
  // 0x100 AER (ID 0x0001, version 2), next ACS at 0x148 or none.
  Put32(c, 0x100, 0x0001u | (2u << 16) | (spec.acs_capability ? 0x148u << 20 : 0u));
  if (spec.acs_capability) {
    // 0x148 ACS (ID 0x000D, version 1, last; PCIe Base 5.0 §7.7.8):
    //   +0x04 ACS Capability, +0x06 ACS Control.
    Put32(c, 0x148, 0x000du | (1u << 16));
    Put16(c, 0x148 + 4, *spec.acs_capability);
    Put16(c, 0x148 + 6, spec.acs_control);
  }
  return c;
}

Status AddPciFunction(TreeWriter& w, const PciFunctionSpec& f, const std::string& dev_dir) {
  std::optional<PciBdf> bdf = ParseBdf(f.bdf);
  if (!bdf) return InvalidArgumentError("bad BDF " + f.bdf);
  const bool bridge = (f.class_code >> 8) == 0x0604;
  const std::string d = dev_dir + "/";
  RETURN_IF_ERROR(w.MakeDir(dev_dir));
  if (f.config) RETURN_IF_ERROR(w.WriteFile(d + "config", PcieConfigBytes(f), 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "vendor", Fmt("0x%04x\n", f.vendor)));
  RETURN_IF_ERROR(w.WriteFile(d + "device", Fmt("0x%04x\n", f.device)));
  RETURN_IF_ERROR(w.WriteFile(d + "subsystem_vendor", Fmt("0x%04x\n", f.subsystem_vendor)));
  RETURN_IF_ERROR(w.WriteFile(d + "subsystem_device", Fmt("0x%04x\n", f.subsystem_device)));
  RETURN_IF_ERROR(w.WriteFile(d + "class", Fmt("0x%06x\n", f.class_code)));
  RETURN_IF_ERROR(w.WriteFile(d + "revision", Fmt("0x%02x\n", f.revision)));
  RETURN_IF_ERROR(w.WriteFile(d + "irq", Fmt("%d\n", f.irq)));
  RETURN_IF_ERROR(w.WriteFile(d + "numa_node", Fmt("%d\n", f.numa_node), 0644));
  std::string cpulist = f.local_cpulist;
  if (cpulist.empty() && f.numa_node >= 0) {
    cpulist = w.ReadAttr(Fmt("/sys/devices/system/node/node%d/cpulist", f.numa_node)).value_or("");
  }
  if (cpulist.empty()) cpulist = w.ReadAttr("/sys/devices/system/cpu/online").value_or("0");
  std::vector<int> possible =
      ParseCpuList(w.ReadAttr("/sys/devices/system/cpu/possible").value_or(cpulist));
  int nr_cpus = possible.empty() ? 1 : possible.back() + 1;
  RETURN_IF_ERROR(w.WriteFile(d + "local_cpulist", cpulist + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "local_cpus", CpuMaskFromList(cpulist, nr_cpus) + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "enable", "1\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "msi_bus", "1\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "broken_parity_status", "0\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "d3cold_allowed", "1\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "dma_mask_bits", "64\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "consistent_dma_mask_bits", "64\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "current_link_speed", f.link_speed + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "max_link_speed", f.link_speed + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "current_link_width", Fmt("%d\n", f.link_width)));
  RETURN_IF_ERROR(w.WriteFile(d + "max_link_width", Fmt("%d\n", f.link_width)));
  RETURN_IF_ERROR(w.WriteFile(d + "driver_override", "(null)\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "remove", "", 0200));
  RETURN_IF_ERROR(w.WriteFile(d + "rescan", "", 0200));
  RETURN_IF_ERROR(w.WriteFile(d + "reset", "", 0200));
  std::string modalias = Fmt("pci:v%08Xd%08Xsv%08Xsd%08Xbc%02Xsc%02Xi%02X", f.vendor, f.device,
                             f.subsystem_vendor, f.subsystem_device, (f.class_code >> 16) & 0xff,
                             (f.class_code >> 8) & 0xff, f.class_code & 0xff);
  RETURN_IF_ERROR(w.WriteFile(d + "modalias", modalias + "\n"));
  std::string uevent;
  if (!f.driver.empty()) uevent += "DRIVER=" + f.driver + "\n";
  uevent += Fmt("PCI_CLASS=%X\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=%04X:%04X\n", f.class_code, f.vendor,
                f.device, f.subsystem_vendor, f.subsystem_device);
  uevent += "PCI_SLOT_NAME=" + f.bdf + "\nMODALIAS=" + modalias + "\n";
  RETURN_IF_ERROR(w.WriteFile(d + "uevent", uevent, 0644));

  // resource: 6 BARs, ROM, 6 IOV BARs (+ 4 bridge windows on bridges).
  std::string resource = ResourceLine(f.bar0, f.bar0_size, kMem64Prefetch);
  for (int i = 1; i < 7; ++i) resource += ResourceLine(0, 0, 0);
  uint64_t iov_base = f.bar0 + f.bar0_size;
  for (int i = 7; i < 13; ++i) {
    if (i == 7 && f.sriov && f.bar0 != 0) {
      resource +=
          ResourceLine(iov_base, f.sriov->vf_bar_size * static_cast<uint64_t>(f.sriov->total_vfs),
                       kMem64Prefetch);
    } else {
      resource += ResourceLine(0, 0, 0);
    }
  }
  if (bridge) {
    for (int i = 13; i < 17; ++i) resource += ResourceLine(0, 0, 0);
    RETURN_IF_ERROR(
        w.WriteFile(d + "secondary_bus_number", Fmt("%d\n", std::max(0, f.secondary_bus))));
    RETURN_IF_ERROR(
        w.WriteFile(d + "subordinate_bus_number", Fmt("%d\n", std::max(0, f.subordinate_bus))));
  }
  RETURN_IF_ERROR(w.WriteFile(d + "resource", resource));

  if (f.sriov) {
    const SriovSpec& s = *f.sriov;
    RETURN_IF_ERROR(w.WriteFile(d + "sriov_totalvfs", Fmt("%d\n", s.total_vfs)));
    RETURN_IF_ERROR(w.WriteFile(d + "sriov_numvfs", Fmt("%d\n", s.num_vfs), 0644));
    RETURN_IF_ERROR(w.WriteFile(d + "sriov_offset", Fmt("%d\n", s.offset)));
    RETURN_IF_ERROR(w.WriteFile(d + "sriov_stride", Fmt("%d\n", s.stride)));
    RETURN_IF_ERROR(w.WriteFile(d + "sriov_vf_device", Fmt("%x\n", s.vf_device)));
    RETURN_IF_ERROR(
        w.WriteFile(d + "sriov_drivers_autoprobe", s.drivers_autoprobe ? "1\n" : "0\n", 0644));
  }

  RETURN_IF_ERROR(w.Link(d + "subsystem", "/sys/bus/pci"));
  RETURN_IF_ERROR(w.Link("/sys/bus/pci/devices/" + f.bdf, dev_dir));
  if (!f.driver.empty()) {
    const std::string drv = "/sys/bus/pci/drivers/" + f.driver;
    if (!w.Exists(drv)) {
      for (const char* a : {"bind", "unbind", "new_id", "remove_id", "uevent"}) {
        RETURN_IF_ERROR(w.WriteFile(drv + "/" + a, "", 0200));
      }
      if (w.Exists("/sys/module/" + f.driver))
        RETURN_IF_ERROR(w.Link(drv + "/module", "/sys/module/" + f.driver));
    }
    RETURN_IF_ERROR(w.Link(drv + "/" + f.bdf, dev_dir));
    RETURN_IF_ERROR(w.Link(d + "driver", drv));
  }
  if (f.iommu_group >= 0) {
    const std::string g = Fmt("/sys/kernel/iommu_groups/%d", f.iommu_group);
    if (!w.Exists(g + "/type")) RETURN_IF_ERROR(w.WriteFile(g + "/type", "DMA\n", 0644));
    RETURN_IF_ERROR(w.Link(g + "/devices/" + f.bdf, dev_dir));
    RETURN_IF_ERROR(w.Link(d + "iommu_group", g));
  }
  return OkStatus();
}

Status AddNetdev(TreeWriter& w, const NetdevSpec& n, const std::string& dev_dir) {
  const std::string dir =
      dev_dir.empty() ? "/sys/devices/virtual/net/" + n.name : dev_dir + "/net/" + n.name;
  const std::string d = dir + "/";
  const bool ib = n.type == 32;
  const bool loopback = n.type == 772;
  int ifindex = n.ifindex > 0 ? n.ifindex : NextFreeIfindex(w);
  std::vector<uint8_t> mac = ParseMac(n.mac);
  std::string broadcast = ib ? "00:ff:ff:ff:ff:12:40:1b:ff:ff:00:00:00:00:00:00:ff:ff:ff:ff"
                             : (loopback ? "00:00:00:00:00:00" : "ff:ff:ff:ff:ff:ff");
  bool up = n.operstate == "up" || loopback;
  RETURN_IF_ERROR(w.MakeDir(dir));
  RETURN_IF_ERROR(w.WriteFile(d + "address", n.mac + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "addr_len", Fmt("%zu\n", mac.size())));
  RETURN_IF_ERROR(w.WriteFile(d + "addr_assign_type", "0\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "broadcast", broadcast + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "carrier", up ? "1\n" : "0\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "dev_id", "0x0\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "dev_port", Fmt("%d\n", n.dev_port)));
  RETURN_IF_ERROR(w.WriteFile(d + "dormant", "0\n"));
  RETURN_IF_ERROR(
      w.WriteFile(d + "flags", loopback ? "0x9\n" : (up ? "0x1003\n" : "0x1002\n"), 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "ifalias", "", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "ifindex", Fmt("%d\n", ifindex)));
  RETURN_IF_ERROR(w.WriteFile(d + "iflink", Fmt("%d\n", ifindex)));
  RETURN_IF_ERROR(w.WriteFile(d + "link_mode", "0\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "mtu", Fmt("%d\n", n.mtu), 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "name_assign_type", loopback ? "1\n" : "4\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "netdev_group", "0\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "operstate", (loopback ? "unknown" : n.operstate) + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "proto_down", "0\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "tx_queue_len", loopback ? "1000\n" : "1000\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "type", Fmt("%d\n", n.type)));
  RETURN_IF_ERROR(
      w.WriteFile(d + "uevent", Fmt("INTERFACE=%s\nIFINDEX=%d\n", n.name.c_str(), ifindex), 0644));
  if (!dev_dir.empty() && !ib) {
    RETURN_IF_ERROR(w.WriteFile(d + "speed", Fmt("%d\n", up ? n.speed : -1)));
    RETURN_IF_ERROR(w.WriteFile(d + "duplex", up ? "full\n" : "unknown\n"));
  }
  if (ib) {
    RETURN_IF_ERROR(w.WriteFile(d + "mode", "datagram\n", 0644));
    RETURN_IF_ERROR(w.WriteFile(d + "pkey", "0xffff\n"));
    RETURN_IF_ERROR(w.WriteFile(d + "umcast", "0\n", 0644));
    // Write-only, as ib_ipoib makes them (DEVICE_ATTR_WO): a P_Key written
    // to create_child makes the child <if>.<pkey>, to delete_child removes it.
    RETURN_IF_ERROR(w.WriteFile(d + "create_child", "", 0200));
    RETURN_IF_ERROR(w.WriteFile(d + "delete_child", "", 0200));
  }
  if (!n.phys_port_name.empty()) {
    RETURN_IF_ERROR(w.WriteFile(d + "phys_port_name", n.phys_port_name + "\n"));
  }
  if (n.ecn_enabled) {
    for (const char* point : {"roce_np", "roce_rp"}) {
      for (int p = 0; p < 8; ++p) {
        RETURN_IF_ERROR(w.WriteFile(d + "ecn/" + point + "/enable/" + std::to_string(p),
                                    ((*n.ecn_enabled >> p) & 1) ? "1\n" : "0\n", 0644));
      }
    }
  }
  RETURN_IF_ERROR(w.Link(d + "subsystem", "/sys/class/net"));
  if (!dev_dir.empty()) RETURN_IF_ERROR(w.Link(d + "device", dev_dir));
  RETURN_IF_ERROR(w.Link("/sys/class/net/" + n.name, dir));
  return OkStatus();
}

Status AddRdmaDevice(TreeWriter& w, const RdmaDeviceSpec& r, const std::string& dev_dir) {
  const std::string dir = dev_dir + "/infiniband/" + r.name;
  const std::string d = dir + "/";
  RETURN_IF_ERROR(w.MakeDir(dir));
  std::string hostname = w.ReadAttr("/proc/sys/kernel/hostname").value_or("localhost");
  RETURN_IF_ERROR(w.WriteFile(d + "node_type", "1: CA\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "node_guid", r.node_guid + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "sys_image_guid", r.sys_image_guid + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "fw_ver", r.fw_ver + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "hca_type", r.hca_type + "\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "hw_rev", "0x0\n"));
  RETURN_IF_ERROR(w.WriteFile(d + "board_id", r.board_id + "\n"));
  RETURN_IF_ERROR(w.WriteFile(
      d + "node_desc", (r.node_desc.empty() ? hostname + " " + r.name : r.node_desc) + "\n", 0644));
  RETURN_IF_ERROR(w.WriteFile(d + "uevent", "NAME=" + r.name + "\n", 0644));
  for (const auto& p : r.ports) {
    const std::string pd = d + Fmt("ports/%d/", p.port);
    const bool ib = p.link_layer == "InfiniBand";
    RETURN_IF_ERROR(w.WriteFile(pd + "state", p.state + "\n"));
    RETURN_IF_ERROR(w.WriteFile(pd + "phys_state", p.phys_state + "\n"));
    RETURN_IF_ERROR(w.WriteFile(pd + "link_layer", p.link_layer + "\n"));
    RETURN_IF_ERROR(w.WriteFile(pd + "rate", p.rate + "\n"));
    RETURN_IF_ERROR(w.WriteFile(pd + "lid", p.lid + "\n"));
    RETURN_IF_ERROR(w.WriteFile(pd + "sm_lid", p.sm_lid + "\n"));
    RETURN_IF_ERROR(w.WriteFile(pd + "sm_sl", "0\n"));
    RETURN_IF_ERROR(w.WriteFile(pd + "lid_mask_count", "0\n"));
    RETURN_IF_ERROR(w.WriteFile(pd + "cap_mask", p.cap_mask + "\n"));
    std::map<int, const GidSpec*> used;
    for (const auto& g : p.gids) used[g.index] = &g;
    RETURN_IF_ERROR(w.MakeDir(pd + "gid_attrs/types"));
    if (!ib) RETURN_IF_ERROR(w.MakeDir(pd + "gid_attrs/ndevs"));
    for (int i = 0; i < p.gid_table_size; ++i) {
      auto it = used.find(i);
      RETURN_IF_ERROR(w.WriteFile(pd + Fmt("gids/%d", i),
                                  (it == used.end() ? kZeroGid : it->second->gid) + "\n"));
      if (it == used.end()) continue;
      RETURN_IF_ERROR(w.WriteFile(pd + Fmt("gid_attrs/types/%d", i), it->second->type + "\n"));
      if (!it->second->ndev.empty()) {
        RETURN_IF_ERROR(w.WriteFile(pd + Fmt("gid_attrs/ndevs/%d", i), it->second->ndev + "\n"));
      }
    }
    for (int i = 0; i < p.pkey_table_size; ++i) {
      RETURN_IF_ERROR(w.WriteFile(pd + Fmt("pkeys/%d", i), i == 0 ? "0xffff\n" : "0x0000\n"));
    }
  }
  RETURN_IF_ERROR(w.Link(d + "device", dev_dir));
  RETURN_IF_ERROR(w.Link(d + "subsystem", "/sys/class/infiniband"));
  RETURN_IF_ERROR(w.Link("/sys/class/infiniband/" + r.name, dir));

  int uv = r.uverbs >= 0 ? r.uverbs : NextFreeUverbs(w);
  const std::string ud = dev_dir + Fmt("/infiniband_verbs/uverbs%d", uv);
  RETURN_IF_ERROR(w.WriteFile(ud + "/ibdev", r.name + "\n"));
  RETURN_IF_ERROR(w.WriteFile(ud + "/abi_version", "1\n"));
  RETURN_IF_ERROR(w.WriteFile(ud + "/dev", Fmt("231:%d\n", 192 + uv)));
  RETURN_IF_ERROR(
      w.WriteFile(ud + "/uevent",
                  Fmt("MAJOR=231\nMINOR=%d\nDEVNAME=infiniband/uverbs%d\n", 192 + uv, uv), 0644));
  RETURN_IF_ERROR(w.Link(ud + "/device", dev_dir));
  RETURN_IF_ERROR(w.Link(ud + "/subsystem", "/sys/class/infiniband_verbs"));
  RETURN_IF_ERROR(w.Link(Fmt("/sys/class/infiniband_verbs/uverbs%d", uv), ud));
  return OkStatus();
}

// ------------------------------------------------------------- whole host

Status BuildHostTree(const HostSpec& spec, const std::string& root) {
  TreeWriter w(root);
  {
    // mkdir -p the root itself.
    std::string fs;
    for (const auto& c : Components(root)) {
      fs += (fs.empty() && root[0] != '/') ? c : "/" + c;
      if (::mkdir(fs.c_str(), 0755) != 0 && errno != EEXIST)
        return ErrnoToStatus(errno, "mkdir " + fs);
    }
  }
  // procfs bits the engine reads through its host layer.
  RETURN_IF_ERROR(w.WriteFile("/proc/sys/kernel/osrelease", spec.kernel_release + "\n"));
  RETURN_IF_ERROR(w.WriteFile("/proc/sys/kernel/hostname", spec.hostname + "\n", 0644));
  std::string cmdline = spec.cmdline.empty()
                            ? "BOOT_IMAGE=/boot/vmlinuz-" + spec.kernel_release +
                                  " root=UUID=6f1c0a43-2b7e-4d3c-9f5e-1a2b3c4d5e6f ro quiet"
                            : spec.cmdline;
  RETURN_IF_ERROR(w.WriteFile("/proc/cmdline", cmdline + "\n"));
  std::string modules;
  for (const auto& m : spec.modules) {
    std::string deps;
    for (const auto& u : m.used_by) deps += u + ",";
    modules += Fmt("%s %d %zu %s Live 0x0000000000000000\n", m.name.c_str(), m.size,
                   m.used_by.size(), deps.empty() ? "-" : deps.c_str());
  }
  RETURN_IF_ERROR(w.WriteFile("/proc/modules", modules));
  for (const auto& m : spec.modules) {
    const std::string md = "/sys/module/" + m.name;
    RETURN_IF_ERROR(w.WriteFile(md + "/initstate", "live\n"));
    RETURN_IF_ERROR(w.WriteFile(md + "/refcnt", Fmt("%zu\n", m.used_by.size())));
    RETURN_IF_ERROR(w.WriteFile(md + "/uevent", "", 0200));
    for (const auto& u : m.used_by)
      RETURN_IF_ERROR(w.Link(md + "/holders/" + u, "/sys/module/" + u));
    for (const auto& [p, v] : m.parameters)
      RETURN_IF_ERROR(w.WriteFile(md + "/parameters/" + p, v + "\n"));
  }
  RETURN_IF_ERROR(w.WriteFile("/etc/hostname", spec.hostname + "\n", 0644));
  RETURN_IF_ERROR(w.MakeDir("/etc/modprobe.d"));
  RETURN_IF_ERROR(w.MakeDir("/etc/modules-load.d"));
  RETURN_IF_ERROR(w.MakeDir("/run"));

  // CPUs and NUMA nodes.
  std::string all_cpus;
  int max_cpu = 0;
  for (size_t n = 0; n < spec.numa_cpulists.size(); ++n) {
    const std::string& l = spec.numa_cpulists[n];
    RETURN_IF_ERROR(w.WriteFile(Fmt("/sys/devices/system/node/node%zu/cpulist", n), l + "\n"));
    for (int c : ParseCpuList(l)) max_cpu = std::max(max_cpu, c);
  }
  all_cpus = Fmt("0-%d", max_cpu);
  std::string nodes =
      spec.numa_cpulists.size() <= 1 ? "0" : Fmt("0-%zu", spec.numa_cpulists.size() - 1);
  RETURN_IF_ERROR(w.WriteFile("/sys/devices/system/node/online", nodes + "\n"));
  RETURN_IF_ERROR(w.WriteFile("/sys/devices/system/node/possible", nodes + "\n"));
  RETURN_IF_ERROR(w.WriteFile("/sys/devices/system/cpu/online", all_cpus + "\n"));
  RETURN_IF_ERROR(w.WriteFile("/sys/devices/system/cpu/possible", all_cpus + "\n"));
  for (size_t n = 0; n < spec.numa_cpulists.size(); ++n) {
    RETURN_IF_ERROR(w.WriteFile(Fmt("/sys/devices/system/node/node%zu/cpumap", n),
                                CpuMaskFromList(spec.numa_cpulists[n], max_cpu + 1) + "\n"));
  }

  // The PCI bus.
  RETURN_IF_ERROR(w.MakeDir("/sys/bus/pci/devices"));
  RETURN_IF_ERROR(w.MakeDir("/sys/bus/pci/drivers"));
  RETURN_IF_ERROR(w.MakeDir("/sys/bus/pci/slots"));
  RETURN_IF_ERROR(w.WriteFile("/sys/bus/pci/drivers_autoprobe", "1\n", 0644));
  RETURN_IF_ERROR(w.WriteFile("/sys/bus/pci/drivers_probe", "", 0200));
  RETURN_IF_ERROR(w.WriteFile("/sys/bus/pci/rescan", "", 0200));
  RETURN_IF_ERROR(w.WriteFile("/sys/bus/pci/uevent", "", 0200));
  RETURN_IF_ERROR(w.MakeDir("/sys/class/net"));
  RETURN_IF_ERROR(w.MakeDir("/sys/kernel/iommu_groups"));
  std::map<std::string, std::string> dev_dirs;
  for (const auto& f : spec.pci) {
    std::string dir;
    if (f.parent.empty()) {
      std::optional<PciBdf> b = ParseBdf(f.bdf);
      if (!b) return InvalidArgumentError("bad BDF " + f.bdf);
      std::string host_bridge = Fmt("/sys/devices/pci%04x:%02x", b->domain, b->bus);
      if (!w.Exists(host_bridge)) {
        RETURN_IF_ERROR(w.WriteFile(host_bridge + "/uevent", "", 0644));
        RETURN_IF_ERROR(w.MakeDir(host_bridge + "/power"));
      }
      dir = host_bridge + "/" + f.bdf;
    } else {
      auto it = dev_dirs.find(f.parent);
      if (it == dev_dirs.end())
        return InvalidArgumentError(f.bdf + ": parent " + f.parent + " not defined before");
      dir = it->second + "/" + f.bdf;
    }
    dev_dirs[f.bdf] = dir;
    RETURN_IF_ERROR(AddPciFunction(w, f, dir));
  }
  if (!spec.rdma.empty()) {
    RETURN_IF_ERROR(w.WriteFile("/sys/class/infiniband_verbs/abi_version", "6\n"));
  }
  NetdevSpec lo;
  lo.name = "lo";
  lo.mac = "00:00:00:00:00:00";
  lo.mtu = 65536;
  lo.type = 772;
  lo.ifindex = 1;
  lo.operstate = "unknown";
  RETURN_IF_ERROR(AddNetdev(w, lo, ""));
  for (const auto& n : spec.netdevs) {
    auto it = dev_dirs.find(n.pci);
    if (it == dev_dirs.end()) return InvalidArgumentError(n.name + ": no PCI function " + n.pci);
    RETURN_IF_ERROR(AddNetdev(w, n, it->second));
  }
  for (const auto& r : spec.rdma) {
    auto it = dev_dirs.find(r.pci);
    if (it == dev_dirs.end()) return InvalidArgumentError(r.name + ": no PCI function " + r.pci);
    RETURN_IF_ERROR(AddRdmaDevice(w, r, it->second));
  }
  for (const auto& [path, content] : spec.files) RETURN_IF_ERROR(w.WriteFile(path, content, 0644));
  return OkStatus();
}

}  // namespace provisioner::testing
