// The roce module's one choice of rdma_cm configfs backend per root (roce_tos.h).
#include "modules/roce/roce_tos.h"

namespace provisioner {

std::unique_ptr<RdmaCmConfigfs> NewRdmaCmConfigfs(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewLiveRdmaCmConfigfs(fs);
  return NewTreeRdmaCmConfigfs(fs);
}

}  // namespace provisioner
