// Issue 25 item 10: a nicSelector matching nothing on the host is one rule
// for every nic (CONTRACT §3: an error at plan time, naming the field),
// whatever the nic asks for, and printed once.
#include <string>

#include "gtest/gtest.h"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A nic that asks nothing of a function (only referenced by a macvlan
// config): on main, "No changes" and exit 0.
TEST(SelectorCliTest, NicAskingNothingStillReportsItsSelector) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string yaml = WriteTempFile("ghost.yaml", HostYaml(R"(  nics:
    - name: ghost
      nicSelector: { vendor: "15b3", deviceID: "101d" }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(p.exit_code, 1) << p.out << p.err;
  EXPECT_NE(p.err.find(":8:20: spec.nics[0].nicSelector: selects no PCI function on this host "
                       "(vendor 15b3, deviceID 101d)"),
            std::string::npos)
      << p.err;
}

// A nic that asks for VFs, an MTU, PCIe and firmware settings: one error,
// not one per module (main printed it from sriov, pcie and firmware).
TEST(SelectorCliTest, SelectorMatchingNothingIsPrintedOnce) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string yaml = WriteTempFile("ghost.yaml", HostYaml(R"(  nics:
    - name: ghost
      nicSelector: { pfNames: [nosuch0] }
      numVfs: 4
      mtu: 9000
      pcie: { maxReadRequest: 4096 }
      firmware: { ATS_ENABLED: true }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1) << p.out << p.err;
  EXPECT_EQ(Count(p.err, "selects no PCI function"), 1u) << p.err;
  EXPECT_NE(p.err.find("spec.nics[0].nicSelector: selects no PCI function on this host (pfNames "
                       "[nosuch0])"),
            std::string::npos)
      << p.err;
}

}  // namespace
}  // namespace provisioner::testing
