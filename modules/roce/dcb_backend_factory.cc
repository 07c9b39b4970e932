// The roce module's one choice of DCB backend per root (roce_backend.h).
#include "modules/roce/roce_backend.h"

namespace provisioner {

std::unique_ptr<DcbBackend> NewDcbBackend(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewNetlinkDcbBackend(&fs);
  return NewTreeDcbBackend(fs);
}

}  // namespace provisioner
