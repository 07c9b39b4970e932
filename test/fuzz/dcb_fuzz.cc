// Fuzz target: what the roce module parses from outside. The DCB capture
// file (run/provisioner/dcb/<if> under a tree root) and the kernel's dcbnl
// replies (RTM_GETDCB DCB_CMD_IEEE_GET, RTM_SETDCB results): never a crash,
// every refusal says why, and a capture that parses renders back to a
// capture that parses to the same state.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "modules/roce/dcb_netlink.h"
#include "modules/roce/roce_backend.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto capture = provisioner::ParseDcbCapture(text);
  if (capture.ok()) {
    auto again = provisioner::ParseDcbCapture(provisioner::RenderDcbCapture(*capture));
    if (!again.ok() || again->trust != capture->trust || again->pfc != capture->pfc) {
      __builtin_trap();
    }
  } else if (capture.status().message().empty()) {
    __builtin_trap();
  }
  const std::vector<uint8_t> msg(data, data + size);
  auto got = provisioner::dcb::ParseIeeeGetReply(msg);
  if (got.ok()) {
    const provisioner::DcbState s = got->ToState();
    if (s.trust != "dscp" && s.trust != "pcp") __builtin_trap();
    for (int p : s.pfc) {
      if (p < 0 || p > 7) __builtin_trap();
    }
  } else if (got.status().message().empty()) {
    __builtin_trap();
  }
  auto set = provisioner::dcb::ParseSetReply(msg);
  if (!set.ok() && set.message().empty()) __builtin_trap();
  return 0;
}
