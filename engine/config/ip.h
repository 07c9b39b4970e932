// IPv4/IPv6 addresses, CIDR prefixes and "first-last" ranges as host.yaml
// writes them (SpiderIPPool syntax). Pure: parsing uses inet_pton only.
#ifndef PROVISIONER_ENGINE_CONFIG_IP_H_
#define PROVISIONER_ENGINE_CONFIG_IP_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace provisioner::config {

struct IpAddress {
  int version = 0;                  // 4 or 6
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 uses the first 4

  int BitLength() const { return version == 4 ? 32 : 128; }
};

// "172.16.11.1" or "fd00::1". No zone ids, no surrounding spaces, no leading
// zeros in IPv4 octets.
std::optional<IpAddress> ParseIp(std::string_view text);

// Canonical text (inet_ntop).
std::string FormatIp(const IpAddress& ip);

// Orders addresses of the same version numerically; IPv4 sorts before IPv6.
int CompareIp(const IpAddress& a, const IpAddress& b);

struct IpPrefix {
  IpAddress address;  // as written (host bits may be set)
  int length = 0;     // 0..32 or 0..128

  // The address with the host bits cleared.
  IpAddress Network() const;
  bool HasHostBits() const;
  // True when `ip` has the same version and lies inside the prefix.
  bool Contains(const IpAddress& ip) const;
  // "172.16.0.0/16" (the network, not the address as written).
  std::string ToString() const;
};

// "172.16.11.0/24" or "fd00:11::/64".
std::optional<IpPrefix> ParseCidr(std::string_view text);

struct IpRange {
  IpAddress first;
  IpAddress last;  // == first for a single address
};

// "172.16.11.1-172.16.11.200" or a single address "172.16.11.7". Both ends
// must parse and be of the same version; first <= last is NOT checked here.
std::optional<IpRange> ParseIpRange(std::string_view text);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_IP_H_
