#include "modules/kernel/boot_discover.h"

#include <algorithm>
#include <cerrno>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/strings.h"
#include "modules/kernel/boot_loader.h"
#include "modules/kernel/kernel_cmdline.h"

namespace provisioner::kernel {
namespace {

std::string Unquote(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return v;
}

// The value of `key=` on its own line (os-release, install.conf, grubenv,
// /etc/default/grub), unquoted; nullopt when no line sets it. The last wins.
std::optional<std::string> ValueOf(const std::string& text, const std::string& key) {
  std::optional<std::string> v;
  for (std::string line : SplitLines(text)) {
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    if (line.rfind(key + "=", 0) == 0) v = Unquote(line.substr(key.size() + 1));
  }
  return v;
}

// A file whose absence is normal: its content, nullopt when absent; an
// unreadable one is an error when needed, else a warning.
StatusOr<std::optional<std::string>> ReadOptional(const HostFs& fs, const std::string& path,
                                                  bool needed, std::vector<std::string>& warnings) {
  auto t = fs.ReadFile(path);
  if (t.ok()) return std::optional<std::string>(std::move(*t));
  if (t.status().err() == ENOENT || t.status().err() == ENOTDIR) {
    return std::optional<std::string>();
  }
  if (needed) return t.status();
  warnings.push_back(t.status().message());
  return std::optional<std::string>();
}

void ReadBlsEntries(const HostFs& fs, BootFacts& boot) {
  if (!fs.IsDir("/boot/loader/entries")) return;
  auto entries = fs.ListDir("/boot/loader/entries");
  if (!entries.ok()) return;
  std::vector<std::string> names = *entries;
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    if (n.size() < 6 || n.compare(n.size() - 5, 5, ".conf") != 0) continue;
    auto text = fs.ReadFile("/boot/loader/entries/" + n);
    if (!text.ok()) continue;
    for (const std::string& line : SplitLines(*text)) {
      if (line.rfind("options", 0) != 0 || line.size() <= 7 ||
          (line[7] != ' ' && line[7] != '\t')) {
        continue;
      }
      // RHEL 8: `options $kernelopts ...`, the value in grubenv.
      std::string expanded;
      for (const std::string& t : SplitCmdline(line.substr(8))) {
        const std::string v = t == "$kernelopts" ? boot.grubenv_kernelopts.value_or("") : t;
        if (!v.empty()) expanded += (expanded.empty() ? "" : " ") + v;
      }
      boot.bls_options.push_back(expanded);
    }
  }
}

void ReadKernels(const HostFs& fs, BootFacts& boot) {
  for (const char* dir : {"/usr/lib/modules", "/lib/modules"}) {
    for (const std::string& v : ListDirIfPresent(fs, dir)) {
      if (!KernelVersionOk(v)) continue;
      bool seen = false;
      for (const auto& k : boot.kernels) seen = seen || k.first == v;
      if (seen) continue;
      const std::string in_modules = std::string(dir) + "/" + v + "/vmlinuz";
      if (fs.Exists(in_modules)) {
        boot.kernels.emplace_back(v, in_modules);
      } else if (fs.Exists("/boot/vmlinuz-" + v)) {
        boot.kernels.emplace_back(v, "/boot/vmlinuz-" + v);
      }
    }
  }
  std::sort(boot.kernels.begin(), boot.kernels.end());
}

}  // namespace

Status DiscoverBoot(const HostFs& fs, bool needed, BootFacts& boot,
                    std::vector<std::string>& warnings) {
  boot.discovered = true;
  if (auto c = fs.ReadAttr("/proc/cmdline"); c.ok()) {
    boot.cmdline = *c;
  } else if (c.status().err() != ENOENT) {
    if (needed) return c.status();
    warnings.push_back(c.status().message());
  }
  for (const char* p : {"/etc/os-release", "/usr/lib/os-release"}) {  // os-release(5)
    if (auto os = fs.ReadFile(p); os.ok()) {
      boot.os_release = true;
      boot.os_id = ValueOf(*os, "ID").value_or("");
      boot.os_id_like = ValueOf(*os, "ID_LIKE").value_or("");
      break;
    }
  }
  ASSIGN_OR_RETURN(auto grub, ReadOptional(fs, "/etc/default/grub", needed, warnings));
  boot.default_grub = grub.has_value() || fs.Exists("/etc/default/grub");
  boot.grub_blscfg =
      grub && ValueOf(*grub, "GRUB_ENABLE_BLSCFG") == std::optional<std::string>("true");
  for (const char* p : {"/usr/sbin/grubby", "/sbin/grubby", "/usr/bin/grubby"}) {
    if (fs.Exists(p)) {
      boot.grubby = p;
      break;
    }
  }
  for (const char* p : {"/boot/grub/grub.cfg", "/boot/grub2/grub.cfg"}) {
    if (fs.Exists(p)) {
      boot.grub_cfg = p;
      break;
    }
  }
  ASSIGN_OR_RETURN(boot.dropin, ReadOptional(fs, kDropInPath, needed, warnings));
  ASSIGN_OR_RETURN(auto grubenv, ReadOptional(fs, "/boot/grub2/grubenv", needed, warnings));
  if (grubenv) boot.grubenv_kernelopts = ValueOf(*grubenv, "kernelopts");
  ReadBlsEntries(fs, boot);
  // systemd-boot on an ESP (bootctl's search order: /efi, /boot/efi, /boot).
  for (const char* esp : {"/efi", "/boot/efi", "/boot"}) {
    const std::string e = esp;
    bool sdboot = fs.Exists(e + "/loader/loader.conf");
    for (const std::string& f : ListDirIfPresent(fs, e + "/EFI/systemd")) {
      sdboot = sdboot || f.rfind("systemd-boot", 0) == 0;
    }
    if (sdboot) {
      boot.systemd_boot_esp = e;
      break;
    }
  }
  if (auto v = fs.ReadFile(kLoaderInfoVar); v.ok()) boot.loader_info = DecodeLoaderInfo(*v);
  ASSIGN_OR_RETURN(boot.kernel_cmdline, ReadOptional(fs, kKernelCmdlinePath, needed, warnings));
  ASSIGN_OR_RETURN(boot.usr_kernel_cmdline,
                   ReadOptional(fs, "/usr/lib/kernel/cmdline", needed, warnings));
  for (const char* p : {"/etc/kernel/install.conf", "/usr/lib/kernel/install.conf"}) {
    if (auto t = fs.ReadFile(p); t.ok()) {
      boot.install_layout = ValueOf(*t, "layout").value_or("");
      break;
    }
  }
  for (const char* p :
       {"/usr/bin/kernel-install", "/bin/kernel-install", "/usr/sbin/kernel-install"}) {
    boot.kernel_install = boot.kernel_install || fs.Exists(p);
  }
  ReadKernels(fs, boot);
  return OkStatus();
}

nlohmann::json BootFactsJson(const BootFacts& b) {
  auto opt = [](const std::optional<std::string>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& k : b.kernels) kernels.push_back({k.first, k.second});
  return {{"cmdline", opt(b.cmdline)},
          {"osId", b.os_id},
          {"osIdLike", b.os_id_like},
          {"defaultGrub", b.default_grub},
          {"grubBlscfg", b.grub_blscfg},
          {"grubby", b.grubby},
          {"grubCfg", b.grub_cfg},
          {"dropin", opt(b.dropin)},
          {"blsOptions", b.bls_options},
          {"grubenvKernelopts", opt(b.grubenv_kernelopts)},
          {"systemdBootEsp", b.systemd_boot_esp},
          {"loaderInfo", b.loader_info},
          {"kernelCmdline", opt(b.kernel_cmdline)},
          {"usrKernelCmdline", opt(b.usr_kernel_cmdline)},
          {"installLayout", b.install_layout},
          {"kernelInstall", b.kernel_install},
          {"kernels", kernels}};
}

}  // namespace provisioner::kernel
