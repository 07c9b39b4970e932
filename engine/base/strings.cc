#include "engine/base/strings.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <sstream>

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

size_t EditDistance(std::string_view a, std::string_view b) {
  auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> NearestNames(std::string_view want,
                                      const std::vector<std::string>& candidates, size_t max) {
  std::vector<std::string> out;
  size_t best = std::max<size_t>(2, want.size() / 3) + 1;
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(want, c);
    if (d == 0) return {};
    if (d < best) {
      best = d;
      out.clear();
    }
    if (d == best && out.size() < max && std::find(out.begin(), out.end(), c) == out.end()) {
      out.push_back(c);
    }
  }
  return out;
}

namespace {

// The length of the PCI address at the start of `s` ("0000:af:00.1", 12;
// "af:00.1", 7), 0 when there is none. Its fields are fixed-width hex, so
// bytewise order is address order ("0000:1a:00.0" after "0000:19:00.0",
// which comparing digit runs as numbers would reverse).
size_t PciAddressAt(std::string_view s) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  auto shape = [&](std::string_view form) {  // 'x': a hex digit, 'f': 0-7
    if (s.size() < form.size()) return false;
    for (size_t k = 0; k < form.size(); ++k) {
      const char want = form[k];
      if (want == 'x' ? !hex(s[k]) : want == 'f' ? (s[k] < '0' || s[k] > '7') : s[k] != want)
        return false;
    }
    // Not the start of something longer ("af:00.12").
    return s.size() == form.size() || !std::isalnum(static_cast<unsigned char>(s[form.size()]));
  };
  if (shape("xxxx:xx:xx.f")) return 12;
  if (shape("xx:xx.f")) return 7;
  return 0;
}

int LowerByte(char c) { return std::tolower(static_cast<unsigned char>(c)); }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// NaturalLess compares two strings token by token, each string cut into
// tokens on its own (so the order is a strict weak order even for hostile
// names): a PCI address at the start of a word, a run of digits, or one
// other byte. Tokens of different kinds order by kind, which keeps bytewise
// order between a byte and a number: bytes below '0' < numbers < PCI
// addresses < bytes above '9'.
enum class TokenKind { kLowByte, kNumber, kPciAddress, kHighByte };

struct Token {
  TokenKind kind;
  std::string_view text;  // a number's digits without its leading zeros
  size_t zeros = 0;       // a number's leading zeros
};

Token NextToken(std::string_view s, size_t* i) {
  const size_t at = *i;
  if (at == 0 || !std::isalnum(static_cast<unsigned char>(s[at - 1]))) {
    if (const size_t n = PciAddressAt(s.substr(at)); n != 0) {
      *i = at + n;
      return {TokenKind::kPciAddress, s.substr(at, n)};
    }
  }
  if (IsDigit(s[at])) {
    size_t first = at;
    while (first < s.size() && s[first] == '0') ++first;
    size_t end = first;
    while (end < s.size() && IsDigit(s[end])) ++end;
    *i = end;
    return {TokenKind::kNumber, s.substr(first, end - first), first - at};
  }
  *i = at + 1;
  return {static_cast<unsigned char>(s[at]) < '0' ? TokenKind::kLowByte : TokenKind::kHighByte,
          s.substr(at, 1)};
}

// <0, 0, >0 as `a` orders before, with, after `b` (leading zeros aside).
int CompareTokens(const Token& a, const Token& b) {
  if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
  if (a.kind == TokenKind::kNumber && a.text.size() != b.text.size()) {
    return a.text.size() < b.text.size() ? -1 : 1;
  }
  for (size_t k = 0; k < a.text.size() && k < b.text.size(); ++k) {
    const int x = a.kind == TokenKind::kPciAddress ? LowerByte(a.text[k])
                                                   : static_cast<unsigned char>(a.text[k]);
    const int y = b.kind == TokenKind::kPciAddress ? LowerByte(b.text[k])
                                                   : static_cast<unsigned char>(b.text[k]);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;  // same kind and length (a PCI address's forms differ in length: kinds tell)
}

}  // namespace

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  int zeros = 0;  // > 0: a had more leading zeros in the first number where they differ
  while (i < a.size() && j < b.size()) {
    const Token x = NextToken(a, &i), y = NextToken(b, &j);
    if (const int c = CompareTokens(x, y); c != 0) return c < 0;
    if (zeros == 0 && x.zeros != y.zeros) zeros = x.zeros > y.zeros ? 1 : -1;
  }
  if (i < a.size() || j < b.size()) return j < b.size();  // a prefix of the other first
  return zeros < 0;
}

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

std::vector<std::string> SplitWhitespace(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  std::string f;
  while (in >> f) out.push_back(f);
  return out;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace provisioner
