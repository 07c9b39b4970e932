// The vf module's one choice of settings backend per root (vf_backend.h).
#include "modules/vf/vf_backend.h"

namespace provisioner {

std::unique_ptr<VfSettingsBackend> NewVfSettingsBackend(
    HostFs& fs, const std::function<VfNetlink*()>& netlink) {
  if (fs.IsLiveRoot()) return NewNetlinkVfSettings(netlink(), fs);
  return NewTreeVfSettings(fs);
}

}  // namespace provisioner
