// A PCI function's address (domain, bus, device, function) and the text forms
// it is written in: "0000:af:00.0" as sysfs and every tool print it, the
// short "af:00.0" (domain 0000) that host.yaml selectors accept. Pure.
#ifndef PROVISIONER_ENGINE_MODEL_PCI_ADDRESS_H_
#define PROVISIONER_ENGINE_MODEL_PCI_ADDRESS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

namespace provisioner {

class PciAddress {
 public:
  // "0000:af:00.0" or "af:00.0" (domain 0000), hex digits in either case:
  // what the schema's pciAddress pattern accepts. Nothing else: no "0x", no
  // spaces, exactly four domain digits, two bus and two device digits, one
  // function digit; device 00..1f, function 0..7.
  static std::optional<PciAddress> Parse(std::string_view text);

  // Only the full form "0000:af:00.0" (otherwise as Parse), for text that
  // goes into a path, an argv or a file name as it is (plan targets): the
  // short form would name another path.
  static std::optional<PciAddress> ParseFull(std::string_view text);

  // A device's sysfs directory name: the full form, with the domain as the
  // kernel prints it (%04x), which has more than four digits for VMD
  // domains (10000 and up), never with a leading zero beyond four.
  static std::optional<PciAddress> ParseSysfsName(std::string_view text);

  uint32_t domain() const { return domain_; }
  uint8_t bus() const { return bus_; }
  uint8_t device() const { return device_; }
  uint8_t function() const { return function_; }

  // "0000:af:00.0": lower case, with the domain (the sysfs name).
  std::string ToString() const;

  // By domain, bus, device, function.
  friend bool operator==(const PciAddress& a, const PciAddress& b) { return a.Key() == b.Key(); }
  friend bool operator!=(const PciAddress& a, const PciAddress& b) { return a.Key() != b.Key(); }
  friend bool operator<(const PciAddress& a, const PciAddress& b) { return a.Key() < b.Key(); }
  friend bool operator>(const PciAddress& a, const PciAddress& b) { return a.Key() > b.Key(); }
  friend bool operator<=(const PciAddress& a, const PciAddress& b) { return a.Key() <= b.Key(); }
  friend bool operator>=(const PciAddress& a, const PciAddress& b) { return a.Key() >= b.Key(); }

 private:
  // "bb:dd.f" in `domain`.
  static std::optional<PciAddress> ParseBusDeviceFunction(std::string_view text, uint32_t domain);

  PciAddress(uint32_t domain, uint8_t bus, uint8_t device, uint8_t function)
      : domain_(domain), bus_(bus), device_(device), function_(function) {}

  std::tuple<uint32_t, uint8_t, uint8_t, uint8_t> Key() const {
    return {domain_, bus_, device_, function_};
  }

  uint32_t domain_ = 0;
  uint8_t bus_ = 0;
  uint8_t device_ = 0;
  uint8_t function_ = 0;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_PCI_ADDRESS_H_
