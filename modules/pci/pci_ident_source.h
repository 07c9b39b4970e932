// Where the pci module's PCI functions (address, IDs, class, names) come
// from, chosen once per root by NewPciIdentSource (pci_source_factory.cc):
//   live root: libpci scans /sys/bus/pci and names from the system's pci.ids
//              (pci_libpci_source.cc);
//   a tree:    the IDs through the host layer, confined to the root, and only
//              the names by libpci (pci_tree_source.cc).
// The rest of each function (driver, links, netdevs) the module reads
// through the host layer on either root.
#ifndef PROVISIONER_MODULES_PCI_PCI_IDENT_SOURCE_H_
#define PROVISIONER_MODULES_PCI_PCI_IDENT_SOURCE_H_

#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "modules/pci/pci_scan.h"

namespace provisioner {

struct PciScan {
  // False when the root holds no /sys/bus/pci/devices (a capture without
  // PCI): no functions, and the module discovers nothing of PCI.
  bool has_pci = true;
  std::vector<PciIdent> idents;
  // Functions skipped (a partial capture) and names that could not be had.
  std::vector<std::string> warnings;
};

class PciIdentSource {
 public:
  virtual ~PciIdentSource() = default;
  // Every function; with pci.ids names when `with_names`.
  virtual StatusOr<PciScan> Scan(bool with_names) = 0;
  // "libpci" or "host layer" (the factory test).
  virtual std::string Source() const = 0;
};

std::unique_ptr<PciIdentSource> NewLibpciIdentSource(const HostFs& fs);
std::unique_ptr<PciIdentSource> NewTreePciIdentSource(const HostFs& fs);
std::unique_ptr<PciIdentSource> NewPciIdentSource(const HostFs& fs);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_PCI_PCI_IDENT_SOURCE_H_
