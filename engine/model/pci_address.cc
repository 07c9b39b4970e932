#include "engine/model/pci_address.h"

#include <cstdio>

#include "engine/base/strings.h"

namespace provisioner {
namespace {

// `text` all hex digits and 1..8 of them -> its value.
std::optional<uint32_t> Hex(std::string_view text) {
  if (text.empty() || text.size() > 8) return std::nullopt;
  uint32_t v = 0;
  for (char c : text) {
    const int d = HexDigitValue(c);  // no sign, no "0x": not all strtoul takes
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

constexpr size_t kShortSize = 7;  // "bb:dd.f"

}  // namespace

std::optional<PciAddress> PciAddress::Parse(std::string_view text) {
  if (text.size() == kShortSize) return ParseBusDeviceFunction(text, 0);
  return ParseFull(text);
}

std::optional<PciAddress> PciAddress::ParseFull(std::string_view text) {
  if (text.size() != 5 + kShortSize || text[4] != ':') return std::nullopt;
  auto domain = Hex(text.substr(0, 4));
  if (!domain) return std::nullopt;
  return ParseBusDeviceFunction(text.substr(5), *domain);
}

std::optional<PciAddress> PciAddress::ParseSysfsName(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon < 4) return std::nullopt;
  // %04x: more digits only for a domain that needs them.
  if (colon > 4 && text[0] == '0') return std::nullopt;
  auto domain = Hex(text.substr(0, colon));
  if (!domain) return std::nullopt;
  return ParseBusDeviceFunction(text.substr(colon + 1), *domain);
}

std::optional<PciAddress> PciAddress::ParseBusDeviceFunction(std::string_view text,
                                                             uint32_t domain) {
  if (text.size() != kShortSize || text[2] != ':' || text[5] != '.') return std::nullopt;
  auto bus = Hex(text.substr(0, 2));
  auto device = Hex(text.substr(3, 2));
  auto function = Hex(text.substr(6, 1));
  // Five bits of device, three of function: the rest of the 8-bit devfn.
  if (!bus || !device || !function || *device > 0x1f || *function > 7) return std::nullopt;
  return PciAddress(domain, static_cast<uint8_t>(*bus), static_cast<uint8_t>(*device),
                    static_cast<uint8_t>(*function));
}

std::string PciAddress::ToString() const {
  char buf[24];  // "ffffffff:ff:1f.7"
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", static_cast<unsigned>(domain_),
                static_cast<unsigned>(bus_), static_cast<unsigned>(device_),
                static_cast<unsigned>(function_));
  return buf;
}

}  // namespace provisioner
