// Fuzz target: PCI configuration space as a function's sysfs `config` file
// gives it (ParsePcieConfig: the capability lists lspci and setpci walk),
// and the Device Control rewrite the pcie module writes back.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "modules/pcie/pcie_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view config(reinterpret_cast<const char*>(data), size);
  auto parsed = provisioner::ParsePcieConfig(config);
  if (!parsed.ok()) {
    // Only a missing header fails, and it says so.
    if (size >= 64 || parsed.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (size < 64) __builtin_trap();
  const provisioner::PcieFunctionFacts& f = *parsed;
  if (f.express_offset) {
    // A standard capability: in 0x40..0xff, dword aligned, Device Control inside the bytes.
    if (*f.express_offset < 0x40 || *f.express_offset > 0xff || (*f.express_offset & 3) != 0 ||
        *f.express_offset + provisioner::kPciExpDeviceControl + 2u > size) {
      __builtin_trap();
    }
    if (f.port_type < 0 || f.port_type > 15) __builtin_trap();
    const int mrrs = f.MaxReadRequest();
    if (mrrs < 128 || mrrs > 16384 || (mrrs & (mrrs - 1)) != 0) __builtin_trap();
    // What maxReadRequest writes: bits 14:12 to 4096 (code 5), the rest kept.
    auto set = provisioner::WithMaxReadRequest(f.device_control, 4096);
    if (!set || ((*set >> 12) & 7) != 5 ||
        (*set & ~provisioner::kPciExpDevCtlReadRequest) !=
            (f.device_control & ~provisioner::kPciExpDevCtlReadRequest)) {
      __builtin_trap();
    }
  } else if (f.port_type != -1 || f.MaxReadRequest() != 0) {
    __builtin_trap();
  }
  if (f.acs_offset) {
    // Extended capabilities: only for PCIe functions with all 4096 bytes.
    if (!f.express_offset || size < provisioner::kPcieConfigSize ||
        *f.acs_offset < provisioner::kPciExtCapStart || (*f.acs_offset & 3) != 0 ||
        *f.acs_offset + provisioner::kPciAcsControl + 2u > size) {
      __builtin_trap();
    }
    // ACS Control as the plan shows it and a saved plan gives it back.
    if (provisioner::ParseHex16(provisioner::Hex16(f.acs_control)) != f.acs_control) {
      __builtin_trap();
    }
  }
  return 0;
}
