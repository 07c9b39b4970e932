// Fuzz target: /proc/modules, modules.dep and modules-load.d parsers (the
// kmod module reads them from the host or a captured tree).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "modules/kmod/kmod_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto loaded = provisioner::ParseProcModules(text);
  if (loaded.ok()) {
    for (const auto& m : *loaded) {
      if (m.name.empty()) __builtin_trap();  // a parsed module has a name
    }
  } else if (loaded.status().message().empty()) {
    __builtin_trap();
  }
  (void)provisioner::ParseModulesDep(text);
  for (const auto& name : provisioner::ParseModulesLoad(text)) {
    if (name.empty()) __builtin_trap();
  }
  return 0;
}
