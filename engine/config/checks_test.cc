// The semantic rules, one test each with a good and a bad case; every bad
// case names the exact "file:line:column: path: message".
#include "engine/config/checks.h"

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "engine/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner::config {
namespace {

using namespace testing;  // NOLINT: test_util.h's vocabulary

// Two RoCE NICs (lines 6-18), two pools (19-25) and `multus` (from line 26,
// list items of spec.multusConfigs), under netnsMode `mode` (line 29+).
std::string Spec(const std::string& multus, const std::string& mode = "shared") {
  return WithHeader(
      "spec:\n"                                           // 5
      "  nics:\n"                                         // 6
      "    - name: eth-nic\n"                             // 7
      "      nicSelector: {pfNames: [ens6f0np0]}\n"       // 8
      "      linkType: eth\n"                             // 9
      "      numVfs: 4\n"                                 // 10
      "      resourceName: ethsriov\n"                    // 11
      "    - name: ib-nic\n"                              // 12
      "      nicSelector: {pfNames: [ibs5f0]}\n"          // 13
      "      linkType: ib\n"                              // 14
      "      numVfs: 4\n"                                 // 15
      "      resourceName: ibsriov\n"                     // 16
      "    - name: plain-nic\n"                           // 17
      "      nicSelector: {vendor: \"8086\"}\n"           // 18
      "  ipPools:\n"                                      // 19
      "    - name: v4\n"                                  // 20
      "      subnet: 10.1.0.0/24\n"                       // 21
      "      ips: [10.1.0.10-10.1.0.20]\n"                // 22
      "    - name: v6\n"                                  // 23
      "      subnet: fd00:1::/64\n"                       // 24
      "      ips: [\"fd00:1::10-fd00:1::20\"]\n"          // 25
      "  rdma:\n"                                         // 26
      "    netnsMode: " + mode + "\n"                     // 27
      "  multusConfigs:\n"                                // 28
      + multus);                                          // 29...
}

TEST(ChecksTest, BaseSpecIsClean) {
  EXPECT_THAT(Diagnose(Spec("    - {name: a, cniType: macvlan, nic: eth-nic}\n")), IsEmpty());
}

// Issue 26 item 11: a value that becomes a label (rdmaResourceInject on the
// multus config and its pods) or a selector value is checked at validate
// time by Kubernetes' rule, naming the field; the API server refused it.
TEST(ChecksTest, LabelValuesAreKubernetesLabelValues) {
  EXPECT_THAT(Diagnose(Spec("    - {name: a, cniType: macvlan, nic: eth-nic, "
                            "rdmaResourceInject: gpu-network}\n")),
              IsEmpty());
  auto d =
      Diagnose(Spec("    - {name: a, cniType: macvlan, nic: eth-nic, "
                    "rdmaResourceInject: \"gpu network!\"}\n"));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].find("spec.multusConfigs[0].rdmaResourceInject"), std::string::npos) << d[0];
  EXPECT_NE(d[0].find("is not a valid Kubernetes label value"), std::string::npos) << d[0];
  auto sel =
      Diagnose(WithHeader("spec:\n  kubernetes:\n    nodeSelector: {kubernetes.io/os: "
                          "\"-linux\"}\n"));
  ASSERT_EQ(sel.size(), 1u);
  EXPECT_NE(sel[0].find("spec.kubernetes.nodeSelector.kubernetes.io/os"), std::string::npos)
      << sel[0];
  EXPECT_TRUE(IsLabelValue(""));
  EXPECT_TRUE(IsLabelValue("a.b_c-D9"));
  EXPECT_FALSE(IsLabelValue(std::string(64, 'a')));
  EXPECT_FALSE(IsLabelValue("a/b"));
}

TEST(ChecksTest, DuplicateNicNames) {
  ExpectDiagnoses({
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - {name: a, nicSelector: {vendor: \"15b3\"}}\n"
                  "    - {name: b, nicSelector: {vendor: \"15b3\"}}\n"),
       IsEmpty()},
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - {name: a, nicSelector: {vendor: \"15b3\"}}\n"
                  "    - {name: a, nicSelector: {vendor: \"15b3\"}}\n"),
       ElementsAre("host.yaml:8:14: spec.nics[1].name: duplicate nic name "
                   "\"a\" (first at spec.nics[0].name, line 7)")},
  });
}

// Two nics naming one PF would both set its VFs and both publish it as a
// resource (the operator's webhook rejects two such policies).
TEST(ChecksTest, NicsNamingTheSamePf) {
  ExpectDiagnoses({
      {WithHeader(
           "spec:\n"
           "  nics:\n"
           "    - {name: a, nicSelector: {rootDevices: [\"0000:af:00.0\"], pfNames: [ens1]}}\n"
           "    - {name: b, nicSelector: {rootDevices: [\"0000:af:00.1\"], pfNames: [ens2]}}\n"),
       IsEmpty()},
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - {name: a, nicSelector: {rootDevices: [\"0000:af:00.0\"]}}\n"
                  "    - {name: b, nicSelector: {rootDevices: [\"0000:3b:00.0\", \"AF:00.0\"]}}\n"),
       ElementsAre("host.yaml:8:61: spec.nics[1].nicSelector.rootDevices[1]: \"0000:af:00.0\" "
                   "is also selected by spec.nics[0], line 7 (a): two nics cannot share a "
                   "PF (each would set its VFs and publish it as its own resource)")},
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - {name: a, nicSelector: {pfNames: [ens1]}}\n"
                  "    - {name: b, nicSelector: {vendor: \"15b3\", pfNames: [ens1]}}\n"),
       ElementsAre("host.yaml:8:57: spec.nics[1].nicSelector.pfNames[0]: \"ens1\" is "
                   "also selected by spec.nics[0], line 7 (a): two nics cannot share a PF "
                   "(each would set its VFs and publish it as its own resource)")},
  });
}

TEST(ChecksTest, DuplicatePoolNames) {
  EXPECT_THAT(Diagnose(WithHeader("spec:\n"
                                  "  ipPools:\n"
                                  "    - {name: p, subnet: 10.0.0.0/24}\n"
                                  "    - {name: p, subnet: 10.0.1.0/24}\n")),
              ElementsAre("host.yaml:8:14: spec.ipPools[1].name: duplicate "
                          "ipPool name \"p\" (first at spec.ipPools[0].name, line "
                          "7)"));
}

TEST(ChecksTest, DuplicateMultusConfigsByNamespaceAndName) {
  // Same name in two namespaces is fine; in one namespace it is not.
  ExpectDiagnoses({
      {Spec("    - {name: a, namespace: x, cniType: macvlan, nic: eth-nic}\n"
            "    - {name: a, namespace: y, cniType: macvlan, nic: eth-nic}\n"),
       IsEmpty()},
      {Spec("    - {name: a, cniType: macvlan, nic: eth-nic}\n"
            "    - {name: a, namespace: default, cniType: ipvlan, nic: eth-nic}\n"),
       ElementsAre("host.yaml:30:14: spec.multusConfigs[1].name: duplicate multus config "
                   "\"default/a\" (first at spec.multusConfigs[0].name, line 29)")},
  });
}

TEST(ChecksTest, DuplicateKernelModules) {
  ExpectDiagnoses({
      {WithHeader("spec:\n  kernelModules: [mlx5_ib, rdma_ucm]\n"), IsEmpty()},
      // kmod treats '-' and '_' alike.
      {WithHeader("spec:\n"
                  "  kernelModules:\n"
                  "    - mlx5_ib\n"
                  "    - {name: mlx5-ib, required: false}\n"),
       ElementsAre("host.yaml:8:7: spec.kernelModules[1]: kernel module \"mlx5-ib\" is "
                   "listed twice (first at spec.kernelModules[0], line 7)")},
  });
}

TEST(ChecksTest, NicReferenceMustResolve) {
  ExpectDiagnoses({
      {Spec("    - {name: a, cniType: macvlan, nic: eth-nic}\n"), IsEmpty()},
      {Spec("    - {name: a, cniType: macvlan, nic: gpu1-nic}\n"),
       ElementsAre("host.yaml:29:40: spec.multusConfigs[0].nic: nic \"gpu1-nic\" names "
                   "no NIC in spec.nics (defined: eth-nic, ib-nic, plain-nic)")},
  });
}

TEST(ChecksTest, PoolReferencesMustResolve) {
  ExpectDiagnoses({
      {Spec("    - name: a\n"
            "      cniType: macvlan\n"
            "      nic: eth-nic\n"
            "      ippools: {ipv4: [v4], ipv6: [v6]}\n"),
       IsEmpty()},
      {Spec("    - name: a\n"
            "      cniType: macvlan\n"
            "      nic: eth-nic\n"
            "      ippools: {ipv4: [v4, nope]}\n"),
       ElementsAre("host.yaml:32:28: spec.multusConfigs[0].ippools.ipv4[1]: ippool "
                   "\"nope\" names no pool in spec.ipPools (defined: v4, v6)")},
  });
}

TEST(ChecksTest, PoolFamilyMustMatchTheList) {
  EXPECT_THAT(Diagnose(Spec("    - name: a\n"
                            "      cniType: macvlan\n"
                            "      nic: eth-nic\n"
                            "      ippools: {ipv4: [v6], ipv6: [v4]}\n")),
              ElementsAre("host.yaml:32:24: spec.multusConfigs[0].ippools.ipv4[0]: ippool \"v6\" "
                          "is IPv6 (subnet fd00:1::/64) but is listed under ipv4",
                          "host.yaml:32:36: spec.multusConfigs[0].ippools.ipv6[0]: ippool \"v4\" "
                          "is IPv4 (subnet 10.1.0.0/24) but is listed under ipv6"));
}

// A pool with `lines` after "subnet: 10.1.0.0/24" (line 8).
std::string Pool(const std::string& lines) {
  return WithHeader("spec:\n"
                    "  ipPools:\n"
                    "    - name: p\n"
                    "      subnet: 10.1.0.0/24\n" +
                    lines);
}

TEST(ChecksTest, IpsMustBeInsideTheSubnet) {
  ExpectDiagnoses({
      {Pool("      ips: [10.1.0.1-10.1.0.254, 10.1.0.255]\n"), IsEmpty()},
      {Pool("      ips:\n"
            "        - 10.1.0.1-10.1.1.20\n"
            "        - 10.2.0.1-10.1.0.9\n"
            "        - 10.1.3.7\n"
            "        - fd00::1\n"
            "        - 10.1.0.1 - 10.1.0.2\n"),
       ElementsAre("host.yaml:10:11: spec.ipPools[0].ips[0]: range end 10.1.1.20 is "
                   "outside subnet 10.1.0.0/24",
                   "host.yaml:11:11: spec.ipPools[0].ips[1]: range \"10.2.0.1-10.1.0.9\" "
                   "starts after it ends",
                   "host.yaml:12:11: spec.ipPools[0].ips[2]: 10.1.3.7 is outside subnet "
                   "10.1.0.0/24",
                   "host.yaml:13:11: spec.ipPools[0].ips[3]: \"fd00::1\" is IPv6 but "
                   "subnet 10.1.0.0/24 is IPv4",
                   "host.yaml:14:11: spec.ipPools[0].ips[4]: \"10.1.0.1 - 10.1.0.2\" is "
                   "not an IP address or a range \"first-last\" of one IP version")},
  });
}

TEST(ChecksTest, RangeStartMustNotBeAfterItsEnd) {
  ExpectDiagnoses({
      {Pool("      ips: [10.1.0.5-10.1.0.5]\n"), IsEmpty()},
      {Pool("      ips: [10.1.0.9-10.1.0.1]\n"),
       ElementsAre("host.yaml:9:13: spec.ipPools[0].ips[0]: range \"10.1.0.9-10.1.0.1\" "
                   "starts after it ends")},
  });
}

TEST(ChecksTest, ExcludeIpsMustBeInsideTheSubnet) {
  ExpectDiagnoses({
      {Pool("      excludeIPs: [10.1.0.100]\n"), IsEmpty()},
      {Pool("      excludeIPs: [10.1.0.100-10.1.9.1]\n"),
       ElementsAre("host.yaml:9:20: spec.ipPools[0].excludeIPs[0]: range end 10.1.9.1 is "
                   "outside subnet 10.1.0.0/24")},
  });
}

TEST(ChecksTest, GatewayMustBeInsideTheSubnet) {
  ExpectDiagnoses({
      {Pool("      gateway: 10.1.0.254\n"), IsEmpty()},
      {Pool("      gateway: 10.1.1.254\n"),
       ElementsAre("host.yaml:9:16: spec.ipPools[0].gateway: gateway 10.1.1.254 is "
                   "outside subnet 10.1.0.0/24")},
      {Pool("      gateway: fd00::1\n"),
       ElementsAre("host.yaml:9:16: spec.ipPools[0].gateway: gateway fd00::1 is IPv6 but "
                   "subnet 10.1.0.0/24 is IPv4")},
      {Pool("      gateway: 10.1.0\n"),
       ElementsAre("host.yaml:9:16: spec.ipPools[0].gateway: \"10.1.0\" is not an IP "
                   "address")},
  });
}

TEST(ChecksTest, SubnetMustBeACidr) {
  ExpectDiagnoses({
      {WithHeader("spec:\n  ipPools:\n    - {name: p, subnet: \"fd00:11::/64\"}\n"), IsEmpty()},
      {WithHeader("spec:\n  ipPools:\n    - {name: p, subnet: 10.1.0.0}\n"),
       ElementsAre("host.yaml:7:25: spec.ipPools[0].subnet: \"10.1.0.0\" is not a subnet "
                   "in CIDR notation, like 172.16.11.0/24 or fd00:11::/64")},
      // Host bits: allowed (the guides write 172.16.11.0/16), but said.
      {WithHeader("spec:\n  ipPools:\n    - {name: p, subnet: 172.16.11.0/16}\n"),
       ElementsAre("host.yaml:7:25: warning: spec.ipPools[0].subnet: \"172.16.11.0/16\" "
                   "has host bits set; the subnet is 172.16.0.0/16")},
  });
}

TEST(ChecksTest, PkeyOnlyOnIbSriov) {
  ExpectDiagnoses({
      {Spec("    - {name: a, cniType: ib-sriov, nic: ib-nic, pkey: \"0x1000\"}\n", "exclusive"),
       IsEmpty()},
      {Spec("    - {name: a, cniType: sriov, nic: eth-nic, pkey: \"0x1000\"}\n", "exclusive"),
       ElementsAre("host.yaml:29:53: spec.multusConfigs[0].pkey: pkey is only for cniType "
                   "ib-sriov, not sriov")},
  });
}

// One nic's own fields against each other (roce, eswitchMode, vfMtu, vfRate,
// vfVlan, vfMac): the nic's lines after its selector, and every diagnostic
// the load gives ("host.yaml:line:column: path: message"), none for a
// clean case. Line 9 is the first line after the selector.
struct OneNicCase {
  std::string name;
  std::string lines;
  ::testing::Matcher<std::vector<std::string>> want;
};

void PrintTo(const OneNicCase& c, std::ostream* os) { *os << c.name; }

std::string OneNic(const std::string& lines) {
  return OneNicSpec("n", "{pfNames: [ens6f0np0]}", lines);
}

class OneNicRuleTest : public ::testing::TestWithParam<OneNicCase> {};

TEST_P(OneNicRuleTest, Diagnoses) {
  const OneNicCase& c = GetParam();
  EXPECT_THAT(Diagnose(OneNic(c.lines)), c.want);
}

// Issue 35 item 6: mlx5 keeps buffer sizes in 128-byte cells, and PFC and
// global pause are not both on a link.
TEST(ChecksTest, RoceBufferSizesInCellsAndPauseWithoutPfc) {
  const std::string head =
      "spec:\n"                                             // 5
      "  nics:\n"                                           // 6
      "    - name: n\n"                                     // 7
      "      nicSelector: {pfNames: [ens6f0np0]}\n"         // 8
      "      roce:\n"                                       // 9
      "        pfc: [3]\n"                                  // 10
      "        buffers:\n"                                  // 11
      "          prio2buffer: [0, 0, 0, 1, 0, 0, 0, 0]\n";  // 12
  ExpectDiagnoses({
      {WithHeader(head + "          sizes: [130944, 65536]\n"), IsEmpty()},
      {WithHeader(head + "          sizes: [130944, 65500]\n"),
       ElementsAre("host.yaml:13:27: spec.nics[0].roce.buffers.sizes[1]: 65500 is not a "
                   "whole number of mlx5's 128-byte buffer cells (the driver would keep "
                   "65408): use 65408 or 65536")},
      {WithHeader("spec:\n  nics:\n    - name: n\n      nicSelector: {pfNames: [e0]}\n"
                  "      roce: {pfc: [3], pause: true}\n"),
       ElementsAre(HasSubstr("spec.nics[0].roce.pause: pause: true (IEEE 802.3x global pause) "
                             "beside pfc (IEEE 802.1Qbb, spec.nics[0].roce.pfc, line 9)"))},
      // Moving to global pause: pfc: [] with pause: true is fine.
      {WithHeader("spec:\n  nics:\n    - name: n\n      nicSelector: {pfNames: [e0]}\n"
                  "      roce: {pfc: [], pause: true}\n"),
       IsEmpty()},
  });
}

// Issue 35.3: mlx5 sets VF VLAN, link state and spoof check only in legacy
// mode (EOPNOTSUPP in switchdev); each field that asks is the error, the
// nic's or a vfGroup's. VLAN 0 without a priority is accepted by mlx5.
TEST(ChecksTest, SwitchdevRefusesVfVlanLinkStateAndSpoofCheck) {
  const std::string head =
      "spec:\n"                                      // 5
      "  nics:\n"                                    // 6
      "    - name: n\n"                              // 7
      "      nicSelector: {pfNames: [ens6f0np0]}\n"  // 8
      "      numVfs: 4\n"                            // 9
      "      eswitchMode: switchdev\n";              // 10
  const std::string why =
      " needs the legacy E-Switch (mlx5 answers EOPNOTSUPP: a VF's VLAN, link state and spoof "
      "check are set only in legacy E-Switch mode; in switchdev they are the representor's TC "
      "rules), but nic \"n\" has eswitchMode switchdev (spec.nics[0].eswitchMode, line 10)";
  ExpectDiagnoses({
      {WithHeader(head + "      vfVlan: {id: 0}\n"), IsEmpty()},
      {WithHeader(head + "      vfVlan: {id: 100}\n"),
       ElementsAre("host.yaml:11:15: spec.nics[0].vfVlan: vfVlan" + why)},
      {WithHeader(head + "      vfLinkState: enable\n"),
       ElementsAre("host.yaml:11:20: spec.nics[0].vfLinkState: vfLinkState" + why)},
      {WithHeader(head + "      vfSpoofChk: false\n"),
       ElementsAre("host.yaml:11:19: spec.nics[0].vfSpoofChk: vfSpoofChk" + why)},
      {WithHeader(head + "      vfGroups:\n"                   // 11
                         "        - range: \"0-1\"\n"          // 12
                         "          resourceName: a\n"         // 13
                         "          vfLinkState: disable\n"),  // 14
       ElementsAre("host.yaml:14:24: spec.nics[0].vfGroups[0].vfLinkState: vfLinkState" + why)},
      // legacy (or no eswitchMode) keeps them.
      {WithHeader("spec:\n  nics:\n    - name: n\n"
                  "      nicSelector: {pfNames: [ens6f0np0]}\n      numVfs: 4\n"
                  "      eswitchMode: legacy\n      vfVlan: {id: 100}\n"
                  "      vfLinkState: enable\n"),
       IsEmpty()},
  });
}

const std::string kRoce = "      roce: {trust: dscp, pfc: [3], ecn: [3]}\n";
const std::string kBuffers =
    "      roce:\n"                                       // 9
    "        pfc: [3]\n"                                  // 10
    "        cableLength: 30\n"                           // 11
    "        buffers:\n"                                  // 12
    "          prio2buffer: [0, 0, 0, 1, 0, 0, 0, 0]\n";  // 13
const std::string kSwitchdev = "      eswitchMode: switchdev\n";
const std::string kVfMtu = "      numVfs: 4\n      vfMtu: 9000\n";  // 9, 10
const std::string kVfMacOnIb =
    "host.yaml:10:14: spec.nics[0].vfMac: vfMac sets the VFs' Ethernet MACs, but nic \"n\" has "
    "linkType ib (spec.nics[0].linkType, line 9): an InfiniBand VF has GUIDs instead (a cniType "
    "ib-sriov multus config derives them)";

// roce (RoCE) and eswitchMode switchdev (VF representors, TC offload) are an
// Ethernet link's: clean without a linkType and on eth, `on_ib` on ib.
std::vector<OneNicCase> EthernetOnly(const std::string& name, const std::string& lines,
                                     const std::string& on_ib) {
  return {{name + "WithoutLinkType", lines, IsEmpty()},
          {name + "OnEth", lines + "      linkType: eth\n", IsEmpty()},
          {name + "OnIb", lines + "      linkType: ib\n", ElementsAre(on_ib)}};
}

std::vector<OneNicCase> OneNicCases() {
  std::vector<OneNicCase> cases = EthernetOnly(
      "Roce", kRoce,
      "host.yaml:9:13: spec.nics[0].roce: roce (DSCP trust, PFC, ECN) is for RoCE, an Ethernet "
      "link, but \"n\" has linkType ib (spec.nics[0].linkType, line 10)");
  for (OneNicCase& c : EthernetOnly(
           "Switchdev", kSwitchdev,
           "host.yaml:9:20: spec.nics[0].eswitchMode: eswitchMode switchdev (VF representors, TC "
           "offload) is for an Ethernet link, but \"n\" has linkType ib (spec.nics[0].linkType, "
           "line 10)")) {
    cases.push_back(std::move(c));
  }
  const std::vector<OneNicCase> table = {
      // A lossless buffer (one a PFC priority lands in) cannot be empty.
      {"LosslessBufferSized", kBuffers + "          sizes: [130944, 130944]\n", IsEmpty()},
      {"LosslessBufferEmpty", kBuffers + "          sizes: [130944]\n",
       ElementsAre("host.yaml:14:18: spec.nics[0].roce.buffers.sizes: buffer 1 holds PFC "
                   "priority 3 (prio2buffer), so it is lossless and its size cannot be 0 (mlx5 "
                   "refuses it: EINVAL)")},
      {"CableLengthRange", "      roce: {cableLength: 1000}\n",
       ElementsAre("host.yaml:9:27: spec.nics[0].roce.cableLength: 1000 exceeds the maximum "
                   "999")},
      // vfMtu: netdev VFs, at most the PF's mtu.
      {"VfMtuAlone", kVfMtu, IsEmpty()},
      {"VfMtuWithinThePfMtu", kVfMtu + "      mtu: 9000\n      deviceType: netdevice\n", IsEmpty()},
      {"VfMtuAboveThePfMtu", kVfMtu + "      mtu: 4200\n",
       ElementsAre("host.yaml:10:14: spec.nics[0].vfMtu: 9000 is above the PF's mtu 4200 "
                   "(spec.nics[0].mtu, line 11): a VF cannot carry frames its PF's port does "
                   "not; raise mtu to 9000 or more")},
      {"VfMtuOnVfioPci", kVfMtu + "      deviceType: vfio-pci\n",
       ElementsAre("host.yaml:10:14: spec.nics[0].vfMtu: vfMtu sets the VF netdevs' MTU, but "
                   "deviceType vfio-pci (spec.nics[0].deviceType, line 11) leaves the VFs "
                   "without a netdev: the VM or DPDK application sets it")},
      {"VfMtuRange", "      vfMtu: 60\n",
       ElementsAre(::testing::StartsWith("host.yaml:9:14: spec.nics[0].vfMtu:"))},
      // vfRate: the limit not below the guarantee.
      {"VfRateBoth", "      vfRate: {min: 1000, max: 10000}\n", IsEmpty()},
      {"VfRateMinOnly", "      vfRate: {min: 1000}\n", IsEmpty()},
      {"VfRateMaxBelowMin", "      vfRate: {min: 5000, max: 1000}\n",
       ElementsAre("host.yaml:9:32: spec.nics[0].vfRate.max: 1000 Mbps is below min 5000 Mbps: "
                   "the limit cannot be below the guarantee (0 = no limit)")},
      // vfVlan: qos needs a VLAN; the schema's ranges.
      {"VfVlanFull", "      vfVlan: {id: 100, qos: 3, proto: 802.1ad}\n", IsEmpty()},
      {"VfVlanNone", "      vfVlan: {id: 0}\n", IsEmpty()},
      {"VfVlanQosWithoutVlan", "      vfVlan: {id: 0, qos: 3}\n",
       ElementsAre("host.yaml:9:28: spec.nics[0].vfVlan.qos: qos 3 needs a VLAN: id 0 means no "
                   "VLAN (give id 1..4095 or leave qos out)")},
      {"VfVlanRanges", "      vfVlan: {id: 4096, qos: 8, proto: 802.1q}\n",
       ElementsAre("host.yaml:9:20: spec.nics[0].vfVlan.id: 4096 exceeds the maximum 4095",
                   "host.yaml:9:31: spec.nics[0].vfVlan.qos: 8 exceeds the maximum 7",
                   "host.yaml:9:41: spec.nics[0].vfVlan.proto: \"802.1q\" is not one of: "
                   "802.1Q, 802.1ad (did you mean \"802.1Q\"?)")},
      {"VfVlanWithoutId", "      vfVlan: {qos: 1}\n",
       ElementsAre("host.yaml:9:15: spec.nics[0].vfVlan: missing required field \"id\"")},
      // vfMac: Ethernet's; a group's own checked as the nic's.
      {"VfMacKeep", "      vfMac: keep\n", IsEmpty()},
      {"VfMacOnEth", "      linkType: eth\n      vfMac: derived\n", IsEmpty()},
      {"VfMacOnIb", "      linkType: ib\n      vfMac: derived\n", ElementsAre(kVfMacOnIb)},
      {"VfMacUnknown", "      vfMac: random\n",
       ElementsAre("host.yaml:9:14: spec.nics[0].vfMac: \"random\" is not one of: keep, "
                   "derived")},
      {"VfGroupMacOnIb",
       "      linkType: ib\n"
       "      numVfs: 4\n"
       "      vfGroups:\n"
       "        - {range: \"0-1\", vfMac: keep}\n",
       ElementsAre("host.yaml:12:33: spec.nics[0].vfGroups[0].vfMac: vfMac sets the VFs' "
                   "Ethernet MACs, but nic \"n\" has linkType ib (spec.nics[0].linkType, line 9): "
                   "an InfiniBand VF has GUIDs instead (a cniType ib-sriov multus config derives "
                   "them)")},
      {"VfGroupMacUnknown",
       "      numVfs: 4\n"
       "      vfGroups:\n"
       "        - {range: \"0-1\", vfMac: derived}\n"
       "        - {range: \"2-3\", vfMac: copy}\n",
       ElementsAre("host.yaml:12:33: spec.nics[0].vfGroups[1].vfMac: \"copy\" is not one of: "
                   "keep, derived")}};
  cases.insert(cases.end(), table.begin(), table.end());
  return cases;
}

INSTANTIATE_TEST_SUITE_P(ChecksTest, OneNicRuleTest, ::testing::ValuesIn(OneNicCases()),
                         [](const ::testing::TestParamInfo<OneNicCase>& i) {
                           return std::string(i.param.name);
                         });

TEST(ChecksTest, LinkTypeMustFitTheCniType) {
  ExpectDiagnoses({
      {Spec("    - {name: a, cniType: sriov, nic: eth-nic}\n"
            "    - {name: b, cniType: ib-sriov, nic: ib-nic}\n"
            "    - {name: c, cniType: ipoib, nic: ib-nic}\n"
            "    - {name: d, cniType: sriov, nic: plain-nic}\n",  // unmanaged
            "exclusive"),
       ElementsAre("host.yaml:32:38: spec.multusConfigs[3].nic: cniType sriov needs VFs, "
                   "but nic \"plain-nic\" sets no numVfs > 0 (spec.nics[2], line 17)",
                   "host.yaml:32:38: spec.multusConfigs[3].nic: cniType sriov needs nic "
                   "\"plain-nic\" to set resourceName, the device-plugin resource of its "
                   "VFs (spec.nics[2], line 17)")},
      {Spec("    - {name: a, cniType: sriov, nic: ib-nic}\n"
            "    - {name: b, cniType: ib-sriov, nic: eth-nic}\n"
            "    - {name: c, cniType: ipoib, nic: eth-nic}\n"
            "    - {name: d, cniType: macvlan, nic: ib-nic}\n"),
       ElementsAre("host.yaml:29:26: spec.multusConfigs[0].cniType: cniType sriov needs "
                   "an Ethernet NIC (RoCE), but nic \"ib-nic\" has linkType ib "
                   "(spec.nics[1].linkType, line 14); use ib-sriov for InfiniBand",
                   "host.yaml:30:26: spec.multusConfigs[1].cniType: cniType ib-sriov "
                   "needs an InfiniBand NIC, but nic \"eth-nic\" has linkType eth "
                   "(spec.nics[0].linkType, line 9)",
                   "host.yaml:31:26: spec.multusConfigs[2].cniType: cniType ipoib needs "
                   "an InfiniBand NIC, but nic \"eth-nic\" has linkType eth "
                   "(spec.nics[0].linkType, line 9)",
                   "host.yaml:32:26: spec.multusConfigs[3].cniType: cniType macvlan needs "
                   "an Ethernet NIC, but nic \"ib-nic\" has linkType ib "
                   "(spec.nics[1].linkType, line 14); use ipoib for InfiniBand")},
  });
}

TEST(ChecksTest, ExclusiveNetnsModeRejectsMacvlanAndIpvlan) {
  ExpectDiagnoses({
      {Spec("    - {name: a, cniType: macvlan, nic: eth-nic}\n"
            "    - {name: b, cniType: ipvlan, nic: eth-nic}\n",
            "shared"),
       IsEmpty()},
      {Spec("    - {name: a, cniType: macvlan, nic: eth-nic}\n"
            "    - {name: b, cniType: ipvlan, nic: eth-nic}\n",
            "exclusive"),
       ElementsAre("host.yaml:29:26: spec.multusConfigs[0].cniType: cniType macvlan "
                   "shares the NIC's RDMA device between pods, which needs "
                   "spec.rdma.netnsMode shared, but it is exclusive (spec.rdma.netnsMode, "
                   "line 27)",
                   "host.yaml:30:26: spec.multusConfigs[1].cniType: cniType ipvlan "
                   "shares the NIC's RDMA device between pods, which needs "
                   "spec.rdma.netnsMode shared, but it is exclusive (spec.rdma.netnsMode, "
                   "line 27)")},
  });
}

TEST(ChecksTest, SriovConfigsNeedVfsAndAResource) {
  ExpectDiagnoses({
      {Spec("    - {name: a, cniType: sriov, nic: eth-nic}\n", "exclusive"), IsEmpty()},
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - name: n\n"
                  "      nicSelector: {pfNames: [ens6f0np0]}\n"
                  "      numVfs: 0\n"
                  "  multusConfigs:\n"
                  "    - {name: a, cniType: sriov, nic: n}\n"),
       ElementsAre("host.yaml:11:38: spec.multusConfigs[0].nic: cniType sriov needs VFs, "
                   "but nic \"n\" sets no numVfs > 0 (spec.nics[0], line 7)",
                   "host.yaml:11:38: spec.multusConfigs[0].nic: cniType sriov needs nic "
                   "\"n\" to set resourceName, the device-plugin resource of its VFs "
                   "(spec.nics[0], line 7)")},
  });
}

TEST(ChecksTest, PfNamesMustBeLinuxInterfaceNames) {
  ExpectDiagnoses({
      {WithHeader("spec:\n  nics:\n    - {name: n, nicSelector: {pfNames: [ens6f0np0, ib0, "
                  "a.b-c_d@1]}}\n"),
       IsEmpty()},
      {WithHeader("spec:\n"
                  "  nics:\n"
                  "    - name: n\n"
                  "      nicSelector:\n"
                  "        pfNames:\n"
                  "          - ens6/f0\n"
                  "          - ..\n"
                  "          - \"eth 0\"\n"
                  "          - eth0:1\n"
                  "          - ens6f0np0-too-long\n"
                  "          - \"\"\n"
                  "          - .\n"),
       ElementsAre(
           "host.yaml:10:13: spec.nics[0].nicSelector.pfNames[0]: \"ens6/f0\" is not a valid "
           "Linux interface name: it contains '/'",
           "host.yaml:11:13: spec.nics[0].nicSelector.pfNames[1]: \"..\" is not a valid Linux "
           "interface name: \".\" and \"..\" are reserved",
           "host.yaml:12:13: spec.nics[0].nicSelector.pfNames[2]: \"eth 0\" is not a valid Linux "
           "interface name: it contains whitespace",
           "host.yaml:13:13: spec.nics[0].nicSelector.pfNames[3]: \"eth0:1\" is not a valid Linux "
           "interface name: it contains ':'",
           "host.yaml:14:13: spec.nics[0].nicSelector.pfNames[4]: \"ens6f0np0-too-long\" is not a "
           "valid Linux interface name: it is longer than 15 characters",
           "host.yaml:15:13: spec.nics[0].nicSelector.pfNames[5]: \"\" is not a valid Linux "
           "interface name: it is empty",
           "host.yaml:16:13: spec.nics[0].nicSelector.pfNames[6]: \".\" is not a valid Linux "
           "interface name: \".\" and \"..\" are reserved")},
  });
}

TEST(ChecksTest, SelectorNeedsASelectingField) {
  ExpectDiagnoses({
      {WithHeader("spec:\n  nics:\n    - {name: n, nicSelector: {nearGpu: 0}}\n"), IsEmpty()},
      {WithHeader("spec:\n  nics:\n    - {name: n, nicSelector: {allowRemote: true}}\n"),
       ElementsAre("host.yaml:7:30: spec.nics[0].nicSelector: selects nothing: set at least one "
                   "of vendor, deviceID, rootDevices, pfNames, nearGpu")},
  });
}

TEST(ChecksTest, VfioPciVfsHaveNoRdma) {
  std::string nic = OneNicSpec("n", "{vendor: \"15b3\"}", "      deviceType: ");
  ExpectDiagnoses({
      {nic + "netdevice\n      isRdma: true\n", IsEmpty()},
      {nic + "vfio-pci\n      isRdma: false\n", IsEmpty()},
      {nic + "vfio-pci\n      isRdma: true\n",
       ElementsAre("host.yaml:10:15: spec.nics[0].isRdma: isRdma needs deviceType "
                   "netdevice: VFs bound to vfio-pci have no RDMA device")},
  });
}

TEST(ChecksTest, VlanIsEthernetOnly) {
  ExpectDiagnoses({
      {Spec("    - {name: a, cniType: macvlan, nic: eth-nic, vlan: 100}\n"), IsEmpty()},
      {Spec("    - {name: a, cniType: ipoib, nic: ib-nic, vlan: 100}\n"),
       ElementsAre("host.yaml:29:52: spec.multusConfigs[0].vlan: vlan is Ethernet only; "
                   "cniType ipoib has no VLANs (use pkey)")},
  });
}

TEST(ChecksTest, NodeSelectorKeysAreLabelKeys) {
  ExpectDiagnoses({
      {WithHeader("spec:\n  kubernetes:\n    nodeSelector:\n"
                  "      kubernetes.io/os: linux\n"
                  "      node-role.kubernetes.io/worker: \"\"\n"),
       IsEmpty()},
      {WithHeader("spec:\n  kubernetes:\n    nodeSelector:\n"
                  "      \"rdma capable\": \"yes\"\n"),
       ElementsAre("host.yaml:8:23: spec.kubernetes.nodeSelector.rdma capable: \"rdma "
                   "capable\" is not a valid label key ([prefix/]name: name up to 63 "
                   "letters, digits, '-', '_' or '.', prefix a DNS subdomain)")},
  });
}

TEST(ChecksTest, RdmaModeWarnings) {
  // The shared device plugin in exclusive mode, SR-IOV RDMA in shared mode.
  std::string spec = WithHeader(
      "spec:\n"
      "  rdma: {netnsMode: exclusive}\n"
      "  kubernetes:\n"
      "    rdmaSharedDevicePlugin: {resourceName: hca, rdmaHcaMax: 10}\n");
  EXPECT_THAT(Diagnose(spec),
              ElementsAre("host.yaml:8:29: warning: spec.kubernetes.rdmaSharedDevicePlugin: the "
                          "RDMA shared device plugin shares RDMA devices between pods, which "
                          "needs spec.rdma.netnsMode shared, but it is exclusive "
                          "(spec.rdma.netnsMode, line 6)"));
  std::string shared_sriov = WithHeader(
      "spec:\n"
      "  rdma: {netnsMode: shared}\n"
      "  nics:\n"
      "    - {name: n, nicSelector: {vendor: \"15b3\"}, numVfs: 2, isRdma: true, "
      "resourceName: r}\n"
      "  multusConfigs:\n"
      "    - {name: a, cniType: sriov, nic: n}\n");
  LoadResult r = LoadDesiredStateFromString(shared_sriov, "host.yaml");
  EXPECT_TRUE(r.state.has_value());  // warnings do not block
  EXPECT_THAT(Diagnose(shared_sriov),
              ElementsAre("host.yaml:10:26: warning: spec.multusConfigs[0].cniType: the RDMA "
                          "devices of nic \"n\"'s VFs are visible in every pod with "
                          "spec.rdma.netnsMode shared; the RDMA CNI isolates them only in "
                          "exclusive mode"));
}

TEST(ChecksTest, ReportsEveryProblemAtOnce) {
  EXPECT_THAT(Diagnose(Spec("    - {name: a, cniType: macvlan, nic: ghost}\n"
                            "    - {name: a, cniType: sriov, nic: ib-nic, pkey: \"0x1\"}\n"
                            "    - name: c\n"
                            "      cniType: ipoib\n"
                            "      nic: ib-nic\n"
                            "      ippools: {ipv4: [v6]}\n",
                            "exclusive")),
              ElementsAre("host.yaml:29:26: spec.multusConfigs[0].cniType: cniType macvlan "
                          "shares the NIC's RDMA device between pods, which needs "
                          "spec.rdma.netnsMode shared, but it is exclusive (spec.rdma.netnsMode, "
                          "line 27)",
                          "host.yaml:29:40: spec.multusConfigs[0].nic: nic \"ghost\" names no "
                          "NIC in spec.nics (defined: eth-nic, ib-nic, plain-nic)",
                          "host.yaml:30:14: spec.multusConfigs[1].name: duplicate multus config "
                          "\"default/a\" (first at spec.multusConfigs[0].name, line 29)",
                          "host.yaml:30:26: spec.multusConfigs[1].cniType: cniType sriov needs "
                          "an Ethernet NIC (RoCE), but nic \"ib-nic\" has linkType ib "
                          "(spec.nics[1].linkType, line 14); use ib-sriov for InfiniBand",
                          "host.yaml:30:52: spec.multusConfigs[1].pkey: pkey is only for cniType "
                          "ib-sriov, not sriov",
                          "host.yaml:34:24: spec.multusConfigs[2].ippools.ipv4[0]: ippool \"v6\" "
                          "is IPv6 (subnet fd00:1::/64) but is listed under ipv4"));
}

TEST(ChecksTest, SchemaErrorsDoNotCascade) {
  // numVfs is reported once by the schema; the sriov rule that reads it
  // stays quiet, and a bad NIC name does not make references dangle.
  std::string spec = WithHeader(
      "spec:\n"
      "  nics:\n"
      "    - name: n\n"
      "      nicSelector: {vendor: \"15b3\"}\n"
      "      numVfs: twelve\n"
      "      resourceName: r\n"
      "    - name: 7\n"
      "      nicSelector: {vendor: \"15b3\"}\n"
      "  multusConfigs:\n"
      "    - {name: a, cniType: sriov, nic: n}\n"
      "    - {name: b, cniType: macvlan, nic: other}\n");
  EXPECT_THAT(Diagnose(spec),
              ElementsAre("host.yaml:9:15: spec.nics[0].numVfs: expected an integer, got string "
                          "\"twelve\"",
                          "host.yaml:11:13: spec.nics[1].name: expected a string, got integer 7 "
                          "(quote it: \"7\")"));
}

// One nic with numVfs (line 10) and firmware (line 11).
std::string FirmwareNic(const std::string& firmware) {
  return VendorNicSpec("rail0", "      numVfs: 12\n      firmware: " + firmware + "\n");
}

TEST(FirmwareChecksTest, SriovOffWithVfsNamesBothFields) {
  ExpectDiagnoses({
      {FirmwareNic("{ SRIOV_EN: false }"),
       ElementsAre("host.yaml:11:29: spec.nics[0].firmware.SRIOV_EN: SRIOV_EN false "
                   "(host.yaml:11:29) turns SR-IOV off in the firmware of nic \"rail0\", "
                   "but numVfs 12 (host.yaml:10:15) asks for VFs on it: drop SRIOV_EN (the "
                   "plan turns it on when the card has it off) or set numVfs: 0")},
      {FirmwareNic("{ SRIOV_EN: 0 }"), ::testing::SizeIs(1)},
      {FirmwareNic("{ SRIOV_EN: true, NUM_OF_VFS: 12 }"), IsEmpty()},
  });
}

TEST(FirmwareChecksTest, NumOfVfsBelowNumVfsNamesBothFields) {
  ExpectDiagnoses({
      {FirmwareNic("{ NUM_OF_VFS: 8 }"),
       ElementsAre("host.yaml:11:31: spec.nics[0].firmware.NUM_OF_VFS: NUM_OF_VFS 8 "
                   "(host.yaml:11:31) lets the firmware of nic \"rail0\" enable at most 8 "
                   "VFs, but numVfs 12 (host.yaml:10:15) asks for 12: set NUM_OF_VFS to at "
                   "least 12, or drop it (the plan raises it when the card has fewer)")},
      {FirmwareNic("{ NUM_OF_VFS: 16 }"), IsEmpty()},
  });
}

TEST(FirmwareChecksTest, ParameterNamesFollowMstconfig) {
  for (const char* good :
       {"{ ATS_ENABLED: true }", "{ LINK_TYPE_P1: ETH }", "{ \"HOST_CHAINING_DESCRIPTORS[5]\": 3 }",
        "{ \"HOST_CHAINING_DESCRIPTORS[3..7]\": 3 }"}) {
    EXPECT_THAT(Diagnose(FirmwareNic(good)), IsEmpty()) << good;
  }
  EXPECT_THAT(
      Diagnose(FirmwareNic("{ ats_enabled: true }")),
      ElementsAre("host.yaml:11:32: spec.nics[0].firmware.ats_enabled: \"ats_enabled\" is "
                  "not an mstconfig parameter name (upper-case letters, digits and '_', as "
                  "`mstconfig query` prints it: ATS_ENABLED, LINK_TYPE_P1; an array element "
                  "as NAME[5] or NAME[3..7])"));
  for (const char* bad : {"{ ATS-ENABLED: true }", "{ \"NAME[]\": 1 }", "{ \"NAME[7..3]\": 1 }",
                          "{ \"NAME[x]\": 1 }", "{ \"NAME[1]X\": 1 }", "{ \"_X\": 1 }"}) {
    EXPECT_THAT(Diagnose(FirmwareNic(bad)), ::testing::SizeIs(1)) << bad;
  }
}

TEST(InterfaceNameTest, FollowsTheKernel) {
  EXPECT_FALSE(InterfaceNameProblem("ens6f0np0").has_value());
  EXPECT_FALSE(InterfaceNameProblem("a23456789012345").has_value());  // 15 is the limit
  EXPECT_TRUE(InterfaceNameProblem("a234567890123456").has_value());
  EXPECT_TRUE(InterfaceNameProblem("a\tb").has_value());
  EXPECT_TRUE(InterfaceNameProblem(std::string("a\0b", 3)).has_value());
}

TEST(LabelKeyTest, PrefixAndName) {
  EXPECT_TRUE(IsLabelKey("kubernetes.io/os"));
  EXPECT_TRUE(IsLabelKey("node-role.kubernetes.io/worker"));
  EXPECT_TRUE(IsLabelKey("rdma"));
  EXPECT_TRUE(IsLabelKey("A_b.c-D"));
  EXPECT_FALSE(IsLabelKey(""));
  EXPECT_FALSE(IsLabelKey("/os"));
  EXPECT_FALSE(IsLabelKey("Kubernetes.io/os"));
  EXPECT_FALSE(IsLabelKey("kubernetes.io/"));
  EXPECT_FALSE(IsLabelKey("a/b/c"));
  EXPECT_FALSE(IsLabelKey("-a"));
  EXPECT_FALSE(IsLabelKey(std::string(64, 'a')));
}

// An IB NIC with an ipoib block (line 9 on), after `before` at lines 8...
std::string IpoibNic(const std::string& ipoib, const std::string& before = "") {
  return OneNicSpec("ib-nic", "{pfNames: [ibs5f0]}", before + "      ipoib:\n" + ipoib);
}

TEST(ChecksTest, IpoibIsClean) {
  EXPECT_THAT(Diagnose(IpoibNic("        mode: connected\n"
                                "        mtu: 65520\n"
                                "        addresses: [172.16.0.10/16, \"fd00::10/64\"]\n"
                                "        pkeys: [\"0x8001\", \"0x0002\"]\n",
                                "      linkType: ib\n")),
              IsEmpty());
}

TEST(ChecksTest, IpoibOnAnEthernetNic) {
  EXPECT_THAT(Diagnose(IpoibNic("        mode: datagram\n", "      linkType: eth\n")),
              ElementsAre("host.yaml:11:9: spec.nics[0].ipoib: ipoib needs an InfiniBand NIC, "
                          "but nic \"ib-nic\" has linkType eth (spec.nics[0].linkType, line 9): "
                          "an Ethernet port has no IPoIB interface"));
}

TEST(ChecksTest, IpoibDatagramMtuAbove4092) {
  ExpectDiagnoses({
      {IpoibNic("        mode: datagram\n"
                "        mtu: 4092\n"),
       IsEmpty()},
      {IpoibNic("        mode: datagram\n"
                "        mtu: 9000\n"),
       ElementsAre(::testing::StartsWith(
           "host.yaml:11:14: spec.nics[0].ipoib.mtu: 9000 is above datagram mode's "
           "largest MTU 4092"))},
  });
}

TEST(ChecksTest, IpoibMtuAndNicMtu) {
  EXPECT_THAT(Diagnose(IpoibNic("        mtu: 2044\n", "      mtu: 2044\n")),
              ElementsAre("host.yaml:11:14: spec.nics[0].ipoib.mtu: set the MTU of an IPoIB NIC "
                          "once, here: the nic's mtu (spec.nics[0].mtu, line 9) sets the same "
                          "netdev"));
}

TEST(ChecksTest, IpoibAddresses) {
  EXPECT_THAT(
      Diagnose(IpoibNic("        addresses: [172.16.0.10, 172.16.0.300/16, 10.0.0.1/8,\n"
                        "                    10.0.0.1/8]\n")),
      ElementsAre("host.yaml:10:21: spec.nics[0].ipoib.addresses[0]: \"172.16.0.10\" is not an "
                  "address with its prefix length, like 172.16.0.10/16 or fd00::10/64",
                  "host.yaml:10:34: spec.nics[0].ipoib.addresses[1]: \"172.16.0.300/16\" is not "
                  "an address with its prefix length, like 172.16.0.10/16 or fd00::10/64",
                  "host.yaml:11:21: spec.nics[0].ipoib.addresses[3]: \"10.0.0.1/8\" is listed "
                  "twice (first at spec.nics[0].ipoib.addresses[2], line 10)"));
}

TEST(ChecksTest, IpoibPkeys) {
  EXPECT_THAT(
      Diagnose(IpoibNic("        pkeys: [\"0x8000\", \"0xffff\", \"0x8001\", \"0x1\"]\n")),
      ElementsAre("host.yaml:10:17: spec.nics[0].ipoib.pkeys[0]: \"0x8000\" is no partition "
                  "(0x0001..0x7fff, with or without the full-membership bit 0x8000)",
                  "host.yaml:10:27: spec.nics[0].ipoib.pkeys[1]: \"0xffff\" is the default "
                  "partition, the PF's own interface: list only the other partitions",
                  "host.yaml:10:47: spec.nics[0].ipoib.pkeys[3]: \"0x1\" is the same partition "
                  "as \"0x8001\" (spec.nics[0].ipoib.pkeys[2], line 10): one child interface "
                  "per partition"));
}

}  // namespace
// Issue 28 item 3: vfGroups' ranges lie inside 0..numVfs-1 and apart, each
// group is checked as a nic (isRdma with vfio-pci), one resource per group,
// and a sriov config on a nic with several group resources says which.
TEST(ChecksTest, VfGroupsRangesFieldsAndResources) {
  auto nic = [](const std::string& groups, const std::string& multus = "") {
    return OneNicSpec("n", "{pfNames: [ens1f0]}",
                      "      numVfs: 8\n"     // 9
                      "      isRdma: true\n"  // 10
                      "      vfGroups:\n" +   // 11
                          groups +
                          multus);
  };
  const std::string good =
      "        - {range: \"0-3\", deviceType: netdevice, resourceName: pods}\n"  // 12
      "        - {range: \"4-7\", deviceType: vfio-pci, isRdma: false, resourceName: vms}\n";
  ExpectDiagnoses({
      {nic(good), IsEmpty()},
      {nic(good,
           "  multusConfigs:\n"
           "    - {name: a, cniType: sriov, nic: n, resourceName: pods}\n"),
       IsEmpty()},
      {nic(good, "  multusConfigs:\n    - {name: a, cniType: sriov, nic: n}\n"),
       ElementsAre("host.yaml:15:38: spec.multusConfigs[0].nic: nic \"n\" has vfGroups with "
                   "several resources (pods, vms): set resourceName here to say which one the pods "
                   "get (spec.nics[0].vfGroups, line 12)")},
      {nic(good,
           "  multusConfigs:\n"
           "    - {name: a, cniType: sriov, nic: n, resourceName: x}\n"),
       ElementsAre("host.yaml:15:55: spec.multusConfigs[0].resourceName: \"x\" is none "
                   "of nic \"n\"'s vfGroups resources (pods, vms; spec.nics[0].vfGroups, "
                   "line 12)")},
      {nic(good,
           "  multusConfigs:\n"
           "    - {name: a, cniType: macvlan, nic: n, resourceName: pods}\n"),
       ElementsAre(::testing::HasSubstr(
           "spec.multusConfigs[0].resourceName: resourceName picks one of the nic's VF "
           "resources: only for cniType sriov and ib-sriov, not macvlan"))},
      {nic("        - {range: \"4-8\", resourceName: a}\n"),
       ElementsAre("host.yaml:12:19: spec.nics[0].vfGroups[0].range: \"4-8\" is outside "
                   "the nic's VFs 0-7 (numVfs 8, spec.nics[0].numVfs, line 9)")},
      {nic("        - {range: \"3-1\", resourceName: a}\n"),
       ElementsAre("host.yaml:12:19: spec.nics[0].vfGroups[0].range: \"3-1\": the "
                   "range's first index is above its last")},
      {nic("        - {range: \"0-3\", resourceName: a}\n"
           "        - {range: \"3\", resourceName: b}\n"),
       ElementsAre("host.yaml:13:19: spec.nics[0].vfGroups[1].range: VFs \"3\" overlap "
                   "\"0-3\" of spec.nics[0].vfGroups[0], line 12: a VF belongs to one "
                   "group")},
      {nic("        - {range: \"0-3\", deviceType: vfio-pci, resourceName: a}\n"),
       ElementsAre("host.yaml:12:38: spec.nics[0].vfGroups[0].deviceType: deviceType "
                   "vfio-pci with the nic's isRdma needs deviceType netdevice: VFs bound to "
                   "vfio-pci have no RDMA device")},
      {nic("        - {range: \"0-3\", resourceName: a}\n"
           "        - {range: \"4-5\", resourceName: a}\n"),
       ElementsAre("host.yaml:13:40: spec.nics[0].vfGroups[1].resourceName: resourceName "
                   "\"a\" is also spec.nics[0].vfGroups[0], line 12's: each group is its "
                   "own device-plugin resource (the sriov-network-operator keeps one group "
                   "per resource on a PF)")},
      {nic("        - {range: \"0-3\", bogus: 1}\n"),
       ElementsAre(::testing::HasSubstr("spec.nics[0].vfGroups[0].bogus"))},
      {nic("        - {range: \"0-x\"}\n"),
       ElementsAre(::testing::HasSubstr("spec.nics[0].vfGroups[0].range"))},
  });
}

}  // namespace provisioner::config

namespace provisioner::config {
namespace {

// Issue 28 item 3: a group's own vfMtu, vfRate, vfVlan and vfLinkState are
// checked as the nic's are (the same checks, at the group's field): vfMtu
// above the nic's mtu or with the group's (or the nic's) deviceType
// vfio-pci, max below min, qos without a VLAN, a link state not in the enum.
// An inherited nic vfMtu in a vfio-pci group is no error (not applied there).
TEST(ChecksTest, VfGroupsPerVfSettingsCheckedAsTheNics) {
  auto nic = [](const std::string& top, const std::string& groups) {
    return OneNicSpec("n", "{pfNames: [ens1f0]}",
                      "      numVfs: 8\n"        // 9
                      "      mtu: 4200\n" +      // 10
                          top +                  // 11
                          "      vfGroups:\n" +  // 12
                          groups);               // 13..
  };
  ExpectDiagnoses({
      {nic("      vfMtu: 4200\n",
           "        - {range: \"0-3\", vfMtu: 1500, vfVlan: {id: 10, qos: 3}}\n"
           "        - {range: \"4-7\", deviceType: vfio-pci, vfRate: {max: 100},"
           " vfLinkState: enable}\n"),
       IsEmpty()},
      {nic("      deviceType: netdevice\n", "        - {range: \"0-3\", vfMtu: 9000}\n"),
       ElementsAre("host.yaml:13:33: spec.nics[0].vfGroups[0].vfMtu: 9000 is above the "
                   "PF's mtu 4200 (spec.nics[0].mtu, line 10): a VF cannot carry frames "
                   "its PF's port does not; raise mtu to 9000 or more")},
      {nic("      deviceType: netdevice\n",
           "        - {range: \"0-3\", deviceType: vfio-pci, vfMtu: 1500}\n"),
       ElementsAre(::testing::StartsWith(
           "host.yaml:13:55: spec.nics[0].vfGroups[0].vfMtu: vfMtu sets the VF netdevs' "
           "MTU, but deviceType vfio-pci (spec.nics[0].vfGroups[0].deviceType, line 13)"))},
      {nic("      deviceType: vfio-pci\n", "        - {range: \"0-3\", vfMtu: 1500}\n"),
       ElementsAre(::testing::StartsWith(
           "host.yaml:13:33: spec.nics[0].vfGroups[0].vfMtu: vfMtu sets the VF netdevs' "
           "MTU, but deviceType vfio-pci (spec.nics[0].deviceType, line 11)"))},
      {nic("      deviceType: vfio-pci\n",
           "        - {range: \"0-3\", deviceType: netdevice, vfMtu: 1500}\n"),
       IsEmpty()},
      {nic("", "        - {range: \"0-3\", vfRate: {min: 500, max: 100}}\n"),
       ElementsAre("host.yaml:12:50: spec.nics[0].vfGroups[0].vfRate.max: 100 Mbps is "
                   "below min 500 Mbps: the limit cannot be below the guarantee (0 = no "
                   "limit)")},
      {nic("", "        - {range: \"0-3\", vfVlan: {id: 0, qos: 2}}\n"),
       ElementsAre("host.yaml:12:47: spec.nics[0].vfGroups[0].vfVlan.qos: qos 2 needs a "
                   "VLAN: id 0 means no VLAN (give id 1..4095 or leave qos out)")},
      {nic("", "        - {range: \"0-3\", vfLinkState: up}\n"),
       ElementsAre(::testing::HasSubstr("spec.nics[0].vfGroups[0].vfLinkState"))},
      {nic("", "        - {range: \"0-3\", vfVlan: {id: 4096}}\n"),
       ElementsAre(::testing::HasSubstr("spec.nics[0].vfGroups[0].vfVlan.id"))},
      {nic("", "        - {range: \"0-3\", vfVlan: {id: 5, proto: x}}\n"),
       ElementsAre(::testing::HasSubstr("spec.nics[0].vfGroups[0].vfVlan.proto"))},
  });
}

// Issue 39 item 1: vfGroups[].addresses puts the group's VFs on the host
// network: one address (with its prefix length) per VF of the range, on a
// netdev (not vfio-pci), and no device-plugin resource of its own; the
// nic's resourceName is not the group's then.
TEST(ChecksTest, VfGroupAddressesOnePerVfOnNetdevsWithoutResource) {
  auto nic = [](const std::string& top, const std::string& groups) {
    return WithHeader(
        "spec:\n"                                   // 5
        "  nics:\n"                                 // 6
        "    - name: n\n"                           // 7
        "      nicSelector: {pfNames: [ens1f0]}\n"  // 8
        "      numVfs: 8\n" +                       // 9
        top +                                       // 10
        "      vfGroups:\n" +                       // 11
        groups);                                    // 12..
  };
  EXPECT_THAT(Diagnose(nic("      resourceName: pods\n",
                           "        - {range: \"0-1\", addresses: [10.0.0.1/24, 10.0.0.2/24]}\n"
                           "        - {range: \"2-3\"}\n")),
              IsEmpty());
  EXPECT_THAT(Diagnose(nic("      resourceName: pods\n",
                           "        - {range: \"0-2\", addresses: [10.0.0.1/24, 10.0.0.2]}\n")),
              ElementsAre("host.yaml:12:37: spec.nics[0].vfGroups[0].addresses: 2 addresses for "
                          "the 3 VFs of range \"0-2\": give one address per VF (VF 0 gets the "
                          "first)",
                          "host.yaml:12:51: spec.nics[0].vfGroups[0].addresses[1]: \"10.0.0.2\" "
                          "is not an address with a prefix length (172.16.1.71/24)"));
  EXPECT_THAT(Diagnose(nic("      deviceType: vfio-pci\n",
                           "        - {range: \"0\", addresses: [10.0.0.1/24]}\n")),
              ElementsAre("host.yaml:12:35: spec.nics[0].vfGroups[0].addresses: addresses go on "
                          "the VF netdevs, but deviceType vfio-pci (spec.nics[0].deviceType, "
                          "line 10) leaves the VFs without a netdev"));
  EXPECT_THAT(
      Diagnose(nic("", "        - {range: \"0\", resourceName: x, addresses: [10.0.0.1/24]}\n")),
      ElementsAre(::testing::StartsWith(
          "host.yaml:11:38: spec.nics[0].vfGroups[0].resourceName: a group with "
          "addresses is used on the host network")));
}

}  // namespace
}  // namespace provisioner::config
