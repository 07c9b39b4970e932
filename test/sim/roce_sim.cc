#include "test/sim/roce_sim.h"

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <vector>

#include "engine/base/strings.h"

namespace provisioner::testing {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The kernel's kstrto* with base 0: decimal, 0x hex, 0 octal, an optional
// sign for signed types, one trailing newline allowed.
std::optional<long long> KStrTo(std::string s, bool is_signed) {
  if (!s.empty() && s.back() == '\n') s.pop_back();
  if (s.empty()) return std::nullopt;
  bool neg = false;
  size_t i = 0;
  if (s[0] == '+' || (is_signed && s[0] == '-')) {
    neg = s[0] == '-';
    i = 1;
  }
  if (i == s.size()) return std::nullopt;
  char* end = nullptr;
  const std::string digits = s.substr(i);
  errno = 0;
  long long v = std::strtoll(digits.c_str(), &end, 0);
  if (errno != 0 || end == digits.c_str() || *end != '\0' || digits[0] == '-' || digits[0] == '+' ||
      std::isspace(static_cast<unsigned char>(digits[0]))) {
    return std::nullopt;
  }
  return neg ? -v : v;
}

int TrafficClass(TreeWriter& w, const std::string& path, std::string_view value) {
  constexpr size_t kMaxCmd = 100;  // TCLASS_MAX_CMD
  if (value.size() > kMaxCmd) return EINVAL;
  std::optional<long long> tclass;
  size_t start = 0;
  const std::string v(value);
  while (start <= v.size()) {
    size_t comma = v.find(',', start);
    if (comma == std::string::npos) comma = v.size();
    std::string tok = Trim(v.substr(start, comma - start));
    start = comma + 1;
    if (tok.empty()) continue;
    if (tok.rfind("tclass=", 0) == 0 && tok.size() > 7) tok = tok.substr(7);
    auto n = KStrTo(tok, true);
    if (!n || *n > 0xff || *n < INT32_MIN) return EINVAL;  // tclass_parse_tclass
    tclass = *n;
  }
  if (!tclass) return EINVAL;  // tclass_verify_match: no tclass
  Status s = w.WriteFile(
      path, *tclass >= 0 ? "Global tclass=" + std::to_string(*tclass) + "\n" : "", 0644);
  return s.ok() ? 0 : EIO;
}

int DefaultRoceTos(TreeWriter& w, const std::string& path, std::string_view value) {
  auto n = KStrTo(std::string(value), false);
  if (!n) return EINVAL;
  if (*n > 255) return ERANGE;
  return w.WriteFile(path, std::to_string(*n) + "\n", 0644).ok() ? 0 : EIO;
}

}  // namespace

int RoceTosWrite(TreeWriter& w, const std::string& path, const std::string& real,
                 std::string_view value) {
  if (path.rfind("/sys/class/infiniband/", 0) == 0 && EndsWith(path, "/traffic_class") &&
      path.find("/tc/") != std::string::npos) {
    return TrafficClass(w, real, value);
  }
  if (path.rfind("/sys/kernel/config/rdma_cm/", 0) == 0 && EndsWith(path, "/default_roce_tos")) {
    return DefaultRoceTos(w, real, value);
  }
  return -1;
}

}  // namespace provisioner::testing
