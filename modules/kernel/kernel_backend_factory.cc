// The kernel module's one choice of command runner per root (kernel_backend.h).
#include "modules/kernel/kernel_backend.h"

namespace provisioner::kernel {

std::unique_ptr<BootCommandRunner> NewBootCommandRunner(const HostFs& fs) {
  if (fs.IsLiveRoot()) return NewLiveBootCommandRunner();
  return NewTreeBootCommandRunner(fs.root());
}

}  // namespace provisioner::kernel
