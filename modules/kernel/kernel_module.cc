// Module "kernel": spec.kernel.cmdline (kernel_cmdline.h). Discovery reads
// the running command line and the boot configuration; apply writes the GRUB
// drop-in and runs update-grub (Debian/Ubuntu) or runs grubby (RHEL-like),
// through the runner the root calls for (kernel_backend.h).
#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/config_value.h"
#include "engine/module/module.h"
#include "engine/module/registry.h"
#include "modules/kernel/kernel_backend.h"
#include "modules/kernel/kernel_cmdline.h"

namespace provisioner {
namespace {

using kernel::kDropInPath;

std::string Unquote(std::string v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
    v = v.substr(1, v.size() - 2);
  }
  return v;
}

// ID and ID_LIKE of os-release(5).
void ParseOsRelease(const std::string& text, BootFacts& boot) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    if (line.rfind("ID=", 0) == 0) boot.os_id = Unquote(line.substr(3));
    if (line.rfind("ID_LIKE=", 0) == 0) boot.os_id_like = Unquote(line.substr(8));
    pos = end + 1;
  }
}

std::vector<std::string> ArgsOf(const nlohmann::json& v) {
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const auto& e : v) out.push_back(e.get<std::string>());
  }
  return out;
}

class KernelModule final : public Module {
 public:
  std::string_view name() const override { return kernel::kModuleName; }

  Status Discover(HostContext& ctx, HostFacts& facts) override {
    BootFacts boot;
    boot.discovered = true;
    const HostFs& fs = *ctx.fs;
    // Unreadable files are an error only for a plan that needs them.
    const bool needed = ctx.plan_for != nullptr && ctx.plan_for->kernel.has_value();
    if (auto c = fs.ReadAttr("/proc/cmdline"); c.ok()) {
      boot.cmdline = *c;
    } else if (c.status().err() != ENOENT) {
      if (needed) return c.status();
      facts.warnings.push_back(c.status().message());
    }
    if (auto os = fs.ReadFile("/etc/os-release"); os.ok()) {
      boot.os_release = true;
      ParseOsRelease(*os, boot);
    } else if (auto usr = fs.ReadFile("/usr/lib/os-release"); usr.ok()) {
      boot.os_release = true;  // os-release(5): the fallback location
      ParseOsRelease(*usr, boot);
    }
    boot.default_grub = fs.Exists("/etc/default/grub");
    for (const char* p : {"/usr/sbin/grubby", "/sbin/grubby", "/usr/bin/grubby"}) {
      if (fs.Exists(p)) {
        boot.grubby = p;
        break;
      }
    }
    if (auto d = fs.ReadFile(kDropInPath); d.ok()) {
      boot.dropin = *d;
    } else if (d.status().err() != ENOENT && d.status().err() != ENOTDIR) {
      if (needed) return d.status();  // ours and unreadable: never planned over
      facts.warnings.push_back(d.status().message());
    }
    if (fs.IsDir("/boot/loader/entries")) {
      auto entries = fs.ListDir("/boot/loader/entries");
      if (entries.ok()) {
        std::vector<std::string> names = *entries;
        std::sort(names.begin(), names.end());
        for (const std::string& n : names) {
          if (n.size() < 6 || n.compare(n.size() - 5, 5, ".conf") != 0) continue;
          auto text = fs.ReadFile("/boot/loader/entries/" + n);
          if (!text.ok()) continue;
          size_t pos = 0;
          while (pos < text->size()) {
            size_t end = text->find('\n', pos);
            if (end == std::string::npos) end = text->size();
            const std::string line = text->substr(pos, end - pos);
            if (line.rfind("options", 0) == 0 && line.size() > 7 &&
                (line[7] == ' ' || line[7] == '\t')) {
              boot.bls_options.push_back(line.substr(8));
            }
            pos = end + 1;
          }
        }
      }
    }
    facts.boot = std::move(boot);
    return OkStatus();
  }

  void Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const override {
    kernel::PlanKernelCmdline(desired, facts, sink);
  }

  void Check(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) const override {
    kernel::CheckKernelCmdline(desired, facts, sink);
  }

  Status CheckChange(const Change& change) const override {
    return kernel::CheckCmdlineChange(change);
  }

  Status Apply(const Change& change, HostContext& ctx) override {
    RETURN_IF_ERROR(CheckChange(change));
    std::unique_ptr<kernel::BootCommandRunner> runner = kernel::NewBootCommandRunner(*ctx.fs);
    const std::string method = change.detail.value("method", "");
    if (method == kernel::kMethodGrubby) {
      const std::vector<std::string> argv = kernel::GrubbyArgv(
          change.detail.value("grubby", ""), ArgsOf(change.before), ArgsOf(change.after));
      if (ctx.progress) ctx.progress->Step("kernel command line: grubby --update-kernel=ALL");
      return runner->Run(argv);
    }
    // The GRUB drop-in, then update-grub; the drop-in as it was when
    // update-grub fails, so that no half-applied boot configuration stays.
    auto prior = ctx.fs->ReadFile(kDropInPath);
    if (!prior.ok() && prior.status().err() != ENOENT && prior.status().err() != ENOTDIR) {
      return prior.status();
    }
    RETURN_IF_ERROR(WriteDropIn(*ctx.fs, change.after));
    if (ctx.progress) ctx.progress->Step("kernel command line: update-grub");
    Status s = runner->Run({"update-grub"});
    if (!s.ok()) {
      Status restore = prior.ok() ? ctx.fs->WriteFileAtomic(kDropInPath, *prior)
                                  : ctx.fs->RemoveFile(kDropInPath);
      if (!restore.ok()) return s.WithContext(restore.message());
      return s.WithContext(std::string(kDropInPath) + " restored");
    }
    return OkStatus();
  }

  Status Verify(const Change& change, HostContext& ctx) override {
    RETURN_IF_ERROR(CheckChange(change));
    if (change.detail.value("method", "") == kernel::kMethodGrubby) return OkStatus();
    auto now = ctx.fs->ReadFile(kDropInPath);
    const std::string label = change.field_path.empty() ? change.id : change.field_path;
    if (change.after.is_null()) {
      if (!now.ok() && now.status().err() == ENOENT) return OkStatus();
      return FailedPreconditionError(label + ": " + kDropInPath + " still exists");
    }
    if (!now.ok()) return now.status().WithContext(label);
    auto args = kernel::ParseDropIn(*now);
    if (args && *args == ArgsOf(change.after)) return OkStatus();
    return FailedPreconditionError(label + ": " + kDropInPath + " does not hold " +
                                   change.after.dump());
  }

 private:
  static Status WriteDropIn(HostFs& fs, const nlohmann::json& after) {
    if (after.is_null()) {
      if (!fs.Exists(kDropInPath)) return OkStatus();
      return fs.RemoveFile(kDropInPath);
    }
    // Each argument goes between double quotes of a script GRUB's shell
    // sources: data, never syntax.
    for (const std::string& a : ArgsOf(after)) {
      RETURN_IF_ERROR(CheckConfigValue(ConfigSyntax::kShellDoubleQuoted, "kernel argument", a)
                          .WithContext("write " + std::string(kDropInPath)));
    }
    return fs.WriteFileAtomic(kDropInPath, kernel::RenderDropIn(ArgsOf(after)));
  }
};

}  // namespace

// After pci only: the boot configuration depends on no other facts.
PROVISIONER_REGISTER_MODULE("kernel", KernelModule, "pci")

}  // namespace provisioner
