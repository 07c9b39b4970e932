#include "engine/model/ipoib_facts.h"

#include <cstdio>

#include "engine/base/strings.h"

namespace provisioner {

std::optional<int> ParsePkey(std::string_view text) {
  if (text.size() < 3 || text.size() > 6 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) {
    return std::nullopt;
  }
  int v = 0;
  for (char c : text.substr(2)) {
    const int d = HexDigitValue(c);
    if (d < 0) return std::nullopt;
    v = v * 16 + d;
  }
  return v;
}

bool IsChildPkey(int pkey) {
  const int partition = pkey & ~kPkeyFullMember;
  return pkey > 0 && pkey <= 0xffff && partition != 0 && partition != 0x7fff;
}

std::string IpoibChildName(const std::string& parent, int pkey) {
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, ".%04x", static_cast<unsigned>(pkey) & 0xffffu);
  std::string name = parent + suffix;
  if (name.size() > 15) name.resize(15);
  return name;
}

std::string PkeyText(int pkey) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", static_cast<unsigned>(pkey) & 0xffffu);
  return buf;
}

}  // namespace provisioner
