// Durations on the command line (--settle-timeout, --lock-timeout): what a
// user types for seconds, in one parser.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

#include "engine/cli/commands.h"

namespace provisioner::cli {

std::optional<double> ParseDurationSeconds(const std::string& text, std::string* error) {
  // NaN, infinities and 1e30 would overflow the milliseconds a wait counts
  // in (to 0 or a negative count: a wait that ends at once): not a number
  // here, and the range is said.
  const std::string range = "0 up to 86400 (24 h)";
  const std::string expected = "expected seconds (300) or a duration (30s, 5m, 1h, 1m30s), " +
                               range + ", got \"" + text + "\"";
  double total = 0;
  size_t i = 0;
  bool any = false;
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && (std::isdigit(static_cast<unsigned char>(text[j])) || text[j] == '.'))
      ++j;
    if (j == i) break;
    const std::string number = text.substr(i, j - i);
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size()) break;
    double unit = 1;
    if (j < text.size()) {
      const char u = text[j];
      unit = u == 's' ? 1 : u == 'm' ? 60 : u == 'h' ? 3600 : 0;
      if (unit == 0) break;
      ++j;
    } else if (any) {
      break;  // "1m30": a unit for each part
    }
    total += value * unit;
    any = true;
    i = j;
  }
  if (!any || i != text.size() || !std::isfinite(total)) {
    *error = expected;
    return std::nullopt;
  }
  if (total > kMaxDurationSeconds) {
    *error = "want " + range + ", got \"" + text + "\"";
    return std::nullopt;
  }
  return total;
}

}  // namespace provisioner::cli
