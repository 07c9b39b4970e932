// What the kernel module reads of the boot configuration (BootFacts): the
// running command line, the distribution, GRUB's files, the BLS entries
// (with RHEL 8's `$kernelopts` from grubenv), systemd-boot's ESP and
// LoaderInfo, kernel-install's files and the installed kernels.
#ifndef PROVISIONER_MODULES_KERNEL_BOOT_DISCOVER_H_
#define PROVISIONER_MODULES_KERNEL_BOOT_DISCOVER_H_

#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/boot_facts.h"
#include "nlohmann/json.hpp"

namespace provisioner::kernel {

// `needed`: a plan asks spec.kernel, so an unreadable file it decides by is
// an error; otherwise a warning in `warnings`.
Status DiscoverBoot(const HostFs& fs, bool needed, BootFacts& boot,
                    std::vector<std::string>& warnings);

// Every boot fact, for the saved-plan facts digest (Module::DigestedFacts).
nlohmann::json BootFactsJson(const BootFacts& boot);

// Where systemd puts the LoaderInfo variable (efivarfs, vendor GUID of the
// Boot Loader Interface).
inline constexpr char kLoaderInfoVar[] =
    "/sys/firmware/efi/efivars/LoaderInfo-4a67b082-0a4c-41cf-b6c7-440b29bb8c4f";

}  // namespace provisioner::kernel

#endif  // PROVISIONER_MODULES_KERNEL_BOOT_DISCOVER_H_
