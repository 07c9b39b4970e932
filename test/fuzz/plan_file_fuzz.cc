// Fuzz target: the saved-plan reader (apply PLANFILE) must never crash or
// throw on any bytes: a file is a plan, not a plan, or a named error.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/plan/change.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto p = provisioner::ParseSavedPlan(text);
  if (p.ok() && p->has_value()) {
    // What was read writes back as records that read again identically.
    for (const auto& c : (*p)->changes) {
      auto again = provisioner::ParseChangeRecord(provisioner::ChangeToRecord(c));
      if (!again.ok() || provisioner::ChangeToRecord(*again) != provisioner::ChangeToRecord(c)) {
        __builtin_trap();
      }
    }
  } else if (!p.ok() && p.status().message().empty()) {
    __builtin_trap();  // an error must say what is wrong
  }
  return 0;
}
