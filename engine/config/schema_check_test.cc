// The JSON Schema half of validation, through the loader: unknown fields,
// wrong types, bad enums, patterns, ranges, required fields. Each case names
// the exact "file:line:column: path: message".
#include <ostream>
#include <string>
#include <vector>

#include "engine/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner::config {
namespace {

using namespace testing;  // NOLINT: test_util.h's vocabulary
using ::testing::Not;

// A one-NIC spec; `field` is added to the NIC as its last line (line 10).
std::string NicWith(const std::string& field) {
  return VendorNicSpec("nic0", "      " + field + "\n");
}

TEST(SchemaTest, UnknownFieldNamesItAtTheKey) {
  ExpectDiagnoses({
      {NicWith("numVF: 12"),
       ElementsAre("host.yaml:10:7: spec.nics[0].numVF: unknown field \"numVF\" (did you "
                   "mean \"numVfs\"?)")},
      {WithHeader("spec:\n  bogus: 1\n"),
       ElementsAre("host.yaml:6:3: spec.bogus: unknown field \"bogus\"; expected one of: "
                   "agent, firmware, ipPools, kernel, kernelModules, kubernetes, "
                   "multusConfigs, network, nics, pcie, rails, rdma")},
      {WithHeader("spec: {}\nstatus: {}\n"),
       ElementsAre("host.yaml:6:1: status: unknown field \"status\"; expected one of: "
                   "apiVersion, kind, metadata, spec")},
  });
}

TEST(SchemaTest, AgentAutoApplyTakesOnlyLiveAndLinkFlap) {
  ExpectDiagnoses({
      {WithHeader("spec:\n  agent: { autoApply: [live, link-flap] }\n"), IsEmpty()},
      {WithHeader("spec:\n  agent: { autoApply: [] }\n"), IsEmpty()},
      // replace, reboot and firmware are never automatic: not even writable.
      {WithHeader("spec:\n  agent: { autoApply: [live, replace] }\n"), Not(IsEmpty())},
  });
}

TEST(SchemaTest, EveryUnknownFieldIsReported) {
  // valijson names only the first unknown property of an object.
  EXPECT_THAT(Diagnose(NicWith("numVF: 12\n      mtuu: 9000\n      foo: bar")),
              ElementsAre("host.yaml:10:7: spec.nics[0].numVF: unknown field \"numVF\" (did you "
                          "mean \"numVfs\"?)",
                          "host.yaml:11:7: spec.nics[0].mtuu: unknown field \"mtuu\" (did you "
                          "mean \"mtu\"?)",
                          "host.yaml:12:7: spec.nics[0].foo: unknown field \"foo\"; expected one "
                          "of: addresses, deviceType, eswitchMode, firmware, firmwareReset, "
                          "firmwareVersion, ipoib, isRdma, linkType, mtu, name, names, "
                          "nicSelector, numVfs, pcie, resourceName, roce, routing, sysctl, "
                          "vfGroups, vfLinkState, "
                          "vfMac, vfMtu, vfRate, vfSpoofChk, "
                          "vfTrust, vfVlan"));
}

TEST(SchemaTest, PcieFieldsAreCheckedWithTheirPosition) {
  ExpectDiagnoses({
      {WithHeader("spec:\n  pcie:\n    disableAcs: some\n"),
       ElementsAre(::testing::AllOf(::testing::StartsWith("host.yaml:7:17: spec.pcie.disableAcs: "),
                                    ::testing::HasSubstr("gpuNicPaths")))},
      {WithHeader("spec:\n  pcie:\n    disableACS: all\n"),
       ElementsAre(::testing::StartsWith(
           "host.yaml:7:5: spec.pcie.disableACS: unknown field \"disableACS\""))},
  });
}

TEST(SchemaTest, WrongTypes) {
  EXPECT_THAT(Diagnose(WithHeader("spec:\n  nics: {}\n")),
              ElementsAre("host.yaml:6:9: spec.nics: expected a list, got a mapping"));
}

TEST(SchemaTest, NumbersWhereStringsBelongSayHowToQuote) {
  EXPECT_THAT(Diagnose(WithHeader("spec:\n"
                                  "  nics:\n"
                                  "    - name: nic0\n"
                                  "      nicSelector:\n"
                                  "        deviceID: 1017\n")),
              ElementsAre("host.yaml:9:19: spec.nics[0].nicSelector.deviceID: expected a "
                          "string, got integer 1017 (quote it: \"1017\")"));
}

TEST(SchemaTest, BadEnums) {
  EXPECT_THAT(Diagnose(WithHeader("spec:\n  rdma:\n    netnsMode: private\n")),
              ElementsAre("host.yaml:7:16: spec.rdma.netnsMode: \"private\" is not one of: "
                          "shared, exclusive"));
}

TEST(SchemaTest, ApiVersionAndKindAreFixed) {
  ExpectDiagnoses({
      {"apiVersion: v1\nkind: HostConfig\nmetadata: {name: a}\nspec: {}\n",
       ElementsAre("host.yaml:1:13: apiVersion: must be \"provisioner/v1alpha1\", got "
                   "\"v1\"")},
      {"apiVersion: provisioner/v1alpha1\nkind: Pod\nmetadata: {name: a}\n"
       "spec: {}\n",
       ElementsAre("host.yaml:2:7: kind: must be \"HostConfig\", got \"Pod\"")},
  });
}

TEST(SchemaTest, RequiredFields) {
  ExpectDiagnoses({
      {"kind: HostConfig\nspec: {}\n",
       ElementsAre("host.yaml:1:1: missing required field \"apiVersion\"",
                   "host.yaml:1:1: missing required field \"metadata\"")},
      {WithHeader("spec:\n  nics:\n    - numVfs: 1\n"),
       ElementsAre("host.yaml:7:7: spec.nics[0]: missing required field \"name\"",
                   "host.yaml:7:7: spec.nics[0]: missing required field \"nicSelector\"")},
  });
}

TEST(SchemaTest, Patterns) {
  ExpectDiagnoses({
      {"apiVersion: provisioner/v1alpha1\nkind: HostConfig\n"
       "metadata: {name: Worker_1}\nspec: {}\n",
       ElementsAre("host.yaml:3:18: metadata.name: \"Worker_1\" is not a DNS-1123 "
                   "subdomain (dot-separated DNS-1123 labels: lower-case letters, digits "
                   "and '-')")},
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - name: Nic_0\n"
                  "      nicSelector:\n"
                  "        vendor: \"0x15b3\"\n"
                  "        rootDevices: [\"0000:af:00.8\", \"af:00.0\"]\n"),
       ElementsAre("host.yaml:7:13: spec.nics[0].name: \"Nic_0\" is not a DNS-1123 label "
                   "(lower-case letters, digits and '-', starting and ending with a "
                   "letter or digit)",
                   "host.yaml:9:17: spec.nics[0].nicSelector.vendor: \"0x15b3\" is not 4 "
                   "hex digits without 0x, like \"15b3\"",
                   "host.yaml:10:23: spec.nics[0].nicSelector.rootDevices[0]: "
                   "\"0000:af:00.8\" is not a PCI address DDDD:BB:DD.F (domain optional), "
                   "like \"0000:af:00.0\" (the function is 0\u20137, not 8)")},
  });
}

TEST(SchemaTest, EmptySelectorAndLists) {
  ExpectDiagnoses({
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - name: nic0\n"
                  "      nicSelector: {}\n"),
       ElementsAre("host.yaml:8:20: spec.nics[0].nicSelector: must not be empty: set at "
                   "least one of deviceID, nearGpu, pfNames, rootDevices, vendor")},
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - name: nic0\n"
                  "      nicSelector: {pfNames: []}\n"),
       ElementsAre("host.yaml:8:30: spec.nics[0].nicSelector.pfNames: must not be "
                   "empty")},
  });
}

TEST(SchemaTest, KernelModulesAreStringsOrMappings) {
  ExpectDiagnoses({
      {WithHeader("spec:\n"
                  "  kernelModules:\n"
                  "    - mlx5_ib\n"
                  "    - {name: nvidia_peermem, required: false}\n"),
       IsEmpty()},
      {WithHeader("spec:\n"
                  "  kernelModules:\n"
                  "    - mlx5/ib\n"
                  "    - {name: x, required: maybe}\n"
                  "    - {nmae: x}\n"
                  "    - [x]\n"),
       ElementsAre("host.yaml:7:7: spec.kernelModules[0]: \"mlx5/ib\" is not a kernel "
                   "module name (letters, digits, '_' and '-')",
                   "host.yaml:8:27: spec.kernelModules[1].required: expected a boolean "
                   "(true or false), got string \"maybe\"",
                   "host.yaml:9:7: spec.kernelModules[2]: missing required field "
                   "\"name\"",
                   "host.yaml:9:8: spec.kernelModules[2].nmae: unknown field \"nmae\" "
                   "(did you mean \"name\"?)",
                   "host.yaml:10:7: spec.kernelModules[3]: expected a string or a "
                   "mapping, got a list")},
  });
}

TEST(SchemaTest, NodeSelectorValuesAreLabelValues) {
  EXPECT_THAT(Diagnose(WithHeader("spec:\n"
                                  "  kubernetes:\n"
                                  "    nodeSelector:\n"
                                  "      kubernetes.io/os: linux\n"
                                  "      rdma: true\n"
                                  "      zone: \"not ok!\"\n")),
              ElementsAre("host.yaml:9:13: spec.kubernetes.nodeSelector.rdma: expected a "
                          "string, got boolean true (quote it: \"true\")",
                          "host.yaml:10:13: spec.kubernetes.nodeSelector.zone: \"not ok!\" is "
                          "not a Kubernetes label value (at most 63 letters, digits, '-', '_' "
                          "or '.', starting and ending with a letter or digit)"));
}

TEST(SchemaTest, LengthBeatsPatternOnTheSameField) {
  std::string name(70, 'a');
  EXPECT_THAT(Diagnose(NicWith("resourceName: " + name)),
              ElementsAre("host.yaml:10:21: spec.nics[0].resourceName: \"" + std::string(64, 'a') +
                          "...\" is longer than 63 characters"));
}

// One field on the one NIC of NicWith (line 10) and what validation says of
// it: nothing, or one diagnostic naming the field's position.
struct NicFieldCase {
  std::string field;
  ::testing::Matcher<const std::vector<std::string>&> says;
};

void PrintTo(const NicFieldCase& c, std::ostream* os) { *os << c.field; }

// The one diagnostic, with its "file:line:column: path: " and a word of it.
::testing::Matcher<const std::vector<std::string>&> One(const std::string& at,
                                                        const std::string& word = "") {
  return ElementsAre(::testing::AllOf(::testing::StartsWith(at), ::testing::HasSubstr(word)));
}

class NicFieldTest : public ::testing::TestWithParam<NicFieldCase> {};

TEST_P(NicFieldTest, SaysWhatTheSchemaSaysOfIt) {
  EXPECT_THAT(Diagnose(NicWith(GetParam().field)), GetParam().says);
}

INSTANTIATE_TEST_SUITE_P(
    Valid, NicFieldTest,
    ::testing::Values(
        NicFieldCase{"numVfs: 12", IsEmpty()}, NicFieldCase{"mtu: 9000", IsEmpty()},
        NicFieldCase{"linkType: ib", IsEmpty()},
        NicFieldCase{"resourceName: gpu1_sriov", IsEmpty()},
        NicFieldCase{"numVfs: 2048", IsEmpty()}, NicFieldCase{"mtu: 68", IsEmpty()},
        NicFieldCase{"pcie: { maxReadRequest: 4096 }", IsEmpty()},
        NicFieldCase{"ipoib: { mode: datagram, mtu: 2044, pkeys: [\"0x8001\"] }", IsEmpty()},
        // "8001" is hex without the 0x (engine/config/pkey.h).
        NicFieldCase{"ipoib: { pkeys: [\"8001\"] }", IsEmpty()},
        NicFieldCase{"roce: { trust: dscp, pfc: [3], ecn: [3, 4] }", IsEmpty()},
        // eswitchMode (issue 28 item 5): the two devlink modes.
        NicFieldCase{"eswitchMode: switchdev", IsEmpty()},
        NicFieldCase{"eswitchMode: legacy", IsEmpty()},
        NicFieldCase{"firmware: { ATS_ENABLED: true, NUM_OF_VFS: 16, LINK_TYPE_P1: ETH }",
                     IsEmpty()}));

INSTANTIATE_TEST_SUITE_P(
    WrongTypes, NicFieldTest,
    ::testing::Values(
        NicFieldCase{"numVfs: abc", ElementsAre("host.yaml:10:15: spec.nics[0].numVfs: expected "
                                                "an integer, got string \"abc\"")},
        NicFieldCase{"numVfs: \"12\"",
                     ElementsAre("host.yaml:10:15: spec.nics[0].numVfs: expected an integer, got "
                                 "string \"12\" (remove the quotes: 12)")},
        NicFieldCase{"mtu: 9000.5", ElementsAre("host.yaml:10:12: spec.nics[0].mtu: expected an "
                                                "integer, got number 9000.5")},
        NicFieldCase{"isRdma: yes", ElementsAre("host.yaml:10:15: spec.nics[0].isRdma: expected a "
                                                "boolean (true or false), got string \"yes\"")},
        NicFieldCase{"numVfs:", ElementsAre("host.yaml:10:7: spec.nics[0].numVfs: expected an "
                                            "integer, got no value")},
        NicFieldCase{"resourceName: [a]", ElementsAre("host.yaml:10:21: spec.nics[0].resourceName: "
                                                      "expected a string, got a list")}));

INSTANTIATE_TEST_SUITE_P(
    BadValues, NicFieldTest,
    ::testing::Values(
        NicFieldCase{"linkType: roce", ElementsAre("host.yaml:10:17: spec.nics[0].linkType: "
                                                   "\"roce\" is not one of: eth, ib")},
        NicFieldCase{"deviceType: vfio",
                     ElementsAre("host.yaml:10:19: spec.nics[0].deviceType: "
                                 "\"vfio\" is not one of: netdevice, vfio-pci")},
        NicFieldCase{"eswitchMode: offloads",
                     ElementsAre("host.yaml:10:20: spec.nics[0].eswitchMode: \"offloads\" is not "
                                 "one of: legacy, switchdev")},
        NicFieldCase{"resourceName: gpu1-sriov",
                     ElementsAre("host.yaml:10:21: spec.nics[0].resourceName: \"gpu1-sriov\" is "
                                 "not a device-plugin resource name (letters, digits and '_', no "
                                 "prefix)")},
        NicFieldCase{"numVfs: 3000",
                     ElementsAre("host.yaml:10:15: spec.nics[0].numVfs: 3000 exceeds the maximum "
                                 "2048")},
        NicFieldCase{"numVfs: -1", ElementsAre("host.yaml:10:15: spec.nics[0].numVfs: -1 is below "
                                               "the minimum 0")},
        NicFieldCase{"mtu: 0x10", ElementsAre("host.yaml:10:12: spec.nics[0].mtu: 0x10 is below "
                                              "the minimum 68")},
        NicFieldCase{"firmware: { ATS_ENABLED: \"on; reboot\" }",
                     ElementsAre("host.yaml:10:32: spec.nics[0].firmware.ATS_ENABLED: \"on; "
                                 "reboot\" is not true/false, a number, or mstconfig's name of a "
                                 "value (ETH, IB, ...)")}));

// pcie, ipoib and roce: each field checked with its position.
INSTANTIATE_TEST_SUITE_P(
    PcieIpoibRoce, NicFieldTest,
    ::testing::Values(
        // Not a power of two in 128..4096.
        NicFieldCase{"pcie: { maxReadRequest: 300 }",
                     One("host.yaml:10:31: spec.nics[0].pcie.maxReadRequest: ", "4096")},
        NicFieldCase{"ipoib: { mode: ud }",
                     One("host.yaml:10:22: spec.nics[0].ipoib.mode: ", "connected")},
        NicFieldCase{"ipoib: { mtu: 70000 }", One("host.yaml:10:21: spec.nics[0].ipoib.mtu: ")},
        // "80x1" is no partition key at all.
        NicFieldCase{"ipoib: { pkeys: [\"80x1\"] }",
                     One("host.yaml:10:24: spec.nics[0].ipoib.pkeys[0]: ", "partition key")},
        NicFieldCase{"ipoib: { pkey: [\"0x8001\"] }",
                     One("host.yaml:10:16: spec.nics[0].ipoib.pkey: unknown field \"pkey\"")},
        NicFieldCase{"roce: { trust: dscp, pfc: [8] }",
                     One("host.yaml:10:34: spec.nics[0].roce.pfc[0]: ")},
        NicFieldCase{"roce: { trust: l2 }",
                     One("host.yaml:10:22: spec.nics[0].roce.trust: ", "dscp")},
        NicFieldCase{"roce: { ecn: 3 }", One("host.yaml:10:20: spec.nics[0].roce.ecn: ")}));

}  // namespace
}  // namespace provisioner::config
