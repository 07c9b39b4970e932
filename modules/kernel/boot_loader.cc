#include "modules/kernel/boot_loader.h"

#include <algorithm>
#include <cctype>

#include "modules/kernel/kernel_cmdline.h"

namespace provisioner::kernel {
namespace {

bool HasWord(const std::string& words, const std::vector<std::string>& wanted) {
  for (const std::string& w : SplitCmdline(words)) {
    if (std::find(wanted.begin(), wanted.end(), w) != wanted.end()) return true;
  }
  return false;
}

bool PlainChars(const std::string& s, const char* extra) {
  if (s.empty()) return false;
  for (char ch : s) {
    if (std::isalnum(static_cast<unsigned char>(ch)) == 0 &&
        std::string(extra).find(ch) == std::string::npos) {
      return false;
    }
  }
  return true;
}

// "found: ..." for the error of a host where no rule answers.
std::string Found(const BootFacts& b) {
  std::vector<std::string> f;
  f.push_back(b.loader_info.empty() ? "no LoaderInfo EFI variable" : "LoaderInfo " + b.loader_info);
  f.push_back(b.systemd_boot_esp.empty() ? "no systemd-boot on /efi, /boot/efi or /boot"
                                         : "systemd-boot on " + b.systemd_boot_esp);
  f.push_back(b.grub_cfg.empty() ? "no /boot/grub/grub.cfg or /boot/grub2/grub.cfg" : b.grub_cfg);
  f.push_back(std::string("/etc/default/grub: ") + (b.default_grub ? "present" : "absent") +
              (b.grub_blscfg ? " (GRUB_ENABLE_BLSCFG=true)" : ""));
  f.push_back("grubby in /usr/sbin, /sbin or /usr/bin: " +
              (b.grubby.empty() ? std::string("absent") : b.grubby));
  f.push_back(std::to_string(b.bls_options.size()) + " /boot/loader/entries/*.conf");
  f.push_back(std::string(kKernelCmdlinePath) + (b.kernel_cmdline ? " present" : " absent"));
  if (!b.install_layout.empty()) f.push_back("kernel-install layout=" + b.install_layout);
  f.push_back(b.kernel_install ? "kernel-install present" : "no kernel-install");
  f.push_back(b.os_release ? "os-release ID=" + b.os_id + " ID_LIKE=" + b.os_id_like
                           : "no /etc/os-release");
  std::string out;
  for (const std::string& s : f) out += (out.empty() ? "" : "; ") + s;
  return out;
}

}  // namespace

BootLoaderChoice ChooseBootLoader(const BootFacts& b) {
  const std::string ids = b.os_id + " " + b.os_id_like;
  const bool grub = !b.grub_cfg.empty();
  if (b.loader_info.find("systemd-boot") != std::string::npos) {
    return {kMethodKernelInstall,
            "the LoaderInfo EFI variable says " + b.loader_info + " booted this kernel"};
  }
  if (!b.systemd_boot_esp.empty()) {
    if (!grub) {
      return {kMethodKernelInstall,
              "systemd-boot is on the ESP " + b.systemd_boot_esp + " and GRUB has no grub.cfg"};
    }
    return {"", "cannot tell which boot loader boots this host: systemd-boot is on " +
                    b.systemd_boot_esp + " and GRUB has " + b.grub_cfg +
                    ", and no LoaderInfo EFI variable says which booted it (found: " + Found(b) +
                    ")"};
  }
  if (b.install_layout == "uki" && !grub) {
    return {kMethodKernelInstall, "kernel-install builds unified kernel images (layout=uki)"};
  }
  if (!b.grubby.empty() && !b.bls_options.empty() && b.grub_blscfg) {
    return {kMethodGrubby,
            "GRUB reads the BLS entries (GRUB_ENABLE_BLSCFG=true) that " + b.grubby + " edits"};
  }
  if (b.default_grub && HasWord(ids, {"debian", "ubuntu"})) {
    return {kMethodGrubDropIn, "GRUB on a Debian-like host (/etc/default/grub)"};
  }
  if (!b.grubby.empty() && HasWord(ids, {"rhel", "fedora", "centos"})) {
    return {kMethodGrubby, "a RHEL-like host with " + b.grubby};
  }
  if ((b.kernel_cmdline || b.install_layout == "bls") && b.kernel_install && !grub) {
    return {kMethodKernelInstall,
            std::string(b.kernel_cmdline ? kKernelCmdlinePath : "kernel-install layout=bls") +
                " and no GRUB configuration"};
  }
  return {"",
          "no way to set the kernel command line on this host: no boot loader it can tell "
          "(found: " +
              Found(b) + ")"};
}

std::string DecodeLoaderInfo(std::string_view v) {
  if (v.size() < 6) return "";
  std::string out;
  for (size_t i = 4; i + 1 < v.size(); i += 2) {
    const unsigned char lo = static_cast<unsigned char>(v[i]);
    const unsigned char hi = static_cast<unsigned char>(v[i + 1]);
    if (lo == 0 && hi == 0) break;
    out += (hi == 0 && lo >= 0x20 && lo < 0x7f) ? static_cast<char>(lo) : '?';
  }
  return out;
}

std::vector<std::string> KernelInstallBase(const BootFacts& b) {
  if (b.kernel_cmdline) return SplitCmdline(*b.kernel_cmdline);
  if (b.usr_kernel_cmdline) return SplitCmdline(*b.usr_kernel_cmdline);
  std::vector<std::string> out;
  if (!b.cmdline) return out;
  for (const std::string& t : SplitCmdline(*b.cmdline)) {
    if (t.rfind("BOOT_IMAGE=", 0) == 0 || t.rfind("initrd=", 0) == 0) continue;
    out.push_back(t);
  }
  return out;
}

bool KernelVersionOk(const std::string& version) {
  return PlainChars(version, "._+-~") && version[0] != '-' && version != "." && version != "..";
}

bool KernelImageOk(const std::string& version, const std::string& image) {
  return KernelVersionOk(version) &&
         (image == "/usr/lib/modules/" + version + "/vmlinuz" ||
          image == "/lib/modules/" + version + "/vmlinuz" || image == "/boot/vmlinuz-" + version);
}

}  // namespace provisioner::kernel
