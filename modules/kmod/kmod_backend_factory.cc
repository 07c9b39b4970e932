// The kmod module's one choice of backend per root.
#include "modules/kmod/kmod_backend.h"

namespace provisioner {

std::unique_ptr<KmodBackend> NewKmodBackend(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewLibkmodBackend(fs);
  return NewTreeKmodBackend(fs);
}

}  // namespace provisioner
