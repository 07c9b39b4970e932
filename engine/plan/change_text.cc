#include "engine/plan/change_text.h"

#include <algorithm>

namespace provisioner {

std::string ShowValue(const nlohmann::json& v) {
  constexpr size_t kLongest = 60;
  std::string text = v.is_null() ? "(none)" : v.is_string() ? v.get<std::string>() : v.dump();
  const size_t newline = text.find('\n');
  if (text.size() <= kLongest && newline == std::string::npos) return text;
  std::string count;
  if (v.is_array()) {
    count = std::to_string(v.size()) + " items";
  } else if (v.is_object()) {
    count = std::to_string(v.size()) + " keys";
  } else if (newline != std::string::npos) {
    size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
    if (text.back() != '\n') ++lines;
    count = std::to_string(lines) + " lines";
  } else {
    count = std::to_string(text.size()) + " characters";
  }
  // The start, cut at a line end and at a UTF-8 character boundary.
  size_t cut = std::min({text.size(), newline, size_t{40}});
  while (cut > 0 && cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) {
    --cut;
  }
  return text.substr(0, cut) + "\u2026 (" + count + ")";
}

std::string ChangeText(const Change& c) {
  const size_t hash = c.id.rfind('#');
  const std::string range = hash == std::string::npos ? "" : c.id.substr(hash);
  return c.module + " " + c.target + " " + c.attribute + range + ": " + ShowValue(c.before) +
         " -> " + ShowValue(c.after);
}

}  // namespace provisioner
