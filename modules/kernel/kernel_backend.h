// What the kernel module asks the host beyond files: running the boot
// loader's tool (update-grub, grubby) with an argv, never a shell. The live
// root runs it; under a tree root it is not run (it would change the boot
// loader of the machine provisioner runs on) and is reported instead, as the
// files it follows are written into the tree.
#ifndef PROVISIONER_MODULES_KERNEL_KERNEL_BACKEND_H_
#define PROVISIONER_MODULES_KERNEL_KERNEL_BACKEND_H_

#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"

namespace provisioner::kernel {

class BootCommandRunner {
 public:
  virtual ~BootCommandRunner() = default;
  // Runs argv; an exit other than 0 is an error with its stderr.
  virtual Status Run(const std::vector<std::string>& argv) = 0;
};

std::unique_ptr<BootCommandRunner> NewLiveBootCommandRunner();
// Reports each argv (a warning on stderr) and runs nothing.
std::unique_ptr<BootCommandRunner> NewTreeBootCommandRunner(const std::string& root);
// The one choice per root (kernel_backend_factory.cc).
std::unique_ptr<BootCommandRunner> NewBootCommandRunner(const HostFs& fs);

}  // namespace provisioner::kernel

#endif  // PROVISIONER_MODULES_KERNEL_KERNEL_BACKEND_H_
