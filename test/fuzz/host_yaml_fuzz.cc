// Fuzz target: host.yaml parsing, schema validation and semantic checks must
// never crash, hang or leak on any input; they return diagnostics.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/config/loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  provisioner::LoadResult r = provisioner::LoadDesiredStateFromString(text, "fuzz.yaml");
  // Either a state or at least one error: never neither.
  if (!r.state && !provisioner::HasErrors(r.diagnostics)) __builtin_trap();
  return 0;
}
