// The PCI functions of the live root: libpci scans /sys/bus/pci itself.
#include <memory>
#include <string>
#include <utility>

#include "modules/pci/pci_ident_source.h"
#include "modules/pci/pci_module.h"

namespace provisioner {
namespace {

class LibpciIdents final : public PciIdentSource {
 public:
  explicit LibpciIdents(const HostFs& fs) : fs_(fs) {}

  StatusOr<PciScan> Scan(bool with_names) override {
    PciScanOptions options;
    options.sysfs_path = fs_.FsPath("/sys/bus/pci");
    if (with_names) options.ids_path = std::string(kPciIdsPath);
    ASSIGN_OR_RETURN(std::vector<PciIdent> idents, ScanPci(options));
    PciScan scan;
    scan.idents = std::move(idents);
    return scan;
  }

  std::string Source() const override { return "libpci"; }

 private:
  const HostFs& fs_;
};

}  // namespace

std::unique_ptr<PciIdentSource> NewLibpciIdentSource(const HostFs& fs) {
  return std::make_unique<LibpciIdents>(fs);
}

}  // namespace provisioner
