#include "modules/kernel/kernel_cmdline.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/module/managed_file.h"

namespace provisioner::kernel {
namespace {

constexpr char kArgsMarker[] = "# provisioner-args:";
// The apply phase: with firmware, before everything live (nothing after it
// depends on it; a reboot change like the firmware's).
constexpr int kPhaseKernelCmdline = kPhaseFirmware + 5;

std::string KeyOf(const std::string& arg) { return arg.substr(0, arg.find('=')); }
bool IsRemoval(const std::string& arg) { return !arg.empty() && arg[0] == '-'; }

std::string Join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// A token that a removal (without its '-') takes away.
bool Removes(const std::string& removal, const std::string& token) {
  if (removal.find('=') != std::string::npos) return token == removal;
  return token == removal || token.rfind(removal + "=", 0) == 0;
}

// The tokens of `tokens` that `args` manages: same key as an argument to
// have, or taken away by a removal.
std::vector<std::string> Managed(const std::vector<std::string>& tokens,
                                 const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& t : tokens) {
    for (const std::string& a : args) {
      const bool hit = IsRemoval(a) ? Removes(a.substr(1), t) : KeyOf(a) == KeyOf(t);
      if (hit) {
        out.push_back(t);
        break;
      }
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> SplitCmdline(std::string_view cmdline) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < cmdline.size()) {
    while (i < cmdline.size() && std::isspace(static_cast<unsigned char>(cmdline[i])) != 0) ++i;
    size_t j = i;
    while (j < cmdline.size() && std::isspace(static_cast<unsigned char>(cmdline[j])) == 0) ++j;
    if (j > i) out.emplace_back(cmdline.substr(i, j - i));
    i = j;
  }
  return out;
}

bool CmdlineSatisfies(const std::vector<std::string>& tokens,
                      const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (IsRemoval(a)) {
      const std::string r = a.substr(1);
      if (std::any_of(tokens.begin(), tokens.end(),
                      [&](const std::string& t) { return Removes(r, t); })) {
        return false;
      }
    } else if (std::find(tokens.begin(), tokens.end(), a) == tokens.end()) {
      return false;
    }
  }
  return true;
}

std::string RenderDropIn(const std::vector<std::string>& args) {
  std::vector<std::string> adds, patterns;
  for (const std::string& a : args) {
    if (IsRemoval(a)) {
      const std::string r = a.substr(1);
      patterns.push_back(r);
      if (r.find('=') == std::string::npos) patterns.push_back(r + "=*");
    } else {
      adds.push_back(a);
      // Another value of the key, or the argument already there: dropped,
      // so that ours (appended last) is the only one.
      patterns.push_back(a.find('=') == std::string::npos ? a : KeyOf(a) + "=*");
    }
  }
  std::string out =
      "# Written by provisioner from spec.kernel of host.yaml; apply rewrites it, do not edit.\n"
      "# grub-mkconfig (update-grub) sources it after /etc/default/grub and the other\n"
      "# /etc/default/grub.d/*.cfg files: every boot entry gets these arguments.\n";
  out += std::string(kArgsMarker) + " " + Join(args) + "\n";
  if (!patterns.empty()) {
    out +=
        "provisioner_cmdline_drop() {\n"
        "  provisioner_out=\n"
        "  for provisioner_a in $1; do\n"
        "    case \"$provisioner_a\" in\n"
        "      " +
        Join(patterns, "|") +
        ") ;;\n"
        "      *) provisioner_out=\"$provisioner_out $provisioner_a\" ;;\n"
        "    esac\n"
        "  done\n"
        "  printf '%s' \"${provisioner_out# }\"\n"
        "}\n"
        "GRUB_CMDLINE_LINUX=\"$(provisioner_cmdline_drop \"$GRUB_CMDLINE_LINUX\")\"\n"
        "GRUB_CMDLINE_LINUX_DEFAULT=\"$(provisioner_cmdline_drop "
        "\"$GRUB_CMDLINE_LINUX_DEFAULT\")\"\n"
        "unset -f provisioner_cmdline_drop\n"
        "unset provisioner_out provisioner_a\n";
  }
  if (!adds.empty()) {
    out += "GRUB_CMDLINE_LINUX=\"${GRUB_CMDLINE_LINUX:+$GRUB_CMDLINE_LINUX }" + Join(adds) + "\"\n";
  }
  return out;
}

std::optional<std::vector<std::string>> ParseDropIn(std::string_view content) {
  size_t pos = 0;
  while (pos < content.size()) {
    size_t end = content.find('\n', pos);
    if (end == std::string_view::npos) end = content.size();
    std::string_view line = content.substr(pos, end - pos);
    if (line.rfind(kArgsMarker, 0) == 0) {
      return SplitCmdline(line.substr(sizeof(kArgsMarker) - 1));
    }
    pos = end + 1;
  }
  return std::nullopt;
}

std::vector<std::string> GrubbyArgv(const std::string& grubby,
                                    const std::vector<std::string>& before,
                                    const std::vector<std::string>& after) {
  std::vector<std::string> add, remove;
  for (const std::string& a : after)
    (IsRemoval(a) ? remove : add).push_back(IsRemoval(a) ? a.substr(1) : a);
  for (const std::string& b : before) {
    if (IsRemoval(b)) continue;
    const bool kept = std::any_of(add.begin(), add.end(),
                                  [&](const std::string& a) { return KeyOf(a) == KeyOf(b); });
    if (!kept && std::find(remove.begin(), remove.end(), b) == remove.end()) remove.push_back(b);
  }
  std::vector<std::string> argv = {grubby, "--update-kernel=ALL"};
  if (!add.empty()) argv.push_back("--args=" + Join(add));
  if (!remove.empty()) argv.push_back("--remove-args=" + Join(remove));
  return argv;
}

std::vector<std::string> EditCmdline(const std::vector<std::string>& tokens,
                                     const std::vector<std::string>& before,
                                     const std::vector<std::string>& after) {
  std::vector<std::string> adds, removes;
  for (const std::string& a : after) {
    if (IsRemoval(a)) {
      removes.push_back(a.substr(1));
    } else {
      adds.push_back(a);
    }
  }
  for (const std::string& b : before) {
    if (IsRemoval(b)) continue;
    const bool kept = std::any_of(adds.begin(), adds.end(),
                                  [&](const std::string& a) { return KeyOf(a) == KeyOf(b); });
    if (!kept) removes.push_back(b);
  }
  std::vector<std::string> out;
  for (const std::string& t : tokens) {
    const bool replaced = std::any_of(adds.begin(), adds.end(),
                                      [&](const std::string& a) { return KeyOf(a) == KeyOf(t); });
    const bool removed = std::any_of(removes.begin(), removes.end(),
                                     [&](const std::string& r) { return Removes(r, t); });
    if (!replaced && !removed) out.push_back(t);
  }
  out.insert(out.end(), adds.begin(), adds.end());
  return out;
}

Status CheckCmdlineChange(const Change& c) {
  if (c.module != kModuleName) return InvalidArgumentError("module kernel cannot apply " + c.id);
  if (c.target != "boot" || c.attribute != "cmdline") {
    return InvalidArgumentError("module kernel has no change " + c.id);
  }
  auto list_ok = [](const nlohmann::json& v) {
    if (v.is_null()) return true;
    if (!v.is_array()) return false;
    for (const auto& e : v) {
      if (!e.is_string()) return false;
      const std::string s = e.get<std::string>();
      const std::string body = IsRemoval(s) ? s.substr(1) : s;
      if (body.empty() || body[0] == '-' || body[0] == '=') return false;
      for (char ch : body) {
        if (std::isalnum(static_cast<unsigned char>(ch)) == 0 &&
            std::string("_.,:/+@%=-").find(ch) == std::string::npos) {
          return false;
        }
      }
    }
    return true;
  };
  if (!list_ok(c.before) || !list_ok(c.after)) {
    return InvalidArgumentError(c.id + ": kernel arguments must be lists of plain arguments, not " +
                                c.before.dump() + " -> " + c.after.dump());
  }
  const std::string method = c.detail.is_object() ? c.detail.value("method", "") : "";
  if (method == kMethodGrubDropIn) return OkStatus();
  if (method == kMethodKernelInstall) {
    if (c.detail.value("path", "") != kKernelCmdlinePath) {
      return InvalidArgumentError(c.id + ": kernel-install reads " + kKernelCmdlinePath + ", not " +
                                  c.detail.value("path", ""));
    }
    const nlohmann::json kernels = c.detail.value("kernels", nlohmann::json());
    if (!kernels.is_array() || kernels.empty()) {
      return InvalidArgumentError(c.id + ": kernel-install needs the kernels to add");
    }
    for (const auto& k : kernels) {
      if (!k.is_array() || k.size() != 2 || !k[0].is_string() || !k[1].is_string() ||
          !KernelImageOk(k[0].get<std::string>(), k[1].get<std::string>())) {
        return InvalidArgumentError(c.id + ": kernel " + k.dump() +
                                    " is not a version and its image");
      }
    }
    if (c.detail.contains("base") && !c.detail["base"].is_string()) {
      return InvalidArgumentError(c.id + ": base must be a command line");
    }
    if (c.after.is_null())
      return InvalidArgumentError(c.id + ": kernel-install needs the arguments");
    return OkStatus();
  }
  if (method == kMethodGrubby) {
    const std::string grubby = c.detail.value("grubby", "");
    if (grubby != "/usr/sbin/grubby" && grubby != "/sbin/grubby" && grubby != "/usr/bin/grubby") {
      return InvalidArgumentError(c.id + ": grubby path " + grubby +
                                  " is not one provisioner runs");
    }
    if (c.after.is_null()) return InvalidArgumentError(c.id + ": grubby needs the arguments");
    return OkStatus();
  }
  return InvalidArgumentError(c.id + ": unknown method \"" + method + "\"");
}

namespace {

// systemd-boot / kernel-install: /etc/kernel/cmdline, then kernel-install
// add of every installed kernel (kernel_cmdline.h).
void PlanKernelInstall(const BootFacts& boot, const std::vector<std::string>& args,
                       const std::string& now, const std::string& why, const std::string& field,
                       PlanSink& sink) {
  const std::vector<std::string> base = KernelInstallBase(boot);
  if (boot.kernel_cmdline && CmdlineSatisfies(base, args)) {
    sink.Warning(field, std::string(kKernelCmdlinePath) + " already has " + Join(args) +
                            " for the next boot, " +
                            (boot.cmdline ? "/proc/cmdline does not: reboot to apply it"
                                          : "/proc/cmdline not captured"));
    return;
  }
  if (!boot.kernel_install) {
    sink.Error(field, why + ", but kernel-install is not in /usr/bin, /bin or /usr/sbin");
    return;
  }
  if (boot.kernels.empty()) {
    sink.Error(field, why +
                          ", but no installed kernel was found (/usr/lib/modules/*/vmlinuz, "
                          "/boot/vmlinuz-<version> of /lib/modules/*): nothing for "
                          "kernel-install add to regenerate");
    return;
  }
  std::string commands;
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& [version, image] : boot.kernels) {
    kernels.push_back({version, image});
    commands +=
        (commands.empty() ? "" : ", ") + std::string("kernel-install add ") + version + " " + image;
  }
  Change c = MakeChange(kModuleName, "boot", "cmdline", Managed(base, args), args,
                        Disruption::kReboot, kPhaseKernelCmdline,
                        now + " (" + why + "): write " + kKernelCmdlinePath + " and run " +
                            commands + "; takes effect at the next boot",
                        field);
  c.detail["method"] = kMethodKernelInstall;
  c.detail["path"] = kKernelCmdlinePath;
  // What kernel-install would use without the file: its first content.
  if (!boot.kernel_cmdline) c.detail["base"] = Join(base);
  c.detail["kernels"] = kernels;
  DeclareEditedFile(c, kKernelCmdlinePath);
  sink.AddChange(std::move(c));
}

}  // namespace

void PlanKernelCmdline(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) {
  if (!desired.kernel) return;
  const KernelSpec& k = *desired.kernel;
  if (k.cmdline.empty() && k.cmdline_remove.empty()) return;
  const std::string field = "spec.kernel.cmdline";
  bool bad = false;
  for (size_t i = 0; i < k.cmdline.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (KeyOf(k.cmdline[i]) == KeyOf(k.cmdline[j])) {
        sink.Error(field + "[" + std::to_string(i) + "]",
                   k.cmdline[i] + " gives " + KeyOf(k.cmdline[i]) + " a second value (also " +
                       k.cmdline[j] + ")");
        bad = true;
      }
    }
  }
  for (size_t r = 0; r < k.cmdline_remove.size(); ++r) {
    for (const std::string& a : k.cmdline) {
      if (Removes(k.cmdline_remove[r], a)) {
        sink.Error("spec.kernel.cmdlineRemove[" + std::to_string(r) + "]",
                   "removes " + a + ", which spec.kernel.cmdline asks for");
        bad = true;
      }
    }
  }
  if (bad || !facts.boot.discovered) return;
  std::vector<std::string> args = k.cmdline;
  for (const std::string& r : k.cmdline_remove) args.push_back("-" + r);
  const std::vector<std::string> running =
      facts.boot.cmdline ? SplitCmdline(*facts.boot.cmdline) : std::vector<std::string>();
  if (facts.boot.cmdline && CmdlineSatisfies(running, args)) return;  // converged

  const BootLoaderChoice loader = ChooseBootLoader(facts.boot);
  if (loader.method.empty()) {
    sink.Error(field, loader.why);
    return;
  }
  // What /proc/cmdline lacks and still has, for the reason.
  std::vector<std::string> lacks, has;
  for (const std::string& a : args) {
    if (CmdlineSatisfies(running, {a})) continue;
    if (IsRemoval(a)) {
      for (const std::string& t : running) {
        if (Removes(a.substr(1), t)) has.push_back(t);
      }
    } else {
      lacks.push_back(a);
    }
  }
  std::string now;
  if (!facts.boot.cmdline) {
    now = "/proc/cmdline not captured";
  } else {
    now = "/proc/cmdline";
    if (!lacks.empty()) now += " lacks " + Join(lacks);
    if (!has.empty()) now += (lacks.empty() ? " has " : ", has ") + Join(has);
  }
  if (loader.method == kMethodKernelInstall) {
    PlanKernelInstall(facts.boot, args, now, loader.why, field, sink);
    return;
  }
  if (loader.method == kMethodGrubDropIn) {
    std::optional<std::vector<std::string>> current;
    if (facts.boot.dropin) current = ParseDropIn(*facts.boot.dropin);
    if (current && *current == args) {
      sink.Warning(field, std::string(kDropInPath) + " already has " + Join(args) +
                              " for the next boot, " +
                              (facts.boot.cmdline ? "/proc/cmdline does not: reboot to apply it"
                                                  : "/proc/cmdline not captured"));
      return;
    }
    Change c = MakeChange(
        kModuleName, "boot", "cmdline", current ? nlohmann::json(*current) : nlohmann::json(), args,
        Disruption::kReboot, kPhaseKernelCmdline,
        now + ": write " + kDropInPath + " and run update-grub; takes effect at the next boot",
        field);
    c.detail["method"] = kMethodGrubDropIn;
    c.detail["path"] = kDropInPath;
    c.detail["command"] = nlohmann::json::array({"update-grub"});
    DeclareManagedFile(c, kDropInPath, facts.boot.dropin, field, sink);
    sink.AddChange(std::move(c));
    return;
  }
  // RHEL-like: grubby edits every BootLoaderSpec entry.
  if (!facts.boot.bls_options.empty() &&
      std::all_of(facts.boot.bls_options.begin(), facts.boot.bls_options.end(),
                  [&](const std::string& o) { return CmdlineSatisfies(SplitCmdline(o), args); }) &&
      facts.boot.cmdline) {
    sink.Warning(field, "every /boot/loader/entries/*.conf already has " + Join(args) +
                            ", /proc/cmdline does not: reboot to apply it");
    return;
  }
  const std::vector<std::string> before = Managed(
      facts.boot.bls_options.empty() ? running : SplitCmdline(facts.boot.bls_options.front()),
      args);
  Change c = MakeChange(kModuleName, "boot", "cmdline", before, args, Disruption::kReboot,
                        kPhaseKernelCmdline,
                        now + ": " + Join(GrubbyArgv(facts.boot.grubby, before, args)) +
                            "; takes effect at the next boot",
                        field);
  c.detail["method"] = kMethodGrubby;
  c.detail["grubby"] = facts.boot.grubby;
  sink.AddChange(std::move(c));
}

void CheckKernelCmdline(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) {
  if (desired == nullptr || !desired->kernel || !facts.boot.discovered) return;
  std::vector<std::string> args = desired->kernel->cmdline;
  for (const std::string& r : desired->kernel->cmdline_remove) args.push_back("-" + r);
  if (args.empty()) return;
  CheckResult r;
  r.module = kModuleName;
  r.id = "kernel.cmdline";
  r.target = "/proc/cmdline";
  r.evidence.push_back({"spec.kernel.cmdline", Join(args)});
  r.evidence.push_back({"/proc/cmdline", facts.boot.cmdline.value_or("(not captured)")});
  std::optional<std::vector<std::string>> dropin;
  if (facts.boot.dropin) {
    dropin = ParseDropIn(*facts.boot.dropin);
    r.evidence.push_back({kDropInPath, dropin ? Join(*dropin) : std::string("(not ours)")});
  }
  for (const std::string& o : facts.boot.bls_options) {
    r.evidence.push_back({"/boot/loader/entries/*.conf options", o});
  }
  if (facts.boot.kernel_cmdline)
    r.evidence.push_back({kKernelCmdlinePath, *facts.boot.kernel_cmdline});
  const bool booted =
      facts.boot.cmdline && CmdlineSatisfies(SplitCmdline(*facts.boot.cmdline), args);
  const bool next_boot =
      (dropin && *dropin == args) ||
      (facts.boot.kernel_cmdline && ChooseBootLoader(facts.boot).method == kMethodKernelInstall &&
       CmdlineSatisfies(SplitCmdline(*facts.boot.kernel_cmdline), args)) ||
      (!facts.boot.bls_options.empty() &&
       std::all_of(facts.boot.bls_options.begin(), facts.boot.bls_options.end(),
                   [&](const std::string& o) { return CmdlineSatisfies(SplitCmdline(o), args); }));
  if (booted) {
    r.verdict = Verdict::kOk;
    r.summary = "the running kernel has " + Join(args);
  } else if (next_boot) {
    r.verdict = Verdict::kWarn;
    r.summary = facts.boot.cmdline
                    ? "the next boot has " + Join(args) + ", the running kernel not"
                    : "the next boot has " + Join(args) + "; /proc/cmdline not captured";
    r.fix = "reboot";
  } else {
    r.verdict = Verdict::kFail;
    r.summary = "the kernel command line does not have " + Join(args) +
                " and neither does the boot configuration";
    r.fix = "provisioner apply (spec.kernel.cmdline), then reboot";
  }
  sink.Add(std::move(r));
}

}  // namespace provisioner::kernel
