// The PCI functions of a captured tree: their IDs read through the host
// layer (confined to the root, regular files only, bounded), the names by
// libpci from a copy of the tree's pci.ids (or the system's).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/base/strings.h"
#include "engine/base/temp_dir.h"
#include "engine/host/parallel_reads.h"
#include "engine/model/pci_address.h"
#include "modules/pci/pci_ident_source.h"
#include "modules/pci/pci_module.h"
#include "modules/pci/pci_scan.h"

namespace provisioner {
namespace {

// A function is 3 reads: fewer than this per thread do not pay for starting one.
constexpr size_t kFunctionsPerThread = 32;

// Parses a sysfs ID attribute as libpci's sysfs_get_value does (strtol base
// 0: "0x15b3", "0x020000"), but strictly: the whole value is one number.
std::optional<long> ParseId(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 0);
  if (end == s.c_str() || *end != '\0' || v < 0 || v > 0xffffff) return std::nullopt;
  return v;
}

// Under a tree root, the IDs of one function, read through the host layer
// (confined to the root, only regular files, bounded) instead of by libpci,
// which opens `vendor`, `device`, `class`... itself and follows any link,
// out of the tree included, or blocks on a FIFO. These three are the files
// libpci's sysfs method reads as mandatory for PCI_FILL_IDENT|PCI_FILL_CLASS
// (pciutils 3.9 lib/sysfs.c, sysfs_fill_info): a function that lacks one (a
// partial capture) or whose file is refused is skipped with `*warning` set.
std::optional<PciIdent> ReadTreeIdent(const HostFs& fs, const std::string& bdf,
                                      std::string* warning) {
  auto address = PciAddress::ParseSysfsName(bdf);
  if (!address || address->ToString() != bdf) {
    *warning =
        "PCI function " + Quote(bdf) + " skipped: not a PCI address (domain:bus:device.function)";
    return std::nullopt;
  }
  const std::string dev = JoinPath(kPciDevicesDir, bdf);
  long ids[3] = {0, 0, 0};
  const char* names[3] = {"vendor", "device", "class"};
  for (int i = 0; i < 3; ++i) {
    auto text = fs.ReadAttr(JoinPath(dev, names[i]));
    if (!text.ok() && text.status().err() == ENOENT) {
      *warning = "PCI function " + bdf + " skipped: " + JoinPath(dev, names[i]) +
                 " is missing (a partial capture); libpci cannot scan it";
      return std::nullopt;
    }
    if (!text.ok()) {
      *warning = "PCI function " + bdf + " skipped: " + std::string(text.status().message());
      return std::nullopt;
    }
    auto v = ParseId(*text);
    if (!v || (i < 2 && *v > 0xffff)) {
      *warning = "PCI function " + bdf + " skipped: " + JoinPath(dev, names[i]) + ": " +
                 Quote(*text) + " is not a PCI ID";
      return std::nullopt;
    }
    ids[i] = *v;
  }
  PciIdent id;
  id.address = bdf;
  id.vendor = static_cast<uint16_t>(ids[0]);
  id.device = static_cast<uint16_t>(ids[1]);
  id.device_class = static_cast<uint16_t>(ids[2] >> 8);
  return id;
}

// A copy of the tree's pci.ids in a directory of our own, read through the
// host layer: libpci opens the name list by path itself.
class IdsCopy {
 public:
  // The copy's path, or "" (no names) with `*warning` set when the tree's
  // file is refused.
  std::string Create(const HostFs& fs, std::string* warning) {
    auto text = fs.ReadFile(kPciIdsPath);
    if (!text.ok()) {
      *warning = "no PCI names: " + std::string(text.status().message());
      return "";
    }
    if (std::string err = dir_.Create("provisioner-pci-ids"); !err.empty()) {
      *warning = "no PCI names: " + err;
      return "";
    }
    const std::string path = dir_.path() + "/pci.ids";
    std::FILE* f = std::fopen(path.c_str(), "wbx");
    if (f == nullptr) {
      *warning = "no PCI names: " + path + ": " + std::strerror(errno);
      return "";
    }
    const bool ok = std::fwrite(text->data(), 1, text->size(), f) == text->size();
    if (std::fclose(f) != 0 || !ok) {
      *warning = "no PCI names: " + path + ": write failed";
      return "";
    }
    return path;
  }

 private:
  ScopedTempDir dir_;
};

class TreePciIdents final : public PciIdentSource {
 public:
  explicit TreePciIdents(const HostFs& fs) : fs_(fs) {}

  StatusOr<PciScan> Scan(bool with_names) override {
    PciScan scan;
    if (!fs_.IsDir(kPciDevicesDir)) {
      // A capture without PCI (an RDMA- or procfs-only one): the other
      // modules still discover what the tree holds.
      scan.has_pci = false;
      scan.warnings.push_back(std::string(kPciDevicesDir) +
                              " is not in the tree: no PCI functions discovered");
      return scan;
    }
    const std::string ids(kPciIdsPath);
    std::string ids_path;
    // Under a tree root, the IDs come through the host layer and libpci gives
    // the names only (ReadTreeIdent). A function the tree holds partly or
    // with a refused file is skipped with a warning; the rest is discovered.
    const std::vector<std::string> entries = ListDirIfPresent(fs_, std::string(kPciDevicesDir));
    std::vector<std::string> skipped(entries.size());
    ASSIGN_OR_RETURN(
        std::vector<std::optional<PciIdent>> read,
        ReadEach<std::optional<PciIdent>>(fs_, entries.size(), kFunctionsPerThread,
                                          [&](size_t i) -> StatusOr<std::optional<PciIdent>> {
                                            return ReadTreeIdent(fs_, entries[i], &skipped[i]);
                                          }));
    std::vector<PciIdent> idents;
    for (size_t i = 0; i < entries.size(); ++i) {
      if (read[i]) {
        idents.push_back(std::move(*read[i]));
      } else if (!skipped[i].empty()) {
        scan.warnings.push_back(std::move(skipped[i]));
      }
    }
    IdsCopy ids_copy;
    if (with_names) {
      std::string warning;
      // The tree's own copy, even a link that leads nowhere in the tree (then
      // no names, with a warning): the system's only when the tree has none.
      if (fs_.Exists(ids) || fs_.IsSymlink(ids)) {
        ids_path = ids_copy.Create(fs_, &warning);
        if (!warning.empty()) scan.warnings.push_back(warning);
      } else {
        ids_path = ids;  // the system's (missing: no names)
      }
      RETURN_IF_ERROR(LookupPciNames(ids_path, &idents));
    }
    scan.idents = std::move(idents);
    return scan;
  }

  std::string Source() const override { return "host layer"; }

 private:
  const HostFs& fs_;
};

}  // namespace

std::unique_ptr<PciIdentSource> NewTreePciIdentSource(const HostFs& fs) {
  return std::make_unique<TreePciIdents>(fs);
}

}  // namespace provisioner
