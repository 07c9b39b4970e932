#include "engine/base/config_value.h"

#include <cstdio>

#include "engine/base/strings.h"

namespace provisioner {
namespace {

// The characters `syntax` gives a meaning to, beyond whitespace and control
// characters (refused in every format but sysctl.d's value, which may hold
// spaces).
std::string_view Special(ConfigSyntax syntax) {
  switch (syntax) {
    case ConfigSyntax::kUdevRuleValue:
      return "\"\\%$*?[]|";
    case ConfigSyntax::kModprobeToken:
      return "#";
    case ConfigSyntax::kSysctlValue:
      return "";
    case ConfigSyntax::kShellDoubleQuoted:
      return "\"\\$`";
  }
  return "";
}

}  // namespace

const char* ConfigSyntaxName(ConfigSyntax syntax) {
  switch (syntax) {
    case ConfigSyntax::kUdevRuleValue:
      return "udev rule";
    case ConfigSyntax::kModprobeToken:
      return "modprobe.d/modules-load.d";
    case ConfigSyntax::kSysctlValue:
      return "sysctl.d";
    case ConfigSyntax::kShellDoubleQuoted:
      return "shell (GRUB drop-in)";
  }
  return "config";
}

std::optional<std::string> ConfigValueProblem(ConfigSyntax syntax, std::string_view value) {
  if (value.empty()) return std::string("is empty");
  const bool spaces_ok = syntax == ConfigSyntax::kSysctlValue;
  const std::string_view special = Special(syntax);
  for (size_t i = 0; i < value.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    const bool control = c < 0x20 || c >= 0x7f;
    const bool space = c == ' ' || c == '\t';
    if ((control && !(spaces_ok && c == '\t')) || (space && !spaces_ok) ||
        special.find(static_cast<char>(c)) != std::string_view::npos) {
      char buf[64];
      if (c >= 0x21 && c < 0x7f) {
        std::snprintf(buf, sizeof buf, "contains '%c' at byte %zu", c, i);
      } else {
        std::snprintf(buf, sizeof buf, "contains byte 0x%02x at byte %zu", c, i);
      }
      return std::string(buf);
    }
  }
  return std::nullopt;
}

Status CheckConfigValue(ConfigSyntax syntax, std::string_view what, std::string_view value) {
  auto problem = ConfigValueProblem(syntax, value);
  if (!problem) return OkStatus();
  return InvalidArgumentError(std::string(what) + " " + Quote(std::string(value)) +
                              " cannot go into a " + ConfigSyntaxName(syntax) + " file: it " +
                              *problem);
}

}  // namespace provisioner
