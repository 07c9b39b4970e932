#include "modules/kernel/kernel_backend.h"

#include <chrono>
#include <string>
#include <vector>

#include "modules/firmware/command.h"
#include "spdlog/spdlog.h"

namespace provisioner::kernel {
namespace {

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

class Live final : public BootCommandRunner {
 public:
  Status Run(const std::vector<std::string>& argv) override {
    // update-grub probes every disk for other systems: minutes on big hosts.
    auto r = RunCommand(argv, std::chrono::minutes(10));
    if (!r.ok()) {
      if (r.status().err() == ENOENT) {
        return r.status().WithContext(argv[0] + " not found" +
                                      (argv[0] == "update-grub"
                                           ? " (Debian/Ubuntu: apt install grub2-common)"
                                           : " (RHEL-like: dnf install grubby)"));
      }
      return r.status().WithContext(Join(argv));
    }
    if (r->exit_code != 0) {
      std::string err = r->err.empty() ? r->out : r->err;
      while (!err.empty() && (err.back() == '\n' || err.back() == ' ')) err.pop_back();
      return FailedPreconditionError(Join(argv) + ": exit " + std::to_string(r->exit_code) +
                                     (err.empty() ? "" : ": " + err));
    }
    return OkStatus();
  }
};

class Tree final : public BootCommandRunner {
 public:
  explicit Tree(std::string root) : root_(std::move(root)) {}
  Status Run(const std::vector<std::string>& argv) override {
    spdlog::warn(
        "under --root {}: not running `{}` (it changes the boot loader of the machine it "
        "runs on): run it where this tree boots",
        root_, Join(argv));
    return OkStatus();
  }

 private:
  std::string root_;
};

}  // namespace

std::unique_ptr<BootCommandRunner> NewLiveBootCommandRunner() { return std::make_unique<Live>(); }
std::unique_ptr<BootCommandRunner> NewTreeBootCommandRunner(const std::string& root) {
  return std::make_unique<Tree>(root);
}

}  // namespace provisioner::kernel
