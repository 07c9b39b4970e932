// Boot configuration facts (module `kernel`): the running kernel command
// line and what decides the next one, so that spec.kernel.cmdline can be
// planned: the distribution (/etc/os-release), GRUB's defaults
// (/etc/default/grub and provisioner's drop-in in /etc/default/grub.d), the
// grubby tool and the BootLoaderSpec entries it edits (/boot/loader/entries).
#ifndef PROVISIONER_ENGINE_MODEL_BOOT_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_BOOT_FACTS_H_

#include <optional>
#include <string>
#include <vector>

namespace provisioner {

struct BootFacts {
  bool discovered = false;  // the kernel module ran
  // /proc/cmdline as read (newline removed); nullopt when absent (not captured).
  std::optional<std::string> cmdline;
  // /etc/os-release ID and ID_LIKE ("ubuntu", "debian"; "rhel", "rhel centos
  // fedora"), unquoted; "" when absent.
  std::string os_id;
  std::string os_id_like;
  bool os_release = false;    // /etc/os-release exists
  bool default_grub = false;  // /etc/default/grub exists
  // The grubby binary found at this host path ("" when none of /usr/sbin,
  // /sbin, /usr/bin has it).
  std::string grubby;
  // /etc/default/grub.d/99-provisioner.cfg as read; nullopt when absent.
  std::optional<std::string> dropin;
  // The `options` line of every /boot/loader/entries/*.conf (BootLoaderSpec
  // entries, what grubby edits on RHEL 8 and later), by file name order;
  // empty when the directory is absent or holds none.
  std::vector<std::string> bls_options;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_BOOT_FACTS_H_
