#include "engine/base/strings.h"

#include <cstdio>

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

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 when it is not valid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned int cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  // Reject overlong forms, surrogates and values past U+10FFFF.
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;
  if (cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

void AppendEscaped(std::string_view s, size_t max_bytes, bool quote_chars, std::string* out) {
  size_t i = 0;
  while (i < s.size()) {
    if (out->size() >= max_bytes) {
      *out += "...";
      return;
    }
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0 || c < 0x20 || c == 0x7f) {
      if (c == '\n') {
        *out += "\\n";
      } else if (c == '\t') {
        *out += "\\t";
      } else {
        char buf[8];
        std::snprintf(buf, sizeof(buf), "\\x%02x", c);
        *out += buf;
      }
      ++i;
      continue;
    }
    if (quote_chars && (c == '"' || c == '\\')) *out += '\\';
    out->append(s.substr(i, n));
    i += n;
  }
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string Quote(std::string_view s, size_t max_bytes) {
  std::string out = "\"";
  AppendEscaped(s, max_bytes + 1, /*quote_chars=*/true, &out);
  out += '"';
  return out;
}

std::string Printable(std::string_view s) {
  std::string out;
  AppendEscaped(s, 4096, /*quote_chars=*/false, &out);
  return out;
}

}  // namespace provisioner
