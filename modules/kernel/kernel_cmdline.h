// spec.kernel.cmdline (module `kernel`), pure: which arguments the running
// kernel has (/proc/cmdline), how the next boot gets them, and the one change
// that sets them.
//
// A change `kernel/boot/cmdline` carries the managed arguments as a list:
// "key=value" or "key" to have, "-key=value" / "-key" to remove (a bare key
// removes every value of it). `after` is what host.yaml asks; `before` what
// the boot configuration held (Debian: the drop-in's list, null without the
// drop-in; RHEL: the managed arguments of the boot entries), so that the
// engine's inverse (before and after swapped) restores it.
//   Debian/Ubuntu (/etc/os-release ID or ID_LIKE debian/ubuntu, and
//     /etc/default/grub): /etc/default/grub.d/99-provisioner.cfg, sourced
//     by grub-mkconfig after /etc/default/grub and the other drop-ins, then
//     `update-grub`.
//   RHEL-like (ID or ID_LIKE rhel/fedora/centos, and grubby):
//     `grubby --update-kernel=ALL --args="..." --remove-args="..."`.
//   systemd-boot / kernel-install (UKI): /etc/kernel/cmdline edited in
//     place, then `kernel-install add <version> <image>` of every installed
//     kernel, which rewrites its entry (or image) from that file.
// Which one: the boot loader that boots the host (boot_loader.h).
// Converged when /proc/cmdline has every argument and none removed: no
// change. When the boot configuration already has them but /proc/cmdline
// does not, the reboot is pending: a warning, no change (as firmware's Next
// Boot). Disruption: reboot.
#ifndef PROVISIONER_MODULES_KERNEL_KERNEL_CMDLINE_H_
#define PROVISIONER_MODULES_KERNEL_KERNEL_CMDLINE_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/base/status.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"
#include "engine/plan/change.h"
#include "modules/kernel/boot_loader.h"

namespace provisioner::kernel {

inline constexpr char kModuleName[] = "kernel";
inline constexpr char kDropInPath[] = "/etc/default/grub.d/99-provisioner.cfg";

// Whitespace-separated arguments of a command line.
std::vector<std::string> SplitCmdline(std::string_view cmdline);

// True when `args` (the encoded list) holds on `cmdline`: every argument to
// have is there as written, no argument to remove is.
bool CmdlineSatisfies(const std::vector<std::string>& tokens, const std::vector<std::string>& args);

// The drop-in for `args` (the encoded list); ParseDropIn reads back the list
// a drop-in of ours was written for (nullopt: not ours, or malformed).
std::string RenderDropIn(const std::vector<std::string>& args);
std::optional<std::vector<std::string>> ParseDropIn(std::string_view content);

// grubby's argv that turns `before` into `after` (encoded lists).
std::vector<std::string> GrubbyArgv(const std::string& grubby,
                                    const std::vector<std::string>& before,
                                    const std::vector<std::string>& after);

// `tokens` (a command line) edited from `before` to `after` (encoded
// lists) as grubby edits an entry: the arguments `after` adds replace every
// value of their key, its removals and what `before` had and `after` drops
// go; the adds are appended.
std::vector<std::string> EditCmdline(const std::vector<std::string>& tokens,
                                     const std::vector<std::string>& before,
                                     const std::vector<std::string>& after);

// Whether a change is one this module makes (shape of target, values, detail).
Status CheckCmdlineChange(const Change& change);

void PlanKernelCmdline(const DesiredState& desired, const HostFacts& facts, PlanSink& sink);

// Doctor, with host.yaml asking spec.kernel: `kernel.cmdline` ok when
// /proc/cmdline has it all; warn when the boot configuration has it and a
// reboot is pending (or /proc/cmdline is not captured); fail otherwise.
void CheckKernelCmdline(const DesiredState* desired, const HostFacts& facts, CheckSink& sink);

}  // namespace provisioner::kernel

#endif  // PROVISIONER_MODULES_KERNEL_KERNEL_CMDLINE_H_
