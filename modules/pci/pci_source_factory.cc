// The pci module's one choice of function source per root (pci_ident_source.h).
#include "modules/pci/pci_ident_source.h"

namespace provisioner {

std::unique_ptr<PciIdentSource> NewPciIdentSource(const HostFs& fs) {
  if (fs.IsLiveRoot()) return NewLibpciIdentSource(fs);
  return NewTreePciIdentSource(fs);
}

}  // namespace provisioner
