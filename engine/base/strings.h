// Trimming and quoting: one helper instead of a local Trim per file, each caller saying
// which characters it trims (sysfs attributes, command output and mstconfig
// tables end in different ones).
#ifndef PROVISIONER_ENGINE_BASE_STRINGS_H_
#define PROVISIONER_ENGINE_BASE_STRINGS_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace provisioner {

// What std::isspace matches in the "C" locale.
inline constexpr std::string_view kAsciiWhitespace = " \t\n\v\f\r";

// `s` without the characters of `chars` at both ends.
std::string Trim(std::string_view s, std::string_view chars = kAsciiWhitespace);

// `s` without the characters of `chars` at its end.
std::string TrimRight(std::string_view s, std::string_view chars = kAsciiWhitespace);

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates).
bool IsValidUtf8(std::string_view s);

// `s` in double quotes for a message: '"' and '\' escaped, control and
// invalid bytes as \xNN, cut to about `max_bytes` with "..." appended.
// Every message that quotes input (a host file, a tool's output, a user
// value) goes through it, so that a 64 MB line or a terminal escape in a
// captured tree reaches stderr as a short, inert excerpt.
std::string Quote(std::string_view s, size_t max_bytes = 64);

// `s` with control and invalid bytes as \xNN (for library messages), cut
// to 4 KiB.
std::string Printable(std::string_view s);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_STRINGS_H_
