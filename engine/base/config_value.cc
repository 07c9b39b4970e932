#include "engine/base/config_value.h"

#include <cstdio>

#include "engine/base/enum_names.h"
#include "engine/base/strings.h"

namespace provisioner {
namespace {

// The characters `syntax` gives a meaning to, beyond whitespace and control
// characters (refused in every format but sysctl.d's value, which may hold
// spaces).
std::string_view Special(ConfigSyntax syntax) {
  static constexpr EnumName<ConfigSyntax> kSpecial[] = {
      {ConfigSyntax::kUdevRuleValue, "\"\\%$*?[]|"},
      {ConfigSyntax::kModprobeToken, "#"},
      {ConfigSyntax::kSysctlValue, ""},
      {ConfigSyntax::kShellDoubleQuoted, "\"\\$`"},
  };
  return NameOf(kSpecial, syntax, "");
}

}  // namespace

const char* ConfigSyntaxName(ConfigSyntax syntax) {
  static constexpr EnumName<ConfigSyntax> kNames[] = {
      {ConfigSyntax::kUdevRuleValue, "udev rule"},
      {ConfigSyntax::kModprobeToken, "modprobe.d/modules-load.d"},
      {ConfigSyntax::kSysctlValue, "sysctl.d"},
      {ConfigSyntax::kShellDoubleQuoted, "shell (GRUB drop-in)"},
  };
  return NameOf(kNames, syntax, "config");
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
