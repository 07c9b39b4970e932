#include "engine/base/strings.h"

namespace provisioner {

std::string Trim(std::string_view s, std::string_view chars) {
  const size_t first = s.find_first_not_of(chars);
  if (first == std::string_view::npos) return "";
  return std::string(s.substr(first, s.find_last_not_of(chars) - first + 1));
}

std::string TrimRight(std::string_view s, std::string_view chars) {
  const size_t last = s.find_last_not_of(chars);
  return std::string(s.substr(0, last == std::string_view::npos ? 0 : last + 1));
}

}  // namespace provisioner
