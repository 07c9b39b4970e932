// Boot configuration facts (module `kernel`): the running kernel command
// line and what decides the next one, so that spec.kernel.cmdline can be
// planned: the distribution (/etc/os-release), GRUB's defaults
// (/etc/default/grub and provisioner's drop-in in /etc/default/grub.d), the
// grubby tool and the BootLoaderSpec entries it edits (/boot/loader/entries).
#ifndef PROVISIONER_ENGINE_MODEL_BOOT_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_BOOT_FACTS_H_

#include <optional>
#include <string>
#include <utility>
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
  // `$kernelopts` in an options line (RHEL 8) expanded from grubenv.
  std::vector<std::string> bls_options;
  // kernelopts= of /boot/grub2/grubenv (RHEL 8's BLS entries say
  // `options $kernelopts`); nullopt when absent.
  std::optional<std::string> grubenv_kernelopts;
  // GRUB_ENABLE_BLSCFG=true in /etc/default/grub: GRUB reads the BLS entries.
  bool grub_blscfg = false;
  // The generated GRUB configuration found ("/boot/grub/grub.cfg",
  // "/boot/grub2/grub.cfg"); "" when none.
  std::string grub_cfg;
  // systemd-boot's loader on an ESP: the ESP holding EFI/systemd/ or
  // loader/loader.conf ("/efi", "/boot/efi", "/boot"); "" when none.
  std::string systemd_boot_esp;
  // The LoaderInfo EFI variable (Boot Loader Interface), decoded: the boot
  // loader that booted the running kernel ("systemd-boot 255.4"); "" when
  // absent (GRUB sets none).
  std::string loader_info;
  // /etc/kernel/cmdline as read (kernel-install's command line); nullopt
  // when absent; /usr/lib/kernel/cmdline likewise, its fallback.
  std::optional<std::string> kernel_cmdline;
  std::optional<std::string> usr_kernel_cmdline;
  // layout= of /etc/kernel/install.conf (or /usr/lib/kernel/install.conf):
  // "bls", "uki", "other"; "" when unset.
  std::string install_layout;
  // kernel-install found (/usr/bin, /bin, /usr/sbin).
  bool kernel_install = false;
  // The installed kernels kernel-install adds: version and image host path
  // (/usr/lib/modules/<v>/vmlinuz, else /boot/vmlinuz-<v>), by version.
  std::vector<std::pair<std::string, std::string>> kernels;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_BOOT_FACTS_H_
