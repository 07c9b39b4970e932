// Small text helpers for diagnostics: UTF-8 checks and safe quoting of user
// values (no control bytes reach the terminal).
#ifndef PROVISIONER_ENGINE_CONFIG_TEXT_H_
#define PROVISIONER_ENGINE_CONFIG_TEXT_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace provisioner::config {

bool IsValidUtf8(std::string_view s);

// `s` in double quotes; '"' and '\' escaped, control and invalid bytes as
// \xNN, cut to about `max_bytes` with "..." appended.
std::string Quote(std::string_view s, size_t max_bytes = 64);

// `s` with control and invalid bytes as \xNN (for library messages).
std::string Printable(std::string_view s);

// Levenshtein distance, ASCII case-insensitive (for "did you mean").
size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_TEXT_H_
