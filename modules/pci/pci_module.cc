#include "modules/pci/pci_module.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/temp_dir.h"
#include "engine/host/parallel_reads.h"
#include "engine/model/selector.h"
#include "engine/module/registry.h"
#include "modules/pci/pci_scan.h"
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

// Entries of a directory that may be missing (net/, infiniband/): none then.
std::vector<std::string> ListIfDir(const HostFs& fs, const std::string& path) {
  if (!fs.IsDir(path)) return {};
  auto list = fs.ListDir(path);
  if (!list.ok()) {
    spdlog::warn("{}", list.status().message());
    return {};
  }
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

// The files of a function that libpci's sysfs scan (pciutils lib/sysfs.c,
// sysfs_scan) opens as mandatory: one missing aborts the whole scan.
constexpr const char* kLibpciMandatory[] = {"vendor", "device", "class", "irq", "resource"};

// A directory that libpci scans instead of <root>/sys/bus/pci: devices/
// holds links to the complete functions only. Removed on destruction.
class ScanView {
 public:
  // Creates the view; "" on success, else why not.
  std::string Create(const HostFs& fs, const std::vector<std::string>& complete) {
    if (std::string err = dir_.Create("provisioner-pci"); !err.empty()) return err;
    std::error_code ec;
    std::filesystem::create_directory(dir() + "/devices", ec);
    for (const std::string& bdf : complete) {
      if (ec) break;
      std::filesystem::create_symlink(fs.FsPath(JoinPath(kPciDevicesDir, bdf)),
                                      dir() + "/devices/" + bdf, ec);
    }
    return ec ? dir() + ": " + ec.message() : "";
  }
  const std::string& dir() const { return dir_.path(); }

 private:
  ScopedTempDir dir_;
};

// Under a tree root, after libpci refused the tree: the functions that lack
// a file libpci needs (a partial capture, as hwloc's POWER9 one with only
// `class` and `local_cpus`), each with a warning; the others in `complete`.
void SplitIncomplete(const HostFs& fs, std::vector<std::string>* complete,
                     std::vector<std::string>* warnings) {
  for (const std::string& bdf : ListDirIfPresent(fs, std::string(kPciDevicesDir))) {
    const std::string dev = JoinPath(kPciDevicesDir, bdf);
    const char* missing = nullptr;
    for (const char* f : kLibpciMandatory) {
      // Missing where the host layer says absence is real (the live root):
      // not a partial capture, the scan's error stays one.
      if (!fs.Exists(JoinPath(dev, f)) && !fs.Captured(JoinPath(dev, f))) {
        missing = f;
        break;
      }
    }
    if (missing == nullptr) {
      complete->push_back(bdf);
    } else {
      warnings->push_back("PCI function " + bdf + " skipped: " + JoinPath(dev, missing) +
                          " is missing (a partial capture); libpci cannot scan it");
    }
  }
}

}  // namespace

Status PciModule::Discover(HostContext& ctx, HostFacts& facts) {
  const HostFs& fs = *ctx.fs;

  PciScanOptions options;
  options.sysfs_path = fs.FsPath("/sys/bus/pci");
  std::string ids(kPciIdsPath);
  if (ctx.plan_for != nullptr) {
    // Names are for people (discover, doctor); no Plan reads them, and
    // libpci parses all of pci.ids (1.3 MB) for the first one.
  } else if (fs.Exists(ids)) {
    // The tree's copy; resolved so that an absolute link stays in the tree.
    auto in_tree = fs.Resolve(ids);
    options.ids_path = in_tree.ok() ? fs.FsPath(*in_tree) : fs.FsPath(ids);
  } else {
    options.ids_path = ids;  // the system's (missing: no names)
  }
  if (!fs.Captured(kPciDevicesDir)) {
    // A capture without PCI (an RDMA- or procfs-only one): the other
    // modules still discover what the tree holds.
    facts.warnings.push_back(std::string(kPciDevicesDir) +
                             " is not in the tree: no PCI functions discovered");
    facts.kernel.release = KernelRelease(fs);
    return OkStatus();
  }
  auto idents = ScanPci(options);
  ScanView view;
  if (!idents.ok()) {
    // A partial capture: scan the complete functions, warn about the rest.
    // (On the live root the kernel shows every file: nothing is skipped, an
    // error stays one.)
    std::vector<std::string> complete, skipped;
    SplitIncomplete(fs, &complete, &skipped);
    if (!skipped.empty()) {
      if (std::string err = view.Create(fs, complete); !err.empty()) {
        return idents.status().WithContext("a view of the complete PCI functions: " + err);
      }
      options.sysfs_path = view.dir();
      idents = ScanPci(options);
      if (!idents.ok()) return idents.status();
      facts.warnings.insert(facts.warnings.end(), skipped.begin(), skipped.end());
    }
  }
  if (!idents.ok()) return idents.status();
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
      ReadEach<PciFunction>(fs, idents->size(), kFunctionsPerThread,
                            [&](size_t i) -> StatusOr<PciFunction> {
                              auto f = ReadFunction(fs, (*idents)[i]);
                              if (!f.ok()) {
                                return f.status().WithContext("read PCI function " +
                                                              (*idents)[i].address);
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

void PciModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  // One rule for every nic, reported here once (not by each module that
  // would have used the PFs).
  for (auto& [path, message] : CheckUnmatchedSelectors(desired, facts)) sink.Error(path, message);
  for (auto& [path, message] : CheckNicOverlaps(desired, facts)) sink.Error(path, message);
}

Status PciModule::Apply(const Change& change, HostContext& ctx) {
  return UnimplementedError("module pci makes no changes (" + change.id + ")");
}

Status PciModule::Verify(const Change& change, HostContext& ctx) {
  return UnimplementedError("module pci makes no changes (" + change.id + ")");
}

PROVISIONER_REGISTER_MODULE("pci", PciModule)

}  // namespace provisioner
