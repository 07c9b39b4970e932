#include "modules/pcie/pcie_config.h"

#include <cstdio>

#include "engine/base/strings.h"

namespace provisioner {
namespace {

uint8_t U8(std::string_view c, size_t off) { return static_cast<uint8_t>(c[off]); }
uint16_t U16(std::string_view c, size_t off) {
  return static_cast<uint16_t>(U8(c, off) | (U8(c, off + 1) << 8));
}
uint32_t U32(std::string_view c, size_t off) {
  return static_cast<uint32_t>(U16(c, off)) | (static_cast<uint32_t>(U16(c, off + 2)) << 16);
}

constexpr size_t kHeaderSize = 0x40;

}  // namespace

StatusOr<PcieFunctionFacts> ParsePcieConfig(std::string_view config) {
  if (config.size() < kHeaderSize) {
    return InvalidArgumentError("config space truncated: " + std::to_string(config.size()) +
                                " bytes, the header alone is 64");
  }
  PcieFunctionFacts f;
  if ((U16(config, kPciStatus) & kPciStatusCapList) != 0) {
    // Standard list: at most 48 capabilities fit in 0x40..0xff (4 bytes each).
    size_t pos = U8(config, kPciCapabilityPointer) & 0xfc;
    for (int guard = 0; guard < 48 && pos >= kHeaderSize && pos < 0x100; ++guard) {
      if (pos + 2 > config.size()) {
        f.express_not_captured = true;  // the list goes on past the bytes read
        break;
      }
      const uint8_t id = U8(config, pos);
      if (id == 0xff) break;
      if (id == kPciCapIdExpress) {
        if (pos + kPciExpDeviceControl + 2 > config.size()) {
          f.express_not_captured = true;
          break;
        }
        f.express_offset = static_cast<uint16_t>(pos);
        f.port_type = (U16(config, pos + kPciExpFlags) >> 4) & 0xf;
        f.device_control = U16(config, pos + kPciExpDeviceControl);
        break;
      }
      pos = U8(config, pos + 1) & 0xfc;
    }
  }
  // Extended capabilities exist only for PCI Express functions.
  if (!f.express_offset || config.size() < kPcieConfigSize) return f;
  size_t pos = kPciExtCapStart;
  // At most (4096 - 256) / 4 headers fit; a loop ends at the guard.
  for (int guard = 0; guard < 960 && pos >= kPciExtCapStart && pos + 4 <= config.size(); ++guard) {
    const uint32_t header = U32(config, pos);
    if (header == 0 || header == 0xffffffffu) break;
    const uint16_t id = static_cast<uint16_t>(header & 0xffff);
    if (id == kPciExtCapIdAcs && pos + kPciAcsControl + 2 <= config.size()) {
      f.acs_offset = static_cast<uint16_t>(pos);
      f.acs_capability = U16(config, pos + kPciAcsCapability);
      f.acs_control = U16(config, pos + kPciAcsControl);
      break;
    }
    pos = (header >> 20) & 0xffc;
  }
  return f;
}

uint16_t AcsControlFor(IommuMode mode, uint16_t capability, uint16_t control) {
  if (mode == IommuMode::kOff || mode == IommuMode::kPassthrough) return 0;
  constexpr uint16_t kKept = kPciAcsSourceValidation | kPciAcsRequestRedirect |
                             kPciAcsCompletionRedirect | kPciAcsUpstreamForwarding;
  return static_cast<uint16_t>((control & kKept) | (capability & kPciAcsDirectTranslated));
}

std::optional<uint16_t> WithMaxReadRequest(uint16_t device_control, int bytes) {
  for (int code = 0; code <= 5; ++code) {
    if ((128 << code) == bytes) {
      return static_cast<uint16_t>((device_control & ~kPciExpDevCtlReadRequest) | (code << 12));
    }
  }
  return std::nullopt;
}

std::string Le16(uint16_t v) {
  std::string s(2, '\0');
  s[0] = static_cast<char>(v & 0xff);
  s[1] = static_cast<char>(v >> 8);
  return s;
}

std::string Hex16(uint16_t v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%04x", v);
  return buf;
}

std::optional<uint16_t> ParseHex16(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 4) return std::nullopt;
  unsigned v = 0;
  for (char c : s) {
    const int d = HexDigitValue(c);
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<unsigned>(d);
  }
  return static_cast<uint16_t>(v);
}

}  // namespace provisioner
