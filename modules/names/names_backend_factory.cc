// The names module's one choice of backend per root (names_backend.h).
#include "modules/names/names_backend.h"

namespace provisioner {

std::unique_ptr<NamesBackend> NewNamesBackend(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewNetlinkNamesBackend();
  return NewTreeNamesBackend(fs);
}

}  // namespace provisioner
