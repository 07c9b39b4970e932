#include "modules/kernel/kernel_cmdline.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>
#include <vector>

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

bool HasWord(const std::string& words, const std::vector<std::string>& wanted) {
  for (const std::string& w : SplitCmdline(words)) {
    if (std::find(wanted.begin(), wanted.end(), w) != wanted.end()) return true;
  }
  return false;
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

  const std::string ids = facts.boot.os_id + " " + facts.boot.os_id_like;
  const bool debian = facts.boot.default_grub && HasWord(ids, {"debian", "ubuntu"});
  const bool rhel = !facts.boot.grubby.empty() && HasWord(ids, {"rhel", "fedora", "centos"});
  if (!debian && !rhel) {
    const std::string os = facts.boot.os_release
                               ? "ID=" + facts.boot.os_id + " ID_LIKE=" + facts.boot.os_id_like
                               : std::string("/etc/os-release absent");
    sink.Error(field,
               "no way to set the kernel command line on this host (" + os +
                   "): looked for Debian/Ubuntu (ID or ID_LIKE debian or ubuntu in "
                   "/etc/os-release, and /etc/default/grub: " +
                   (facts.boot.default_grub ? "present" : "absent") +
                   ") and for a RHEL-like host (ID or ID_LIKE rhel, fedora or centos, and grubby "
                   "in /usr/sbin, /sbin or /usr/bin: " +
                   (facts.boot.grubby.empty() ? "absent" : facts.boot.grubby) + ")");
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
  if (debian) {
    std::optional<std::vector<std::string>> current;
    if (facts.boot.dropin) current = ParseDropIn(*facts.boot.dropin);
    if (current && *current == args) {
      sink.Warning(field, std::string(kDropInPath) + " already has " + Join(args) +
                              " for the next boot, " +
                              (facts.boot.cmdline ? "/proc/cmdline does not: reboot to apply it"
                                                  : "/proc/cmdline not captured"));
      return;
    }
    if (facts.boot.dropin && !current) {
      sink.Warning(field, std::string(kDropInPath) + " was not written by provisioner: replaced");
    }
    Change c = MakeChange(
        kModuleName, "boot", "cmdline", current ? nlohmann::json(*current) : nlohmann::json(), args,
        Disruption::kReboot, kPhaseKernelCmdline,
        now + ": write " + kDropInPath + " and run update-grub; takes effect at the next boot",
        field);
    c.detail["method"] = kMethodGrubDropIn;
    c.detail["path"] = kDropInPath;
    c.detail["command"] = nlohmann::json::array({"update-grub"});
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
  const bool booted =
      facts.boot.cmdline && CmdlineSatisfies(SplitCmdline(*facts.boot.cmdline), args);
  const bool next_boot =
      (dropin && *dropin == args) ||
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
