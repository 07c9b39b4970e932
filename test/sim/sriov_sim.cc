#include "test/sim/sriov_sim.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/strings.h"

namespace provisioner::testing {
namespace {

unsigned long ParseHexAttr(const std::string& s) { return std::strtoul(s.c_str(), nullptr, 16); }

// Deterministic pseudo-random bytes for VF MACs/GUIDs (FNV-1a of a key).
uint64_t Hash(const std::string& key) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// "ec0d:9a03:008a:bcde" <-> "ec:0d:9a:03:00:8a:bc:de" (the OFED sriov/<vf> files).
std::string GuidToBytes(const std::string& guid) {
  std::string hex;
  for (char c : guid) {
    if (c != ':') hex += c;
  }
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out += (out.empty() ? "" : ":") + hex.substr(i, 2);
  return out;
}

// A GUID in either form, as "xxxx:xxxx:xxxx:xxxx"; "" when not 16 hex digits
// or all zero (an unset GUID).
std::string NormalizeGuid(const std::string& text) {
  std::string hex;
  for (char c : text) {
    if (c == ':' || c == '\n' || c == ' ') continue;
    if (!std::isxdigit(static_cast<unsigned char>(c))) return "";
    hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (hex.size() != 16 || hex == std::string(16, '0')) return "";
  return hex.substr(0, 4) + ":" + hex.substr(4, 4) + ":" + hex.substr(8, 4) + ":" + hex.substr(12);
}

// The end of a value as `echo` writes it: spaces and the newline (not tabs).
constexpr std::string_view kEchoEnd = " \n";

// The GUID a VF comes up with before anyone sets one: the PF's with the last
// 16 bits replaced by 0xc000 + VF index.
std::string DefaultVfGuid(const TreeWriter& w, const std::string& pf_dir, int index) {
  std::vector<std::string> pf_ib = w.List(pf_dir + "/infiniband");
  std::string pf_guid =
      pf_ib.empty() ? ""
                    : w.ReadAttr(pf_dir + "/infiniband/" + pf_ib[0] + "/node_guid").value_or("");
  if (pf_guid.size() != 19) pf_guid = "0000:0000:0000:0000";
  char last[8];
  snprintf(last, sizeof last, "%04x", 0xc000u + static_cast<unsigned>(index));
  return pf_guid.substr(0, 15) + last;
}

bool IsInfiniBandPf(const TreeWriter& w, const std::string& pf_dir) {
  std::vector<std::string> pf_ib = w.List(pf_dir + "/infiniband");
  return !pf_ib.empty() &&
         w.ReadAttr(pf_dir + "/infiniband/" + pf_ib[0] + "/ports/1/link_layer").value_or("") ==
             "InfiniBand";
}

// The VF's MAC in the PF's table as the vf module's tree backend keeps it
// (run/provisioner/vf/<PF>/<vf>/mac, modules/vf/vf_backend.h): "" when never
// set (unknown), else "aa:bb:cc:dd:ee:ff" (all zero = none).
std::string TableMac(const TreeWriter& w, const std::string& pf_dir, int index) {
  std::string m = w.ReadAttr("/run/provisioner/vf/" + std::string(Basename(pf_dir)) + "/" +
                             std::to_string(index) + "/mac")
                      .value_or("");
  unsigned b[6];
  char extra = 0;
  if (sscanf(m.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
             &extra) != 6) {
    return "";
  }
  char out[18];
  snprintf(out, sizeof out, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
  return out;
}

// mlx5_eswitch_set_vport_mac sets the VF's node GUID from the admin MAC
// (e4:1d:2d:b3:f4:01 -> e4:1d:2d:ff:fe:b3:f4:01, "net/mlx5: E-Switch, Modify
// node guid on vf set MAC"); a zero MAC leaves it zero, which rdma_cm cannot use.
std::string NodeGuidFromAdminMac(const std::string& mac) {
  unsigned b[6] = {0, 0, 0, 0, 0, 0};
  sscanf(mac.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]);
  if ((b[0] | b[1] | b[2] | b[3] | b[4] | b[5]) == 0) return "0000:0000:0000:0000";
  char out[24];
  snprintf(out, sizeof out, "%02x%02x:%02xff:fe%02x:%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
  return out;
}

bool IsUserspace(const std::string& d) {
  return d == "vfio-pci" || d == "pci-stub" || d == "uio_pci_generic" || d == "igb_uio";
}

// IPv4 per-netdev state (issue 39): a new netdev's
// /proc/sys/net/ipv4/conf/<name>/ is a copy of conf/default (devinet.c
// inetdev_init copies devconf_dflt), in a tree that has conf/default; when
// the netdev goes, so do that directory, its addresses in the railnet
// capture and the routes through it (fib_sync_down_dev, fib_disable_ip).
constexpr char kIpv4Conf[] = "/proc/sys/net/ipv4/conf/";
constexpr char kRailAddressCaptureFile[] = "/run/provisioner/rail-addresses";
constexpr char kRouteCaptureFile[] = "/run/provisioner/routes";

Status AddIpv4Conf(TreeWriter& w, const std::string& netdev) {
  const std::string dflt = std::string(kIpv4Conf) + "default";
  if (!w.Exists(dflt)) return OkStatus();
  const std::string dir = kIpv4Conf + netdev;
  RETURN_IF_ERROR(w.MakeDir(dir));
  for (const std::string& key : w.List(dflt)) {
    RETURN_IF_ERROR(w.WriteFile(dir + "/" + key, w.ReadFile(dflt + "/" + key).value_or(""), 0644));
  }
  return OkStatus();
}

// `file` without the lines `drop` says so of.
Status DropLines(TreeWriter& w, const std::string& file,
                 const std::function<bool(const std::string&)>& drop) {
  auto text = w.ReadFile(file);
  if (!text.ok()) return OkStatus();
  std::string kept;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    if (!drop(line)) kept += line + "\n";
  }
  return kept == *text ? OkStatus() : w.WriteFile(file, kept, 0644);
}

Status RemoveIpv4State(TreeWriter& w, const std::string& netdev) {
  RETURN_IF_ERROR(w.RemoveAll(kIpv4Conf + netdev));
  RETURN_IF_ERROR(DropLines(w, kRailAddressCaptureFile, [&](const std::string& line) {
    return line.compare(0, netdev.size() + 1, netdev + " ") == 0;
  }));
  const std::string dev = " dev " + netdev;
  return DropLines(w, kRouteCaptureFile, [&](const std::string& line) {
    const size_t at = line.find(dev);
    return at != std::string::npos &&
           (at + dev.size() == line.size() || line[at + dev.size()] == ' ');
  });
}

}  // namespace

int ParseNumVfsWrite(std::string_view v) {
  if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
  if (!v.empty() && v.front() == '+') v.remove_prefix(1);
  if (v.empty()) return -EINVAL;
  int base = 10;
  if (v.size() >= 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
    base = 16;
    v.remove_prefix(2);
    if (v.empty()) return -EINVAL;
  } else if (v.size() >= 2 && v[0] == '0') {
    base = 8;
    v.remove_prefix(1);
  }
  uint64_t val = 0;
  for (char c : v) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return -EINVAL;
    if (d >= base) return -EINVAL;
    val = val * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
    if (val > 0xffff) return -ERANGE;
  }
  return static_cast<int>(val);
}

std::string VfNetdevName(const std::string& pf_netdev, int vf_index) {
  std::string base = pf_netdev;
  size_t np = base.rfind("np");
  if (np != std::string::npos && np + 2 < base.size() &&
      base.find_first_not_of("0123456789", np + 2) == std::string::npos) {
    base.erase(np);
  }
  return base + "v" + std::to_string(vf_index);
}

std::string VfDriverFor(const std::string& pf_driver) {
  if (pf_driver == "igb") return "igbvf";
  if (pf_driver == "ixgbe") return "ixgbevf";
  if (pf_driver == "i40e" || pf_driver == "ice") return "iavf";
  return pf_driver;
}

SriovSim::SriovSim(std::string root, SriovSimOptions options)
    : w_(std::move(root)), options_(options) {}

int SriovSim::Fail(int err, std::string why) {
  last_error_ = std::move(why);
  return err;
}

void SriovSim::LoadAllocators() {
  if (allocators_loaded_) return;
  allocators_loaded_ = true;
  next_ifindex_ = NextFreeIfindex(w_);
  for (const auto& g : w_.List("/sys/kernel/iommu_groups"))
    iommu_groups_.insert(std::atoi(g.c_str()));
  for (const auto& u : w_.List("/sys/class/infiniband_verbs")) {
    if (u.rfind("uverbs", 0) == 0) uverbs_.insert(std::atoi(u.c_str() + 6));
  }
  for (const auto& r : w_.List("/sys/class/infiniband")) rdma_names_.insert(r);
}

int SriovSim::AllocIfindex() {
  LoadAllocators();
  return next_ifindex_++;
}

int SriovSim::AllocSmallest(std::set<int>* used) {
  LoadAllocators();
  int i = 0;
  while (used->count(i)) ++i;
  used->insert(i);
  return i;
}

std::string SriovSim::AllocRdmaName(const std::string& prefix) {
  LoadAllocators();
  for (int i = 0;; ++i) {
    std::string name = prefix + std::to_string(i);
    if (rdma_names_.insert(name).second) return name;
  }
}

int SriovSim::CountVfs(const std::string& pf) const {
  auto real = w_.RealPath(pf);
  if (!real.ok()) return 0;
  int n = 0;
  for (const auto& e : w_.List(*real)) {
    if (e.rfind("virtfn", 0) == 0) ++n;
  }
  return n;
}

int SriovSim::WriteNumVfs(const std::string& pf, std::string_view value, int current) {
  last_error_.clear();
  // Before any VF goes: the kernel does not hand a removed netdev's ifindex
  // to the next one (it allocates cyclically), so neither do we.
  LoadAllocators();
  auto real = w_.RealPath(pf);
  if (!real.ok()) return Fail(ENOENT, real.status().message());
  const std::string pf_dir = *real;
  auto total_s = w_.ReadAttr(pf_dir + "/sriov_totalvfs");
  if (!total_s.ok()) return Fail(ENOENT, pf_dir + " has no SR-IOV capability");
  if (current < 0) current = std::atoi(w_.ReadAttr(pf_dir + "/sriov_numvfs").value_or("0").c_str());

  int n = ParseNumVfsWrite(value);
  if (n < 0) return Fail(-n, "not a number: '" + std::string(value) + "'");
  int total = std::atoi(total_s->c_str());
  if (n > total) return Fail(ERANGE, std::to_string(n) + " > sriov_totalvfs " + *total_s);
  // The count as the kernel's writer leaves it, once the VFs came or went
  // (the write returns, then the writer's close: what watchers such as the
  // agent's tree events see last). The writer here does not block in
  // write(2), so it may already be writing its next count (a rollback after
  // Ctrl-C, as soon as it saw the VFs): a file that no longer holds the value
  // acted on (or is empty: a writer between its open(O_TRUNC) and its write)
  // is left alone for that write's own event. A file that already holds the
  // count is not written either, only opened for writing and closed, so that
  // such a write cannot be lost between this check and this write.
  auto write_count = [&](int count) {
    const std::string text = std::to_string(count) + "\n";
    if (options_.keep_newer_write) {
      auto now = w_.ReadFile(pf_dir + "/sriov_numvfs");
      if (now.ok() && *now != value) return 0;  // a newer write, pending
      if (now.ok() && *now == text) {
        const int fd = ::open(w_.Fs(pf_dir + "/sriov_numvfs").c_str(), O_WRONLY | O_CLOEXEC);
        if (fd >= 0) ::close(fd);
        return 0;
      }
    }
    Status s = w_.WriteFile(pf_dir + "/sriov_numvfs", text, 0644);
    return s.ok() ? 0 : Fail(EIO, s.message());
  };
  if (n == current) return write_count(current);
  if (!w_.Exists(pf_dir + "/driver")) return Fail(ENOENT, "no driver bound to the PF");
  if (n == 0) {
    Status s = Disable(pf_dir);
    if (!s.ok()) return Fail(EIO, s.message());
    return write_count(0);
  }
  if (current != 0) {
    return Fail(EBUSY, std::to_string(current) + " VFs already enabled. Disable before enabling " +
                           std::to_string(n));
  }
  if (options_.enable_error != 0) return Fail(options_.enable_error, "driver failed to enable VFs");
  if (options_.max_enable >= 0 && n > options_.max_enable) n = options_.max_enable;
  int err = Enable(pf_dir, n);
  if (err != 0) {
    (void)Disable(pf_dir);  // roll back partially created VFs
    (void)write_count(0);
    return err;
  }
  return write_count(n);
}

int SriovSim::Enable(const std::string& pf_dir, int n) {
  auto attr = [&](const char* name, const char* fallback) {
    return w_.ReadAttr(pf_dir + "/" + name).value_or(fallback);
  };
  std::optional<PciBdf> pf = ParseBdf(std::string(Basename(pf_dir)));
  if (!pf) return Fail(EINVAL, "PF directory is not a PCI address: " + pf_dir);
  int offset = std::atoi(attr("sriov_offset", "1").c_str());
  int stride = std::atoi(attr("sriov_stride", "1").c_str());
  // The bus range below the upstream bridge bounds the VFs' bus numbers.
  std::string parent_dir(Dirname(pf_dir));
  int max_bus = 0xff;
  if (w_.Exists(parent_dir + "/subordinate_bus_number")) {
    max_bus =
        std::atoi(w_.ReadAttr(parent_dir + "/subordinate_bus_number").value_or("255").c_str());
  }
  std::vector<PciBdf> vfs;
  for (int i = 0; i < n; ++i) {
    std::optional<PciBdf> vf = VfBdf(*pf, offset, stride, i);
    if (!vf || vf->bus > max_bus) {
      return Fail(ENOMEM, "no bus number for VF " + std::to_string(i) + " (subordinate bus " +
                              std::to_string(max_bus) + ")");
    }
    vfs.push_back(*vf);
  }
  PciFunctionSpec base;
  base.vendor = static_cast<uint16_t>(ParseHexAttr(attr("vendor", "0")));
  base.device = static_cast<uint16_t>(ParseHexAttr(attr("sriov_vf_device", "0")));
  base.class_code = static_cast<uint32_t>(ParseHexAttr(attr("class", "0")));
  base.subsystem_vendor = static_cast<uint16_t>(ParseHexAttr(attr("subsystem_vendor", "0")));
  base.subsystem_device = static_cast<uint16_t>(ParseHexAttr(attr("subsystem_device", "0")));
  base.revision = static_cast<uint8_t>(ParseHexAttr(attr("revision", "0")));
  base.irq = 0;  // VFs have no INTx
  base.numa_node = std::atoi(attr("numa_node", "-1").c_str());
  base.local_cpulist = attr("local_cpulist", "");
  base.link_speed = "Unknown";
  base.link_width = 0;
  bool autoprobe = attr("sriov_drivers_autoprobe", "1") == "1";
  auto pf_driver = w_.ReadLink(pf_dir + "/driver");
  std::string pf_drv(Basename(pf_driver));
  if (autoprobe) base.driver = VfDriverFor(pf_drv);
  // VF BAR0s are carved from the PF's IOV BAR (resource line 7).
  uint64_t iov_base = 0, iov_size = 0;
  {
    std::stringstream ss(w_.ReadFile(pf_dir + "/resource").value_or(""));
    std::string line;
    for (int i = 0; std::getline(ss, line); ++i) {
      if (i != 7) continue;
      unsigned long long s = 0, e = 0, f = 0;
      if (sscanf(line.c_str(), "%llx %llx %llx", &s, &e, &f) == 3 && e > s) {
        iov_base = s;
        iov_size = e - s + 1;
      }
    }
  }
  int total = std::atoi(attr("sriov_totalvfs", "1").c_str());
  uint64_t vf_bar = total > 0 ? iov_size / static_cast<uint64_t>(total) : 0;
  bool iommu = w_.Exists(pf_dir + "/iommu_group");
  bool ib = IsInfiniBandPf(w_, pf_dir);

  ++batch_;
  for (int i = 0; i < n; ++i) {
    PciFunctionSpec f = base;
    f.bdf = vfs[static_cast<size_t>(i)].ToString();
    if (vf_bar != 0) {
      f.bar0 = iov_base + vf_bar * static_cast<uint64_t>(i);
      f.bar0_size = vf_bar;
    }
    f.iommu_group = iommu ? AllocSmallest(&iommu_groups_) : -1;
    std::string vf_dir = parent_dir + "/" + f.bdf;
    if (w_.Exists(vf_dir) || w_.Exists("/sys/bus/pci/devices/" + f.bdf)) {
      return Fail(EBUSY, "PCI function " + f.bdf + " already exists");
    }
    Status s = AddPciFunction(w_, f, vf_dir);
    if (s.ok()) s = w_.Link(vf_dir + "/physfn", pf_dir);
    if (s.ok()) s = w_.Link(pf_dir + "/virtfn" + std::to_string(i), vf_dir);
    if (s.ok() && ib) {
      // MLNX_OFED's per-VF GUID files (the upstream kernel has netlink only).
      const std::string d = pf_dir + "/sriov/" + std::to_string(i) + "/";
      const std::string guid = GuidToBytes(DefaultVfGuid(w_, pf_dir, i)) + "\n";
      s = w_.WriteFile(d + "node", guid, 0644);
      if (s.ok()) s = w_.WriteFile(d + "port", guid, 0644);
      if (s.ok()) s = w_.WriteFile(d + "policy", "Follow\n", 0644);
    }
    if (!s.ok()) return Fail(EIO, s.message());
    if (!base.driver.empty()) pending_.push_back({batch_, pf_dir, vf_dir, i});
  }
  return 0;
}

Status SriovSim::Disable(const std::string& pf_dir) {
  // Forget queued devices of this PF.
  std::vector<PendingVf> keep;
  for (auto& p : pending_) {
    if (p.pf_dir != pf_dir) keep.push_back(std::move(p));
  }
  pending_ = std::move(keep);
  std::vector<std::string> links;
  for (const auto& e : w_.List(pf_dir)) {
    if (e.rfind("virtfn", 0) == 0) links.push_back(e);
  }
  for (const auto& link : links) {
    auto vf = w_.RealPath(pf_dir + "/" + link);
    if (vf.ok() && w_.Exists(*vf)) {
      const std::string vf_dir = *vf;
      const std::string bdf(Basename(vf_dir));
      RETURN_IF_ERROR(RemoveVfDevices(vf_dir));
      std::string drv = w_.ReadLink(vf_dir + "/driver");
      if (!drv.empty()) {
        RETURN_IF_ERROR(
            w_.RemoveAll("/sys/bus/pci/drivers/" + std::string(Basename(drv)) + "/" + bdf));
      }
      std::string group = w_.ReadLink(vf_dir + "/iommu_group");
      if (!group.empty()) {
        if (Basename(drv) == "vfio-pci") {
          RETURN_IF_ERROR(RemoveVfioNode(std::string(Basename(group))));
        }
        RETURN_IF_ERROR(w_.RemoveAll("/sys/kernel/iommu_groups/" + std::string(Basename(group))));
        iommu_groups_.erase(std::atoi(std::string(Basename(group)).c_str()));
      }
      RETURN_IF_ERROR(w_.RemoveAll("/sys/bus/pci/devices/" + bdf));
      RETURN_IF_ERROR(w_.RemoveAll(vf_dir));
    }
    RETURN_IF_ERROR(w_.RemoveAll(pf_dir + "/" + link));
  }
  // The VFs' settings go with them: OFED-style GUID files, and the trust /
  // spoofchk state the vf module's tree backend keeps
  // (modules/vf/vf_backend.h, kVfStateCapturePrefix).
  RETURN_IF_ERROR(w_.RemoveAll(pf_dir + "/sriov"));
  RETURN_IF_ERROR(w_.RemoveAll("/run/provisioner/vf/" + std::string(Basename(pf_dir))));
  if (w_.List("/run/provisioner/vf").empty()) {
    RETURN_IF_ERROR(w_.RemoveAll("/run/provisioner/vf"));
  }
  if (w_.Exists("/run/provisioner") && w_.List("/run/provisioner").empty()) {
    RETURN_IF_ERROR(w_.RemoveAll("/run/provisioner"));
  }
  return OkStatus();
}

Status SriovSim::RemoveVfDevices(const std::string& vf_dir) {
  for (const auto& nd : w_.List(vf_dir + "/net")) {
    RETURN_IF_ERROR(w_.RemoveAll("/sys/class/net/" + nd));
    RETURN_IF_ERROR(RemoveIpv4State(w_, nd));
  }
  RETURN_IF_ERROR(w_.RemoveAll(vf_dir + "/net"));
  for (const auto& ib : w_.List(vf_dir + "/infiniband")) {
    RETURN_IF_ERROR(w_.RemoveAll("/sys/class/infiniband/" + ib));
    rdma_names_.erase(ib);
  }
  RETURN_IF_ERROR(w_.RemoveAll(vf_dir + "/infiniband"));
  for (const auto& uv : w_.List(vf_dir + "/infiniband_verbs")) {
    RETURN_IF_ERROR(w_.RemoveAll("/sys/class/infiniband_verbs/" + uv));
    uverbs_.erase(std::atoi(uv.c_str() + 6));
  }
  RETURN_IF_ERROR(w_.RemoveAll(vf_dir + "/infiniband_verbs"));
  return OkStatus();
}

Status SriovSim::Flush(uint64_t up_to) {
  std::vector<PendingVf> later;
  std::vector<PendingVf> now;
  for (auto& p : pending_) (p.batch <= up_to ? now : later).push_back(std::move(p));
  pending_ = std::move(later);
  Status first;
  for (const auto& p : now) {
    Status s = CreateVfDevices(p);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status SriovSim::FlushBatch(uint64_t batch) {
  std::vector<PendingVf> later;
  std::vector<PendingVf> now;
  for (auto& p : pending_) (p.batch == batch ? now : later).push_back(std::move(p));
  pending_ = std::move(later);
  Status first;
  for (const auto& p : now) {
    Status s = CreateVfDevices(p);
    if (!s.ok() && first.ok()) first = s;
  }
  return first;
}

Status SriovSim::CreateVfDevices(const PendingVf& p) {
  if (!w_.Exists(p.vf_dir)) return OkStatus();  // destroyed meanwhile
  const std::string bdf(Basename(p.vf_dir));
  uint64_t h = Hash(bdf);
  // Netdev: same kind as the PF's first netdev.
  std::vector<std::string> pf_netdevs = w_.List(p.pf_dir + "/net");
  std::string vf_netdev;
  std::string vf_guid;
  std::string port_guid;
  if (!pf_netdevs.empty()) {
    const std::string pfn = p.pf_dir + "/net/" + pf_netdevs[0];
    NetdevSpec n;
    n.name = VfNetdevName(pf_netdevs[0], p.index);
    n.type = std::atoi(w_.ReadAttr(pfn + "/type").value_or("1").c_str());
    if (n.type == 32) {
      // IPoIB: 4-byte QPN + 16-byte GID (fe80:: + port GUID). The GUIDs are
      // the ones set in the PF's sriov/<vf>/{node,port} (what the VF driver
      // reads at probe), else the default (DefaultVfGuid).
      vf_guid = NormalizeGuid(
          w_.ReadFile(p.pf_dir + "/sriov/" + std::to_string(p.index) + "/node").value_or(""));
      if (vf_guid.empty()) vf_guid = DefaultVfGuid(w_, p.pf_dir, p.index);
      port_guid = NormalizeGuid(
          w_.ReadFile(p.pf_dir + "/sriov/" + std::to_string(p.index) + "/port").value_or(""));
      if (port_guid.empty()) port_guid = DefaultVfGuid(w_, p.pf_dir, p.index);
      unsigned g[8] = {0, 0, 0, 0, 0, 0, 0, 0};
      sscanf(port_guid.c_str(), "%2x%2x:%2x%2x:%2x%2x:%2x%2x", &g[0], &g[1], &g[2], &g[3], &g[4],
             &g[5], &g[6], &g[7]);
      char mac[96];
      snprintf(mac, sizeof mac,
               "00:00:%02x:%02x:fe:80:00:00:00:00:00:00:%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x",
               static_cast<unsigned>(0x10 + p.index / 256) & 0xff,
               static_cast<unsigned>(p.index) & 0xff, g[0], g[1], g[2], g[3], g[4], g[5], g[6],
               g[7]);
      n.mac = mac;
      n.mtu = std::atoi(w_.ReadAttr(pfn + "/mtu").value_or("2044").c_str());
    } else {
      char mac[32];
      snprintf(mac, sizeof mac, "%02x:%02x:%02x:%02x:%02x:%02x",
               (static_cast<unsigned>(h >> 40) & 0xfc) | 0x02,
               static_cast<unsigned>(h >> 32) & 0xff, static_cast<unsigned>(h >> 24) & 0xff,
               static_cast<unsigned>(h >> 16) & 0xff, static_cast<unsigned>(h >> 8) & 0xff,
               static_cast<unsigned>(h) & 0xff);
      // mlx5e on a VF takes the admin MAC from the PF's table when it binds
      // (a random one while the table's is zero).
      const std::string admin = TableMac(w_, p.pf_dir, p.index);
      n.mac = !admin.empty() && admin != "00:00:00:00:00:00" ? admin : std::string(mac);
      n.mtu = 1500;
      n.speed = std::atoi(w_.ReadAttr(pfn + "/speed").value_or("-1").c_str());
    }
    n.operstate = options_.vf_netdevs_down ? std::string("down")
                                           : w_.ReadAttr(pfn + "/operstate").value_or("up");
    n.ifindex = AllocIfindex();
    RETURN_IF_ERROR(AddNetdev(w_, n, p.vf_dir));
    RETURN_IF_ERROR(AddIpv4Conf(w_, n.name));
    vf_netdev = n.name;
  }
  // RDMA device: one per PF RDMA device, named <prefix><next free>.
  std::vector<std::string> pf_rdma = w_.List(p.pf_dir + "/infiniband");
  if (pf_rdma.empty()) return OkStatus();
  const std::string pr = p.pf_dir + "/infiniband/" + pf_rdma[0];
  std::string prefix = pf_rdma[0];
  while (!prefix.empty() && prefix.back() >= '0' && prefix.back() <= '9') prefix.pop_back();
  RdmaDeviceSpec r;
  r.name = AllocRdmaName(prefix);
  r.uverbs = AllocSmallest(&uverbs_);
  r.pci = bdf;
  unsigned vf_device =
      static_cast<unsigned>(ParseHexAttr(w_.ReadAttr(p.vf_dir + "/device").value_or("0")));
  r.hca_type = "MT" + std::to_string(vf_device);
  r.fw_ver = w_.ReadAttr(pr + "/fw_ver").value_or("");
  r.board_id = w_.ReadAttr(pr + "/board_id").value_or("");
  r.sys_image_guid = w_.ReadAttr(pr + "/sys_image_guid").value_or("");
  std::string vf_mac = vf_netdev.empty()
                           ? ""
                           : w_.ReadAttr(p.vf_dir + "/net/" + vf_netdev + "/address").value_or("");
  const std::string admin = TableMac(w_, p.pf_dir, p.index);
  r.node_guid = !vf_guid.empty() ? vf_guid
                : !admin.empty() ? NodeGuidFromAdminMac(admin)
                                 : GuidFromMac(vf_mac);
  for (const auto& port : w_.List(pr + "/ports")) {
    const std::string pp = pr + "/ports/" + port;
    RdmaPortSpec sp;
    sp.port = std::atoi(port.c_str());
    sp.link_layer = w_.ReadAttr(pp + "/link_layer").value_or("Ethernet");
    sp.state = w_.ReadAttr(pp + "/state").value_or("4: ACTIVE");
    sp.phys_state = w_.ReadAttr(pp + "/phys_state").value_or("5: LinkUp");
    sp.rate = w_.ReadAttr(pp + "/rate").value_or("");
    sp.sm_lid = w_.ReadAttr(pp + "/sm_lid").value_or("0x0");
    sp.cap_mask = w_.ReadAttr(pp + "/cap_mask").value_or("0x0");
    sp.gid_table_size = static_cast<int>(w_.List(pp + "/gids").size());
    sp.pkey_table_size = static_cast<int>(w_.List(pp + "/pkeys").size());
    if (sp.link_layer == "InfiniBand") {
      unsigned pf_lid = static_cast<unsigned>(ParseHexAttr(w_.ReadAttr(pp + "/lid").value_or("0")));
      char lid[16];
      snprintf(lid, sizeof lid, "0x%x", pf_lid + 1 + static_cast<unsigned>(p.index));
      sp.lid = lid;
      sp.gids = {{0, IbGidFromGuid(port_guid.empty() ? r.node_guid : port_guid), "IB/RoCE v1", ""}};
    } else {
      std::string ll = LinkLocalGidFromMac(vf_mac);
      sp.gids = {{0, ll, "IB/RoCE v1", vf_netdev}, {1, ll, "RoCE v2", vf_netdev}};
    }
    r.ports.push_back(sp);
  }
  return AddRdmaDevice(w_, r, p.vf_dir);
}

Status SriovSim::RemoveVfioNode(const std::string& group) {
  RETURN_IF_ERROR(w_.RemoveAll("/dev/vfio/" + group));
  // Trees do not model /dev: leave none behind once the last group is gone.
  if (w_.List("/dev/vfio").empty()) RETURN_IF_ERROR(w_.RemoveAll("/dev/vfio"));
  if (w_.Exists("/dev") && w_.List("/dev").empty()) RETURN_IF_ERROR(w_.RemoveAll("/dev"));
  return OkStatus();
}

std::string SriovSim::DeviceDir(std::string_view bdf) const {
  const std::string name = TrimRight(bdf, kEchoEnd);
  if (!ParseBdf(name)) return "";
  auto real = w_.RealPath("/sys/bus/pci/devices/" + name);
  return real.ok() && w_.Exists(*real + "/vendor") ? *real : "";
}

std::string SriovSim::NativeDriver(const std::string& dev_dir) const {
  auto pf = w_.RealPath(dev_dir + "/physfn");
  if (!pf.ok() || !w_.Exists(dev_dir + "/physfn")) return "";
  std::string pf_driver(Basename(w_.ReadLink(*pf + "/driver")));
  return pf_driver.empty() ? "" : VfDriverFor(pf_driver);
}

Status SriovSim::SetUeventDriver(const std::string& dev_dir, const std::string& driver) {
  std::string uevent = w_.ReadFile(dev_dir + "/uevent").value_or("");
  std::string out = driver.empty() ? "" : "DRIVER=" + driver + "\n";
  std::stringstream ss(uevent);
  std::string line;
  while (std::getline(ss, line)) {
    if (line.rfind("DRIVER=", 0) != 0) out += line + "\n";
  }
  return w_.WriteFile(dev_dir + "/uevent", out, 0644);
}

Status SriovSim::RegisterDriver(const std::string& name) {
  const std::string drv = "/sys/bus/pci/drivers/" + name;
  if (w_.Exists(drv)) return OkStatus();
  for (const char* a : {"bind", "unbind", "new_id", "remove_id", "uevent"}) {
    RETURN_IF_ERROR(w_.WriteFile(drv + "/" + a, "", 0200));
  }
  std::string module = name;
  for (char& c : module) c = c == '-' ? '_' : c;
  if (w_.Exists("/sys/module/" + module))
    RETURN_IF_ERROR(w_.Link(drv + "/module", "/sys/module/" + module));
  return OkStatus();
}

Status SriovSim::SyncModuleDrivers() {
  static const std::pair<const char*, const char*> kModuleDrivers[] = {{"vfio_pci", "vfio-pci"}};
  for (const auto& [module, driver] : kModuleDrivers) {
    if (w_.Exists(std::string("/sys/module/") + module) &&
        !w_.Exists(std::string("/sys/bus/pci/drivers/") + driver)) {
      RETURN_IF_ERROR(RegisterDriver(driver));
    }
  }
  return OkStatus();
}

int SriovSim::WriteDriverOverride(const std::string& dev, std::string_view value) {
  last_error_.clear();
  auto real = w_.RealPath(dev);
  if (!real.ok() || !w_.Exists(*real + "/vendor")) return Fail(ENODEV, "no such device: " + dev);
  std::string v = TrimRight(value, kEchoEnd);
  // Like driver_set_override(): a lone newline (or nothing) clears it.
  Status s = w_.WriteFile(*real + "/driver_override", (v.empty() ? "(null)" : v) + "\n", 0644);
  return s.ok() ? 0 : Fail(EIO, s.message());
}

int SriovSim::Unbind(const std::string& driver, std::string_view bdf) {
  last_error_.clear();
  if (!w_.Exists("/sys/bus/pci/drivers/" + driver)) return Fail(ENOENT, "no driver " + driver);
  const std::string dev_dir = DeviceDir(bdf);
  if (dev_dir.empty()) return Fail(ENODEV, "no such device: " + TrimRight(bdf, kEchoEnd));
  const std::string name(Basename(dev_dir));
  if (std::string(Basename(w_.ReadLink(dev_dir + "/driver"))) != driver) {
    return Fail(ENODEV, name + " is not bound to " + driver);
  }
  // The driver's remove(): its netdevs and RDMA devices go (also the queued ones).
  std::vector<PendingVf> keep;
  for (auto& p : pending_) {
    if (p.vf_dir != dev_dir) keep.push_back(std::move(p));
  }
  pending_ = std::move(keep);
  Status s = RemoveVfDevices(dev_dir);
  if (s.ok()) s = w_.RemoveAll("/sys/bus/pci/drivers/" + driver + "/" + name);
  if (s.ok()) s = w_.RemoveAll(dev_dir + "/driver");
  if (s.ok()) s = SetUeventDriver(dev_dir, "");
  if (s.ok() && driver == "vfio-pci") {
    std::string group(Basename(w_.ReadLink(dev_dir + "/iommu_group")));
    if (!group.empty()) s = RemoveVfioNode(group);
  }
  return s.ok() ? 0 : Fail(EIO, s.message());
}

int SriovSim::BindDevice(const std::string& driver, const std::string& dev_dir) {
  const std::string name(Basename(dev_dir));
  if (!w_.ReadLink(dev_dir + "/driver").empty()) return Fail(EBUSY, name + " is already bound");
  std::string override_now = w_.ReadAttr(dev_dir + "/driver_override").value_or("(null)");
  if (override_now != "(null)" && !override_now.empty()) {
    if (override_now != driver) {
      return Fail(ENODEV, name + ": driver_override is " + override_now + ", not " + driver);
    }
  } else if (NativeDriver(dev_dir) != driver) {
    return Fail(ENODEV, driver + " does not match " + name);
  }
  std::string group(Basename(w_.ReadLink(dev_dir + "/iommu_group")));
  if (driver == "vfio-pci" && group.empty()) {
    return Fail(EINVAL, "vfio-pci: " + name + " has no IOMMU group");
  }
  const std::string drv = "/sys/bus/pci/drivers/" + driver;
  Status s = w_.Link(drv + "/" + name, dev_dir);
  if (s.ok()) s = w_.Link(dev_dir + "/driver", drv);
  if (s.ok()) s = SetUeventDriver(dev_dir, driver);
  if (s.ok() && driver == "vfio-pci") s = w_.WriteFile("/dev/vfio/" + group, "", 0600);
  if (!s.ok()) return Fail(EIO, s.message());
  // A network driver's probe creates the VF's netdev and RDMA device later.
  if (!IsUserspace(driver) && w_.Exists(dev_dir + "/physfn")) {
    auto pf = w_.RealPath(dev_dir + "/physfn");
    if (pf.ok()) {
      for (const auto& e : w_.List(*pf)) {
        if (e.rfind("virtfn", 0) != 0) continue;
        auto vf = w_.RealPath(*pf + "/" + e);
        if (vf.ok() && *vf == dev_dir) {
          pending_.push_back({++batch_, *pf, dev_dir, std::atoi(e.c_str() + 6)});
          break;
        }
      }
    }
  }
  return 0;
}

int SriovSim::Bind(const std::string& driver, std::string_view bdf) {
  last_error_.clear();
  if (!w_.Exists("/sys/bus/pci/drivers/" + driver)) return Fail(ENOENT, "no driver " + driver);
  const std::string dev_dir = DeviceDir(bdf);
  if (dev_dir.empty()) return Fail(ENODEV, "no such device: " + TrimRight(bdf, kEchoEnd));
  return BindDevice(driver, dev_dir);
}

int SriovSim::DriversProbe(std::string_view bdf) {
  last_error_.clear();
  const std::string dev_dir = DeviceDir(bdf);
  if (dev_dir.empty()) return Fail(ENODEV, "no such device: " + TrimRight(bdf, kEchoEnd));
  if (!w_.ReadLink(dev_dir + "/driver").empty()) return 0;
  std::string driver = w_.ReadAttr(dev_dir + "/driver_override").value_or("(null)");
  if (driver == "(null)" || driver.empty()) driver = NativeDriver(dev_dir);
  if (driver.empty() || !w_.Exists("/sys/bus/pci/drivers/" + driver)) return 0;
  // A failed probe is not reported by drivers_probe (kernel-facts.md).
  (void)BindDevice(driver, dev_dir);
  last_error_.clear();
  return 0;
}

}  // namespace provisioner::testing
