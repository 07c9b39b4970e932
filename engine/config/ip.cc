#include "engine/config/ip.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace provisioner::config {
namespace {

constexpr size_t kMaxAddressText = 64;  // longer than any textual address

}  // namespace

std::optional<IpAddress> ParseIp(std::string_view text) {
  if (text.empty() || text.size() > kMaxAddressText) return std::nullopt;
  if (text.find('\0') != std::string_view::npos) return std::nullopt;
  std::string s(text);
  IpAddress ip;
  if (s.find(':') == std::string::npos) {
    in_addr a4;
    if (inet_pton(AF_INET, s.c_str(), &a4) != 1) return std::nullopt;
    ip.version = 4;
    std::memcpy(ip.bytes.data(), &a4, 4);
  } else {
    in6_addr a6;
    if (inet_pton(AF_INET6, s.c_str(), &a6) != 1) return std::nullopt;
    ip.version = 6;
    std::memcpy(ip.bytes.data(), &a6, 16);
  }
  return ip;
}

std::string FormatIp(const IpAddress& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ip.version == 4) {
    in_addr a4;
    std::memcpy(&a4, ip.bytes.data(), 4);
    if (inet_ntop(AF_INET, &a4, buf, sizeof(buf)) == nullptr) return "?";
  } else if (ip.version == 6) {
    in6_addr a6;
    std::memcpy(&a6, ip.bytes.data(), 16);
    if (inet_ntop(AF_INET6, &a6, buf, sizeof(buf)) == nullptr) return "?";
  } else {
    return "?";
  }
  return buf;
}

int CompareIp(const IpAddress& a, const IpAddress& b) {
  if (a.version != b.version) return a.version < b.version ? -1 : 1;
  int n = a.version == 4 ? 4 : 16;
  int c = std::memcmp(a.bytes.data(), b.bytes.data(), n);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

IpAddress IpPrefix::Network() const {
  IpAddress net = address;
  int bytes = address.version == 4 ? 4 : 16;
  for (int i = 0; i < bytes; ++i) {
    int bit_start = i * 8;
    if (bit_start >= length) {
      net.bytes[i] = 0;
    } else if (bit_start + 8 > length) {
      int keep = length - bit_start;
      net.bytes[i] &= static_cast<uint8_t>(0xff << (8 - keep));
    }
  }
  return net;
}

bool IpPrefix::HasHostBits() const { return CompareIp(Network(), address) != 0; }

bool IpPrefix::Contains(const IpAddress& ip) const {
  if (ip.version != address.version) return false;
  IpPrefix other{ip, length};
  return CompareIp(other.Network(), Network()) == 0;
}

std::string IpPrefix::ToString() const {
  return FormatIp(Network()) + "/" + std::to_string(length);
}

std::optional<IpPrefix> ParseCidr(std::string_view text) {
  size_t slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto ip = ParseIp(text.substr(0, slash));
  if (!ip) return std::nullopt;
  std::string_view len = text.substr(slash + 1);
  if (len.empty() || len.size() > 3) return std::nullopt;
  if (len.size() > 1 && len[0] == '0') return std::nullopt;  // no leading zeros
  int n = 0;
  for (char c : len) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
  }
  if (n > ip->BitLength()) return std::nullopt;
  return IpPrefix{*ip, n};
}

std::optional<IpRange> ParseIpRange(std::string_view text) {
  size_t dash = text.find('-');
  if (dash == std::string_view::npos) {
    auto ip = ParseIp(text);
    if (!ip) return std::nullopt;
    return IpRange{*ip, *ip};
  }
  auto first = ParseIp(text.substr(0, dash));
  auto last = ParseIp(text.substr(dash + 1));
  if (!first || !last || first->version != last->version) return std::nullopt;
  return IpRange{*first, *last};
}

}  // namespace provisioner::config
