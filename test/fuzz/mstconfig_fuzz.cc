// Fuzz target: `mstconfig -d <BDF> query` output (a captured file under a
// tree root, or the tool's stdout) and the next-boot rewriter used as the
// tree-root stand-in for `mstconfig set`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "modules/firmware/mstconfig_query.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = provisioner::ParseMstconfigQuery(text);
  if (!q.ok()) {
    if (q.status().message().empty()) __builtin_trap();
    return 0;
  }
  for (const auto& [name, param] : q->params) {
    (void)provisioner::MstconfigValueNumber(param.next_boot);
    if (param.current) (void)provisioner::MstconfigValueNumber(*param.current);
  }
  // Setting LINK_TYPE_P1 where the query has it: the result parses, and says 2.
  if (q->params.count("LINK_TYPE_P1") != 0) {
    auto set = provisioner::SetNextBootValues(text, {{"LINK_TYPE_P1", 2}});
    if (set.ok()) {
      auto again = provisioner::ParseMstconfigQuery(*set);
      if (!again.ok()) __builtin_trap();
      auto it = again->params.find("LINK_TYPE_P1");
      if (it == again->params.end() ||
          provisioner::MstconfigValueNumber(it->second.next_boot) != 2) {
        __builtin_trap();
      }
    }
  }
  // ADVANCED_PCI_SETTINGS=1 reveals the hidden PCI parameters: the result
  // parses and lists MAX_ACC_OUT_READ.
  if (q->params.count("ADVANCED_PCI_SETTINGS") != 0) {
    auto set = provisioner::SetNextBootValues(text, {{"ADVANCED_PCI_SETTINGS", 1}});
    const size_t first = text.find_first_not_of(" \t\r\n");
    if (set.ok() && first != std::string_view::npos && text[first] != '{') {  // text, not JSON
      auto again = provisioner::ParseMstconfigQuery(*set);
      if (!again.ok() || again->params.count("MAX_ACC_OUT_READ") == 0) __builtin_trap();
    }
  }
  return 0;
}
