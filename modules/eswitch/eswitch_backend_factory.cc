// The eswitch module's one choice of devlink backend per root
// (eswitch_backend.h): devlink netlink on the live root, the capture files
// of eswitch_tree.cc under a tree.
#include "modules/eswitch/eswitch_backend.h"

namespace provisioner {

std::unique_ptr<DevlinkBackend> NewDevlinkBackend(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewNetlinkDevlinkBackend(&fs);
  return NewTreeDevlinkBackend(fs);
}

}  // namespace provisioner
