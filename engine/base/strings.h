// Trimming: one helper instead of a local Trim per file, each caller saying
// which characters it trims (sysfs attributes, command output and mstconfig
// tables end in different ones).
#ifndef PROVISIONER_ENGINE_BASE_STRINGS_H_
#define PROVISIONER_ENGINE_BASE_STRINGS_H_

#include <string>
#include <string_view>

namespace provisioner {

// What std::isspace matches in the "C" locale.
inline constexpr std::string_view kAsciiWhitespace = " \t\n\v\f\r";

// `s` without the characters of `chars` at both ends.
std::string Trim(std::string_view s, std::string_view chars = kAsciiWhitespace);

// `s` without the characters of `chars` at its end.
std::string TrimRight(std::string_view s, std::string_view chars = kAsciiWhitespace);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_STRINGS_H_
