// The roce module's one choice of pause frame backend per root
// (pause_backend.h): ethtool netlink on the live root, the capture files
// under a tree.
#include "modules/roce/pause_backend.h"

namespace provisioner {

std::unique_ptr<PauseBackend> NewPauseBackend(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewNetlinkPauseBackend(&fs);
  return NewTreePauseBackend(fs);
}

}  // namespace provisioner
