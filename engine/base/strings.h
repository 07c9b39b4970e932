// Trimming and quoting: one helper instead of a local Trim per file, each caller saying
// which characters it trims (sysfs attributes, command output and mstconfig
// tables end in different ones).
#ifndef PROVISIONER_ENGINE_BASE_STRINGS_H_
#define PROVISIONER_ENGINE_BASE_STRINGS_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

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

// Levenshtein distance, ASCII case-insensitive (for "did you mean").
size_t EditDistance(std::string_view a, std::string_view b);

// The candidates nearest to `want` for a "did you mean" (all at the least
// distance, in the candidates' order, at most `max`): none when even the
// nearest differs in more than a third of `want` (at least 2 edits allowed),
// or when `want` itself is a candidate.
std::vector<std::string> NearestNames(std::string_view want,
                                      const std::vector<std::string>& candidates, size_t max = 3);

// Natural order: runs of digits compare as numbers, so "mlx5_9" < "mlx5_10"
// and "ens6f1" < "ens10f0"; otherwise bytewise. Equal numbers with more
// leading zeros sort after ("a01" after "a1"), so the order stays strict.
// A PCI address at the start of a word ("0000:1a:00.0", "1a:00.0") is one
// token compared as an address (fixed-width hex, bytewise, case folded):
// "0000:19:00.0" before "0000:1a:00.0". Each string is cut into its tokens on
// its own, so this is a strict weak order for any names (a hostile tree's).
// The one order for every list a person reads: ListDir, doctor's targets,
// discover's tables, plan and apply logs, manifests' files.
bool NaturalLess(std::string_view a, std::string_view b);

// The lines of `text` without their '\n' (a last line without one too; no
// empty line after a final '\n'), and the whitespace-separated fields of a
// line: procfs tables, modprobe.d, dracut configuration.
std::vector<std::string> SplitLines(std::string_view text);
std::vector<std::string> SplitWhitespace(std::string_view line);

// The value of a hex digit, -1 for any other character (no locale, no sign,
// no "0x": callers decide what a whole number may look like).
int HexDigitValue(char c);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_BASE_STRINGS_H_
