// Which boot loader boots this host, from the boot facts (pure), and so where
// spec.kernel.cmdline is written and what regenerates the entries. The order
// (docs/kernel-modules.md), first that answers:
//  1. The LoaderInfo EFI variable names systemd-boot: it booted the running
//     kernel -> kernel-install.
//  2. systemd-boot on an ESP (/efi, /boot/efi or /boot holding EFI/systemd/
//     or loader/loader.conf) and no generated GRUB configuration
//     (/boot/grub/grub.cfg, /boot/grub2/grub.cfg) -> kernel-install. Both
//     present without LoaderInfo: undecidable.
//  3. /etc/kernel/install.conf layout=uki (the command line is built into the
//     image) and no GRUB configuration -> kernel-install.
//  4. GRUB reading BLS entries: grubby, /boot/loader/entries with entries,
//     GRUB_ENABLE_BLSCFG=true -> grubby (Fedora, RHEL 8 and later).
//  5. GRUB on Debian/Ubuntu (os-release, /etc/default/grub) -> the GRUB
//     drop-in and update-grub.
//  6. RHEL-like with grubby (RHEL 7, no BLS) -> grubby.
//  7. /etc/kernel/cmdline or layout=bls, kernel-install, and no GRUB
//     configuration -> kernel-install.
// Anything else is a plan error that says what was found.
#ifndef PROVISIONER_MODULES_KERNEL_BOOT_LOADER_H_
#define PROVISIONER_MODULES_KERNEL_BOOT_LOADER_H_

#include <string>
#include <string_view>
#include <vector>

#include "engine/model/boot_facts.h"

namespace provisioner::kernel {

inline constexpr char kMethodGrubDropIn[] = "grub-dropin";
inline constexpr char kMethodGrubby[] = "grubby";
inline constexpr char kMethodKernelInstall[] = "kernel-install";
inline constexpr char kKernelCmdlinePath[] = "/etc/kernel/cmdline";

struct BootLoaderChoice {
  std::string method;  // one of the kMethod*; "" when undecidable
  std::string why;     // the rule that chose it, or what was found
};

BootLoaderChoice ChooseBootLoader(const BootFacts& boot);

// The LoaderInfo EFI variable's text: efivarfs gives 4 bytes of attributes,
// then UTF-16LE up to a NUL. "" when malformed.
std::string DecodeLoaderInfo(std::string_view efivar);

// What kernel-install puts on a new entry when /etc/kernel/cmdline is absent
// (systemd's 90-loaderentry.install): /usr/lib/kernel/cmdline, else
// /proc/cmdline without BOOT_IMAGE= and initrd=.
std::vector<std::string> KernelInstallBase(const BootFacts& boot);

// A kernel version or image path kernel-install is run with: plain
// characters only, the image one of the two layouts of the version.
bool KernelVersionOk(const std::string& version);
bool KernelImageOk(const std::string& version, const std::string& image);

}  // namespace provisioner::kernel

#endif  // PROVISIONER_MODULES_KERNEL_BOOT_LOADER_H_
