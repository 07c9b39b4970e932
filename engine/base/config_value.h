// Values that go into files other programs parse (udev rules, modprobe.d,
// modules-load.d, sysctl.d, the GRUB drop-in GRUB's shell sources), from the
// tree (phys_port_name, PCI addresses) or from host.yaml: data, never
// syntax. One check per format says whether a value may be pasted as it is;
// a writer refuses what it says no to (nothing is escaped: each format's
// quoting differs and some have none).
#ifndef PROVISIONER_ENGINE_BASE_CONFIG_VALUE_H_
#define PROVISIONER_ENGINE_BASE_CONFIG_VALUE_H_

#include <optional>
#include <string>
#include <string_view>

#include "engine/base/status.h"

namespace provisioner {

enum class ConfigSyntax {
  // A value between double quotes in a udev rule (systemd udev-rules.c
  // parse_line/parse_value): printable ASCII without whitespace, `"` (ends
  // the value), `\` (escape), `%` and `$` (substitutions), and `*?[]|` (a
  // match value is a glob).
  kUdevRuleValue,
  // A whitespace-separated token of a modprobe.d or modules-load.d line
  // (kmod libkmod-config.c): printable ASCII without whitespace or `#`.
  kModprobeToken,
  // A `key = value` line of sysctl.d (systemd sysctl.c): no newline, no
  // control character; the key also no `=` or whitespace.
  kSysctlValue,
  // A word inside a double-quoted shell string (the GRUB drop-in, sourced
  // by grub-mkconfig): printable ASCII without `"`, `\`, `$` or a backquote.
  kShellDoubleQuoted,
};

// "udev rule", "modprobe.d", "sysctl.d", "shell (GRUB drop-in)".
const char* ConfigSyntaxName(ConfigSyntax syntax);

// nullopt when `value` may be pasted into a file of `syntax`; else why not
// ("contains '\"' at byte 3").
std::optional<std::string> ConfigValueProblem(ConfigSyntax syntax, std::string_view value);

// OK, or InvalidArgument "<what> <quoted value> cannot go into a <format>
// file: <problem>".
Status CheckConfigValue(ConfigSyntax syntax, std::string_view what, std::string_view value);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_CONFIG_VALUE_H_
