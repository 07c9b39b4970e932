#include "modules/pci/pci_module.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/strings.h"
#include "engine/host/parallel_reads.h"
#include "engine/model/pci_address.h"
#include "engine/model/selector.h"
#include "engine/module/registry.h"
#include "modules/pci/pci_ident_source.h"
#include "spdlog/spdlog.h"

namespace provisioner {
namespace {

// A function is ~10 lookups and reads: fewer than this per thread do not pay
// for starting one.
constexpr size_t kFunctionsPerThread = 32;

std::string Hex4(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04x", v);
  return buf;
}

// Parses an integer attribute ("1", "-1", "0x020000"); nullopt when it is not one.
std::optional<long> ParseLong(const std::string& s, int base) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, base);
  if (end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// A VF representor's phys_port_name: "pf<N>vf<M>" (digits).
bool IsRepresentorPortName(const std::string& name) {
  if (name.rfind("pf", 0) != 0) return false;
  const size_t vf = name.find("vf", 2);
  auto digits = [](const std::string& s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
  };
  return vf != std::string::npos && digits(name.substr(2, vf - 2)) && digits(name.substr(vf + 2));
}

// Entries of a directory that may be missing (net/, infiniband/): none then.
std::vector<std::string> ListIfDir(const HostFs& fs, const std::string& path) {
  if (!fs.IsDir(path)) return {};
  auto list = fs.ListDir(path);
  if (!list.ok()) {
    spdlog::warn("{}", list.status().message());
    return {};
  }
  // Netdev and RDMA device names, listed to the user: mlx5_10 after mlx5_9.
  std::sort(list->begin(), list->end(),
            [](const std::string& a, const std::string& b) { return NaturalLess(a, b); });
  return *list;
}

// Basename of a link that may be missing (driver, physfn, iommu_group).
std::string LinkIfPresent(const HostFs& fs, const std::string& path) {
  if (!fs.IsSymlink(path)) return "";
  auto base = fs.LinkBasename(path);
  if (!base.ok()) {
    spdlog::warn("{}", base.status().message());
    return "";
  }
  return *base;
}

// virtfnN links of a PF: VF address -> N.
std::map<std::string, int> VfIndexes(const HostFs& fs, const std::string& pf_dir) {
  std::map<std::string, int> out;
  auto entries = fs.ListDir(pf_dir);
  if (!entries.ok()) return out;
  for (const std::string& e : *entries) {
    if (e.rfind("virtfn", 0) != 0) continue;
    auto n = ParseLong(e.substr(6), 10);
    if (!n) continue;
    std::string vf = LinkIfPresent(fs, JoinPath(pf_dir, e));
    if (!vf.empty()) out[vf] = static_cast<int>(*n);
  }
  return out;
}

StatusOr<PciFunction> ReadFunction(const HostFs& fs, const PciIdent& id) {
  PciFunction f;
  f.pci_address = id.address;
  f.vendor = Hex4(id.vendor);
  f.device_id = Hex4(id.device);
  f.vendor_name = id.vendor_name;
  f.device_name = id.device_name;
  const std::string dev = JoinPath(kPciDevicesDir, id.address);

  // libpci gives class and subclass; the prog-if comes from the same file.
  f.class_code = static_cast<uint32_t>(id.device_class) << 8;
  if (auto cls = fs.ReadAttr(dev + "/class"); cls.ok()) {
    if (auto v = ParseLong(*cls, 16); v && ((*v >> 8) & 0xffff) == id.device_class) {
      f.class_code = static_cast<uint32_t>(*v) & 0xffffff;
    }
  }

  auto resolved = fs.Resolve(dev);
  if (!resolved.ok()) return resolved.status();
  f.sysfs_path = *resolved;

  f.driver = LinkIfPresent(fs, dev + "/driver");
  if (auto numa = fs.ReadAttr(dev + "/numa_node"); numa.ok()) {
    if (auto v = ParseLong(*numa, 10)) f.numa_node = static_cast<int>(*v);
  }
  f.netdevs = ListIfDir(fs, dev + "/net");
  if (f.netdevs.size() > 1) {
    // A PF in switchdev also parents its VFs' representor netdevs
    // (phys_port_name pf<N>vf<M>, mlx5 en_rep.c / ice_repr.c): not the
    // function's own netdevs (the eswitch module lists them). Read only
    // where there is more than one netdev: one per function otherwise.
    f.netdevs.erase(
        std::remove_if(f.netdevs.begin(), f.netdevs.end(),
                       [&](const std::string& n) {
                         return IsRepresentorPortName(
                             fs.ReadAttr(dev + "/net/" + n + "/phys_port_name").value_or(""));
                       }),
        f.netdevs.end());
  }
  f.rdma_devices = ListIfDir(fs, dev + "/infiniband");
  f.physfn = LinkIfPresent(fs, dev + "/physfn");
  f.iommu_group = LinkIfPresent(fs, dev + "/iommu_group");
  return f;
}

// The running kernel's release: /proc/sys/kernel/osrelease, else the third
// word of /proc/version ("Linux version 3.10.0-1160.15.2.el7.x86_64
// (mockbuild@...) ..."), which captures without /proc/sys (hwloc's) keep.
// "" when neither says.
std::string KernelRelease(const HostFs& fs) {
  if (auto release = fs.ReadAttr("/proc/sys/kernel/osrelease"); release.ok() && !release->empty()) {
    return *release;
  }
  auto version = fs.ReadAttr("/proc/version");
  if (!version.ok()) return "";
  std::istringstream words(*version);
  std::string linux_word, version_word, release;
  if (words >> linux_word >> version_word >> release && linux_word == "Linux" &&
      version_word == "version") {
    return release;
  }
  return "";
}

// The facts of each function libpci or the tree gave: links, attributes,
// VF indexes.
Status DiscoverFunctions(const HostFs& fs, const std::vector<PciIdent>& found, HostFacts& facts) {
  const std::vector<PciIdent>* idents = &found;
  const std::string ids(kPciIdsPath);
  // libpci reads sysfs itself, not through HostFs: tell a recording HostFs
  // (snapshot) what it read, so that a snapshot scans the same. The files of
  // pciutils' lib/sysfs.c for one device; the optional ones only when present.
  // The lookups serve the notes only: skipped unless recording.
  for (size_t i = 0; fs.IsRecording() && i < idents->size(); ++i) {
    const std::string dev = JoinPath(kPciDevicesDir, (*idents)[i].address);
    for (const char* f : {"vendor", "device", "class", "irq", "resource", "config", "revision",
                          "subsystem_vendor", "subsystem_device", "label", "numa_node"}) {
      const std::string p = JoinPath(dev, f);
      if (fs.Exists(p)) fs.NoteExternalRead(p);
    }
  }
  if (fs.Exists(ids)) fs.NoteExternalRead(ids);
  fs.NoteExternalList(kPciDevicesDir);

  // Each function's links and attributes are independent reads: on a host
  // with thousands of VFs, on every core (engine/host/parallel_reads.h).
  ASSIGN_OR_RETURN(
      std::vector<PciFunction> functions,
      ReadEach<PciFunction>(
          fs, idents->size(), kFunctionsPerThread, [&](size_t i) -> StatusOr<PciFunction> {
            auto f = ReadFunction(fs, (*idents)[i]);
            if (!f.ok()) {
              return f.status().WithContext("read PCI function " + (*idents)[i].address);
            }
            return f;
          }));
  std::sort(functions.begin(), functions.end(), [](const PciFunction& a, const PciFunction& b) {
    return a.pci_address < b.pci_address;
  });

  // VF indexes come from the PF's virtfnN links (one listing per PF).
  std::map<std::string, std::map<std::string, int>> vf_indexes;
  for (PciFunction& f : functions) {
    if (!f.IsVf()) continue;
    auto it = vf_indexes.find(f.physfn);
    if (it == vf_indexes.end()) {
      it = vf_indexes.emplace(f.physfn, VfIndexes(fs, JoinPath(kPciDevicesDir, f.physfn))).first;
    }
    auto idx = it->second.find(f.pci_address);
    if (idx != it->second.end()) f.vf_index = idx->second;
  }
  facts.pci = std::move(functions);

  facts.kernel.release = KernelRelease(fs);
  return OkStatus();
}

}  // namespace

Status PciModule::Discover(HostContext& ctx, HostFacts& facts) {
  const HostFs& fs = *ctx.fs;
  // Names are for people (discover, doctor); no Plan reads them, and
  // libpci parses all of pci.ids (1.3 MB) for the first one.
  const bool with_names = ctx.plan_for == nullptr;
  ASSIGN_OR_RETURN(PciScan scan, NewPciIdentSource(fs)->Scan(with_names));
  for (std::string& w : scan.warnings) facts.warnings.push_back(std::move(w));
  if (!scan.has_pci) {
    facts.kernel.release = KernelRelease(fs);
    return OkStatus();
  }
  return DiscoverFunctions(fs, scan.idents, facts);
}

void PciModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  // One rule for every nic, reported here once (not by each module that
  // would have used the PFs).
  for (auto& [path, message] : CheckUnmatchedSelectors(desired, facts)) sink.Error(path, message);
  for (auto& [path, message] : CheckNicOverlaps(desired, facts)) sink.Error(path, message);
}

PROVISIONER_REGISTER_MODULE("pci", PciModule)

}  // namespace provisioner
