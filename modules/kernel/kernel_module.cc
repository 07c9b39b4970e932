// Module "kernel": spec.kernel.cmdline (kernel_cmdline.h). Discovery reads
// the running command line and the boot configuration (boot_discover.h);
// apply writes where the boot loader that boots the host reads
// (boot_loader.h) and runs its regeneration step: the GRUB drop-in and
// update-grub, grubby, or /etc/kernel/cmdline and kernel-install add,
// through the runner the root calls for (kernel_backend.h). The files go
// through the managed-file mechanism (engine/module/managed_file.h), so a
// rollback restores them byte for byte.
#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/config_value.h"
#include "engine/module/managed_file.h"
#include "engine/module/module.h"
#include "engine/module/registry.h"
#include "modules/kernel/boot_discover.h"
#include "modules/kernel/kernel_backend.h"
#include "modules/kernel/kernel_cmdline.h"

namespace provisioner {
namespace {

using kernel::kDropInPath;

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
    // Unreadable files are an error only for a plan that needs them.
    const bool needed = ctx.plan_for != nullptr && ctx.plan_for->kernel.has_value();
    RETURN_IF_ERROR(kernel::DiscoverBoot(*ctx.fs, needed, boot, facts.warnings));
    facts.boot = std::move(boot);
    return OkStatus();
  }

  nlohmann::json DigestedFacts(const HostFacts& facts) const override {
    return kernel::BootFactsJson(facts.boot);
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
    if (method == kernel::kMethodKernelInstall) return ApplyKernelInstall(change, ctx, *runner);
    // The GRUB drop-in, then update-grub; the drop-in as it was when
    // update-grub fails, so that no half-applied boot configuration stays.
    auto prior = ctx.fs->ReadFile(kDropInPath);
    if (!prior.ok() && prior.status().err() != ENOENT && prior.status().err() != ENOTDIR) {
      return prior.status();
    }
    // Each argument goes between double quotes of a script GRUB's shell
    // sources: data, never syntax.
    for (const std::string& a : ArgsOf(change.after)) {
      RETURN_IF_ERROR(CheckConfigValue(ConfigSyntax::kShellDoubleQuoted, "kernel argument", a)
                          .WithContext("write " + std::string(kDropInPath)));
    }
    const std::optional<std::string> text =
        change.after.is_null()
            ? std::nullopt
            : std::optional<std::string>(kernel::RenderDropIn(ArgsOf(change.after)));
    RETURN_IF_ERROR(WriteManagedFile(*ctx.fs, change, kDropInPath, text));
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
    const std::string method = change.detail.value("method", "");
    if (method == kernel::kMethodGrubby) return OkStatus();
    const std::string path =
        method == kernel::kMethodKernelInstall ? kernel::kKernelCmdlinePath : kDropInPath;
    if (method == kernel::kMethodKernelInstall && !RestoresManagedFile(change, path)) {
      // Edited in place, never removed: its other arguments are the host's.
      auto now = ctx.fs->ReadFile(path);
      const std::string label = change.field_path.empty() ? change.id : change.field_path;
      if (!now.ok()) return now.status().WithContext(label);
      if (kernel::CmdlineSatisfies(kernel::SplitCmdline(*now), ArgsOf(change.after))) {
        return OkStatus();
      }
      return FailedPreconditionError(label + ": " + path + " does not hold " + change.after.dump());
    }
    return VerifyManagedFile(*ctx.fs, change, path,
                             [&](const std::string& text) -> std::optional<std::string> {
                               if (kernel::ParseDropIn(text) == ArgsOf(change.after)) {
                                 return std::nullopt;
                               }
                               return "does not hold " + change.after.dump();
                             });
  }

 private:
  // /etc/kernel/cmdline edited (or restored, a rollback), then kernel-install
  // add of every kernel the plan found, one after the other.
  static Status ApplyKernelInstall(const Change& change, HostContext& ctx,
                                   kernel::BootCommandRunner& runner) {
    const std::string path = kernel::kKernelCmdlinePath;
    std::optional<std::string> text;
    if (!RestoresManagedFile(change, path)) {
      std::vector<std::string> tokens;
      if (auto cur = ctx.fs->ReadFile(path); cur.ok()) {
        tokens = kernel::SplitCmdline(*cur);
      } else if (cur.status().err() == ENOENT) {
        tokens = kernel::SplitCmdline(change.detail.value("base", ""));
      } else {
        return cur.status();
      }
      std::string line;
      for (const std::string& t :
           kernel::EditCmdline(tokens, ArgsOf(change.before), ArgsOf(change.after))) {
        line += (line.empty() ? "" : " ") + t;
      }
      text = line + "\n";
    }
    RETURN_IF_ERROR(WriteManagedFile(*ctx.fs, change, path, text));
    for (const auto& k : change.detail["kernels"]) {
      const std::string version = k[0].get<std::string>();
      if (ctx.progress) ctx.progress->Step("kernel command line: kernel-install add " + version);
      RETURN_IF_ERROR(runner.Run({"kernel-install", "add", version, k[1].get<std::string>()}));
    }
    return OkStatus();
  }
};

}  // namespace

// After pci only: the boot configuration depends on no other facts.
PROVISIONER_REGISTER_MODULE("kernel", KernelModule, "pci")

}  // namespace provisioner
