// The ipoib module's one choice of address backend per root (ipoib_backend.h).
#include "modules/ipoib/ipoib_backend.h"

namespace provisioner {

std::unique_ptr<IpoibAddressBackend> NewIpoibAddressBackend(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewNetlinkIpoibAddressBackend(&fs);
  return NewTreeIpoibAddressBackend(fs);
}

}  // namespace provisioner
