#pragma once

// One table per enum that answers both ways: the name of a value and the value
// of a name. A switch per direction repeats the same pairs and lets the two drift
// apart; a table of {value, name} rows cannot.
//
//   constexpr EnumName<Disruption> kDisruptionNames[] = {
//       {Disruption::kLive, "live"}, {Disruption::kReboot, "reboot"}};
//   NameOf(kDisruptionNames, d, "live");            // "reboot"
//   ValueOf(kDisruptionNames, "reboot");            // Disruption::kReboot
//
// The tables are short (a handful of rows), so a linear scan is the lookup.

#include <cstddef>
#include <optional>
#include <string_view>

namespace provisioner {

template <typename E>
struct EnumName {
  E value;
  const char* name;
};

// The name of `value` in `table`, or `fallback` when no row holds it.
template <typename E, size_t N>
constexpr const char* NameOf(const EnumName<E> (&table)[N], E value, const char* fallback) {
  for (const EnumName<E>& row : table) {
    if (row.value == value) return row.name;
  }
  return fallback;
}

// The value whose name is `name` (compared exactly), or nullopt.
template <typename E, size_t N>
constexpr std::optional<E> ValueOf(const EnumName<E> (&table)[N], std::string_view name) {
  for (const EnumName<E>& row : table) {
    if (name == row.name) return row.value;
  }
  return std::nullopt;
}

}  // namespace provisioner
