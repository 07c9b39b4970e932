// The link module's one choice of backend per root (link_backend.h).
#include "modules/link/link_backend.h"

namespace provisioner {

std::unique_ptr<LinkBackend> NewLinkBackend(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewNetlinkLinkBackend(&fs);
  return NewSysfsLinkBackend(fs);
}

}  // namespace provisioner
