#include "modules/firmware/firmware_planner.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/firmware/mstconfig_query.h"
#include "test/support/fake_pci_module.h"
#include "test/support/files.h"
#include "test/support/planned_changes.h"

namespace provisioner {
namespace {

using ::testing::ElementsAre;

FirmwareFacts FromTestdata(const std::string& name) {
  auto q = ParseMstconfigQuery(testing::ReadFile("modules/firmware/testdata/" + name));
  EXPECT_TRUE(q.ok()) << name << ": " << q.status().message();
  FirmwareFacts fw;
  fw.source = name;
  if (q.ok()) {
    fw.device_type = q->device_type;
    fw.params = q->params;
  }
  return fw;
}

// A ConnectX-5 VPI port in InfiniBand.
PciFunction Pf(const std::string& bdf, const std::string& netdev) {
  return testing::NetworkPf(bdf, netdev, "15b3", "1017", testing::kInfinibandClass);
}

DesiredState Want(const std::string& selector_pf, std::optional<std::string> link_type,
                  std::optional<int> num_vfs = std::nullopt) {
  NicSpec n = testing::NicAt("ib0", selector_pf);
  n.link_type = link_type;
  n.num_vfs = num_vfs;
  return testing::Wanting(n);
}

struct Planned {
  std::vector<Change> changes;
  std::vector<Diagnostic> diags;
  std::vector<Change> next_boot;  // set for the next boot, pending a reboot
  std::string Messages() const {
    std::string s;
    for (const auto& d : diags) s += d.path + ": " + d.message + "\n";
    return s;
  }
};

// Facts of one PF `bdf` (netdev `netdev`) whose mstconfig query is the
// testdata file `query`.
HostFacts OnePf(const std::string& bdf, const std::string& netdev, const std::string& query) {
  HostFacts f;
  f.pci = {Pf(bdf, netdev)};
  f.firmware[bdf] = FromTestdata(query);
  return f;
}

Planned RunPlan(const DesiredState& d, const HostFacts& f) {
  PlanSink sink;
  PlanFirmware(d, f, sink);
  return {sink.changes(), sink.diagnostics(), sink.set_for_next_boot()};
}

TEST(FirmwarePlanner, IbCardToEthIsARebootChange) {
  HostFacts f = OnePf("0000:86:00.0", "ibs5f0", "cx5-vpi-ib.query");
  Planned p = RunPlan(Want("0000:86:00.0", "eth"), f);
  ASSERT_THAT(p.changes,
              ElementsAre(testing::Changed("firmware/0000:86:00.0/LINK_TYPE_P1", "ib", "eth")))
      << p.Messages();
  const Change& c = p.changes[0];
  EXPECT_EQ(c.disruption, Disruption::kReboot);
  EXPECT_EQ(c.phase, kPhaseFirmware);
  EXPECT_EQ(c.field_path, "spec.nics[0].linkType");
  EXPECT_EQ(FirmwareValue(c).value(), 2);
  EXPECT_TRUE(p.diags.empty()) << p.Messages();
}

TEST(FirmwarePlanner, SecondPortUsesItsOwnParameterOnFunctionZero) {
  HostFacts f;
  f.pci = {Pf("0000:86:00.0", "ibs5f0"), Pf("0000:86:00.1", "ibs5f1")};
  f.firmware["0000:86:00.0"] = FromTestdata("cx5-vpi-ib.query");
  Planned p = RunPlan(Want("0000:86:00.1", "eth"), f);
  ASSERT_EQ(p.changes.size(), 1u) << p.Messages();
  EXPECT_EQ(p.changes[0].id, "firmware/0000:86:00.0/LINK_TYPE_P2");
}

TEST(FirmwarePlanner, MatchingTypeIsNoChange) {
  HostFacts f = OnePf("0000:86:00.0", "ibs5f0", "cx5-vpi-ib.query");
  Planned p = RunPlan(Want("0000:86:00.0", "ib"), f);
  EXPECT_TRUE(p.changes.empty());
  EXPECT_TRUE(p.diags.empty()) << p.Messages();
}

// Issue 38 item 9: no new change, a change pending reboot (current ->
// desired), which plan shows and counts.
TEST(FirmwarePlanner, PendingNextBootIsNoNewChangeButPendingReboot) {
  HostFacts f = OnePf("0000:86:00.0", "ibs5f0", "cx5-vpi-pending-eth.query");
  Planned p = RunPlan(Want("0000:86:00.0", "eth"), f);
  EXPECT_TRUE(p.changes.empty());
  EXPECT_TRUE(p.diags.empty()) << p.Messages();
  ASSERT_EQ(p.next_boot.size(), 1u);
  EXPECT_EQ(p.next_boot[0].id, "firmware/0000:86:00.0/LINK_TYPE_P1");
  EXPECT_EQ(p.next_boot[0].before, "ib");
  EXPECT_EQ(p.next_boot[0].after, "eth");
  EXPECT_NE(p.next_boot[0].reason.find("reboot"), std::string::npos) << p.next_boot[0].reason;
  // Back to ib: next boot says eth, so that is a change again.
  Planned back = RunPlan(Want("0000:86:00.0", "ib"), f);
  ASSERT_EQ(back.changes.size(), 1u);
  EXPECT_EQ(back.changes[0].before, "eth");
}

TEST(FirmwarePlanner, MissingToolIsAnErrorSayingHowToInstall) {
  HostFacts f;
  f.pci = {Pf("0000:86:00.0", "ibs5f0")};
  FirmwareFacts fw;
  fw.tool_missing = true;
  fw.error = "mstconfig (mstflint) is not installed: install it (apt install mstflint)";
  f.firmware["0000:86:00.0"] = fw;
  Planned p = RunPlan(Want("0000:86:00.0", "eth"), f);
  EXPECT_TRUE(p.changes.empty());
  ASSERT_EQ(p.diags.size(), 1u);
  EXPECT_EQ(p.diags[0].severity, Severity::kError);
  EXPECT_EQ(p.diags[0].path, "spec.nics[0].linkType");
  EXPECT_NE(p.diags[0].message.find("apt install mstflint"), std::string::npos);
}

TEST(FirmwarePlanner, UnknownFirmwareAndFixedPortTypeAreErrors) {
  HostFacts f;
  f.root = "/tmp/tree";
  f.pci = {Pf("0000:86:00.0", "ibs5f0"), Pf("0000:5e:00.0", "ens1f0")};
  FirmwareFacts uncaptured;
  uncaptured.error = "no captured query /run/provisioner/mstconfig/0000:86:00.0.query";
  uncaptured.running_link_types[1] = "ib";
  f.firmware["0000:86:00.0"] = uncaptured;
  Planned none = RunPlan(Want("0000:86:00.0", "eth"), f);
  ASSERT_EQ(none.diags.size(), 1u);
  EXPECT_NE(none.diags[0].message.find("/run/provisioner/mstconfig/0000:86:00.0.query"),
            std::string::npos)
      << none.diags[0].message;
  // Unreadable firmware, but the port already runs what is wanted: nothing to do.
  Planned same = RunPlan(Want("0000:86:00.0", "ib"), f);
  EXPECT_TRUE(same.diags.empty()) << same.Messages();
  EXPECT_TRUE(same.changes.empty());
  // Not a ConnectX at all.
  PciFunction intel = Pf("0000:02:00.0", "eno1");
  intel.vendor = "8086";
  f.pci.push_back(intel);
  Planned other = RunPlan(Want("0000:02:00.0", "eth"), f);
  ASSERT_EQ(other.diags.size(), 1u);
  EXPECT_NE(other.diags[0].message.find("not an NVIDIA/Mellanox"), std::string::npos);
  f.firmware["0000:5e:00.0"] = FromTestdata("cx6lx-eth.query");
  Planned lx = RunPlan(Want("0000:5e:00.0", "ib"), f);
  ASSERT_EQ(lx.diags.size(), 1u);
  EXPECT_NE(lx.diags[0].message.find("no LINK_TYPE_P1"), std::string::npos) << lx.Messages();
  FirmwareFacts broken;
  broken.error = "mstconfig -e -d 0000:86:00.0 query exited 3: -E- Failed to open the device";
  f.firmware["0000:86:00.0"] = broken;
  Planned b = RunPlan(Want("0000:86:00.0", "eth"), f);
  ASSERT_EQ(b.diags.size(), 1u);
  EXPECT_NE(b.diags[0].message.find("Failed to open the device"), std::string::npos);
}

TEST(FirmwarePlanner, NumVfsAboveFirmwareLimitRaisesIt) {
  HostFacts f = OnePf("0000:3b:00.0", "ens3f0", "cx6-vpi-eth-sriov-off.query");
  Planned p = RunPlan(Want("0000:3b:00.0", std::nullopt, 8), f);
  ASSERT_EQ(p.changes.size(), 2u) << p.Messages();
  EXPECT_EQ(p.changes[0].id, "firmware/0000:3b:00.0/SRIOV_EN");
  EXPECT_EQ(p.changes[0].after, true);
  EXPECT_EQ(FirmwareValue(p.changes[0]).value(), 1);
  EXPECT_EQ(p.changes[1].id, "firmware/0000:3b:00.0/NUM_OF_VFS");
  EXPECT_EQ(p.changes[1].before, 0);
  EXPECT_EQ(p.changes[1].after, 8);
  // Within the limit: nothing.
  f.firmware["0000:3b:00.0"] = FromTestdata("cx5-vpi-ib.query");
  EXPECT_TRUE(RunPlan(Want("0000:3b:00.0", std::nullopt, 16), f).changes.empty());
}

TEST(FirmwarePlanner, ValuesFromSavedPlansAreChecked) {
  Change c;
  c.id = "firmware/0000:86:00.0/LINK_TYPE_P1";
  c.attribute = "LINK_TYPE_P1";
  c.after = "token-ring";
  EXPECT_FALSE(FirmwareValue(c).ok());
  c.attribute = "NUM_OF_VFS";
  c.after = -1;
  EXPECT_FALSE(FirmwareValue(c).ok());
  c.attribute = "SRIOV_EN";
  c.after = false;
  EXPECT_EQ(FirmwareValue(c).value(), 0);
}

DesiredState WantFirmware(const std::string& pf, std::map<std::string, FirmwareSetting> fw,
                          const std::string& name = "ib0") {
  DesiredState d;
  NicSpec n;
  n.name = name;
  n.selector.root_devices = {pf};
  n.firmware = std::move(fw);
  d.nics.push_back(n);
  return d;
}

FirmwareSetting Bool(bool b) { return {FirmwareSetting::Kind::kBool, b ? "true" : "false"}; }
FirmwareSetting Int(long n) { return {FirmwareSetting::Kind::kInt, std::to_string(n)}; }
FirmwareSetting Str(std::string s) { return {FirmwareSetting::Kind::kString, std::move(s)}; }

TEST(FirmwarePlanner, RawBoolParameterIsARebootChange) {
  HostFacts f = OnePf("0000:5e:00.0", "ens1f0", "cx6lx-eth.query");
  Planned p = RunPlan(WantFirmware("0000:5e:00.0", {{"IP_OVER_VXLAN_EN", Bool(true)}}), f);
  ASSERT_EQ(p.changes.size(), 1u) << p.Messages();
  const Change& c = p.changes[0];
  EXPECT_EQ(c.id, "firmware/0000:5e:00.0/IP_OVER_VXLAN_EN");
  EXPECT_EQ(c.before, false);
  EXPECT_EQ(c.after, true);
  EXPECT_EQ(c.disruption, Disruption::kReboot);
  EXPECT_EQ(c.field_path, "spec.nics[0].firmware.IP_OVER_VXLAN_EN");
  EXPECT_EQ(FirmwareSetText(c).value(), "1");
  EXPECT_TRUE(p.diags.empty()) << p.Messages();
}

// True(1) is true, 1, "True" and "TRUE"; _256KB(1) is "_256KB" and 1; 8 is 8 and 0x8.
TEST(FirmwarePlanner, ValuesEqualToNextBootInAnySpellingAreNoChange) {
  HostFacts f = OnePf("0000:5e:00.0", "ens1f0", "cx6lx-eth.query");
  Planned p = RunPlan(WantFirmware("0000:5e:00.0", {{"SRIOV_EN", Bool(true)},
                                                    {"FPP_EN", Int(1)},
                                                    {"UCTX_EN", Str("TRUE")},
                                                    {"MEMIC_SIZE_LIMIT", Str("_256kb")},
                                                    {"NUM_OF_VFS", Str("0x8")},
                                                    {"CQE_COMPRESSION", Str("BALANCED")}}),
                      f);
  EXPECT_TRUE(p.changes.empty()) << p.changes[0].id;
  EXPECT_TRUE(p.diags.empty()) << p.Messages();
  // A different value by name: a change whose after is the name as written.
  Planned q = RunPlan(WantFirmware("0000:5e:00.0", {{"CQE_COMPRESSION", Str("AGGRESSIVE")},
                                                    {"NUM_OF_VFS", Int(16)}}),
                      f);
  ASSERT_EQ(q.changes.size(), 2u) << q.Messages();
  EXPECT_EQ(q.changes[0].id, "firmware/0000:5e:00.0/CQE_COMPRESSION");
  EXPECT_EQ(q.changes[0].before, "BALANCED(0)");
  EXPECT_EQ(q.changes[0].after, "AGGRESSIVE");
  EXPECT_EQ(FirmwareSetText(q.changes[0]).value(), "AGGRESSIVE");
  EXPECT_EQ(q.changes[1].before, 8);
  EXPECT_EQ(q.changes[1].after, 16);
}

TEST(FirmwarePlanner, UnknownParameterIsAnErrorNamingTheField) {
  HostFacts f = OnePf("0000:5e:00.0", "ens1f0", "cx6lx-eth.query");
  Planned p = RunPlan(WantFirmware("0000:5e:00.0", {{"ATS_ENABLED", Bool(true)}}), f);
  EXPECT_TRUE(p.changes.empty());
  ASSERT_EQ(p.diags.size(), 1u) << p.Messages();
  EXPECT_EQ(p.diags[0].severity, Severity::kError);
  EXPECT_EQ(p.diags[0].path, "spec.nics[0].firmware.ATS_ENABLED");
  EXPECT_NE(p.diags[0].message.find("has no parameter ATS_ENABLED"), std::string::npos)
      << p.Messages();
  EXPECT_NE(p.diags[0].message.find("ConnectX6LX"), std::string::npos) << p.Messages();
}

// NAME[i]: the query prints arrays as "Array[0..7]", never the elements.
TEST(FirmwarePlanner, ArrayElementsAreErrorsNamingTheCard) {
  HostFacts f = OnePf("0000:18:00.0", "ibp24s0", "cx7-ib-wide.query");
  auto message = [&](const std::string& param) {
    Planned p = RunPlan(WantFirmware("0000:18:00.0", {{param, Int(3)}}), f);
    EXPECT_TRUE(p.changes.empty()) << param;
    EXPECT_EQ(p.diags.size(), 1u) << p.Messages();
    EXPECT_EQ(p.diags.empty() ? "" : p.diags[0].path, "spec.nics[0].firmware." + param);
    return p.diags.empty() ? "" : p.diags[0].message;
  };
  EXPECT_EQ(message("HOST_CHAINING_DESCRIPTORS[5]"),
            "the mstconfig query of 0000:18:00.0 prints HOST_CHAINING_DESCRIPTORS as "
            "Array[0..7], not its elements' values: provisioner cannot compare "
            "HOST_CHAINING_DESCRIPTORS[5] with the next boot and plans no change for it (set it "
            "by hand: `mstconfig -d 0000:18:00.0 -y set HOST_CHAINING_DESCRIPTORS[5]=<value>`)");
  EXPECT_EQ(message("HOST_CHAINING_DESCRIPTORS[3..9]"),
            "HOST_CHAINING_DESCRIPTORS[3..9] is outside HOST_CHAINING_DESCRIPTORS's elements on "
            "0000:18:00.0 (Array[0..7])");
  EXPECT_NE(message("MEMIC_BAR_SIZE[1]").find("MEMIC_BAR_SIZE of 0000:18:00.0 is not an array"),
            std::string::npos);
  EXPECT_NE(message("NO_SUCH_ARRAY[1]")
                .find("the firmware of 0000:18:00.0 (ConnectX7) has no parameter NO_SUCH_ARRAY"),
            std::string::npos);
}

TEST(FirmwarePlanner, TwoNicsOnOneCardAskingDifferentValuesIsAnErrorNamingBoth) {
  HostFacts f;
  f.pci = {Pf("0000:86:00.0", "ibs5f0"), Pf("0000:86:00.1", "ibs5f1")};
  f.firmware["0000:86:00.0"] = FromTestdata("cx5-vpi-ib.query");
  DesiredState d = WantFirmware("0000:86:00.0", {{"NUM_OF_VFS", Int(32)}}, "port1");
  d.nics.push_back(WantFirmware("0000:86:00.1", {{"NUM_OF_VFS", Int(64)}}, "port2").nics[0]);
  Planned p = RunPlan(d, f);
  ASSERT_EQ(p.diags.size(), 1u) << p.Messages();
  EXPECT_EQ(p.diags[0].path, "spec.nics[1].firmware.NUM_OF_VFS");
  EXPECT_NE(p.diags[0].message.find("nic port2 wants NUM_OF_VFS=64"), std::string::npos)
      << p.Messages();
  EXPECT_NE(p.diags[0].message.find("nic port1 (spec.nics[0].firmware.NUM_OF_VFS) wants "
                                    "NUM_OF_VFS=32"),
            std::string::npos)
      << p.Messages();
  // The same value in two spellings is one change, no error.
  d.nics[1].firmware["NUM_OF_VFS"] = Str("0x20");
  Planned same = RunPlan(d, f);
  EXPECT_TRUE(same.diags.empty()) << same.Messages();
  ASSERT_EQ(same.changes.size(), 1u);
  EXPECT_EQ(same.changes[0].after, 32);
  // linkType is one case of it: LINK_TYPE_P1 raw against linkType.
  d.nics[1].firmware = {{"LINK_TYPE_P1", Str("IB")}};
  d.nics[0].firmware.clear();
  d.nics[0].link_type = "eth";
  Planned link = RunPlan(d, f);
  ASSERT_EQ(link.diags.size(), 1u) << link.Messages();
  EXPECT_NE(link.diags[0].message.find("spec.nics[0].linkType"), std::string::npos)
      << link.Messages();
}

TEST(FirmwarePlanner, RawValuePendingForTheNextBootIsPendingReboot) {
  HostFacts f = OnePf("0000:86:00.0", "ibs5f0", "cx5-vpi-pending-eth.query");
  Planned p = RunPlan(WantFirmware("0000:86:00.0", {{"LINK_TYPE_P1", Str("eth")}}), f);
  EXPECT_TRUE(p.changes.empty());
  EXPECT_TRUE(p.diags.empty()) << p.Messages();
  ASSERT_EQ(p.next_boot.size(), 1u);
  EXPECT_NE(p.next_boot[0].reason.find("ETH(2) for the next boot, IB(1) now"), std::string::npos)
      << p.next_boot[0].reason;
}

TEST(FirmwareSetText, NamesAndNumbersFromSavedPlans) {
  Change c;
  c.id = "firmware/0000:86:00.0/CQE_COMPRESSION";
  c.attribute = "CQE_COMPRESSION";
  c.after = "AGGRESSIVE";
  EXPECT_EQ(FirmwareSetText(c).value(), "AGGRESSIVE");
  c.after = "x; reboot";
  EXPECT_FALSE(FirmwareSetText(c).ok());
  c.after = 7;
  EXPECT_EQ(FirmwareSetText(c).value(), "7");
  c.after = false;
  EXPECT_EQ(FirmwareSetText(c).value(), "0");
  c.attribute = "LINK_TYPE_P1";
  c.after = "eth";
  EXPECT_EQ(FirmwareSetText(c).value(), "2");
}

// roce.ecn where the netdev has no ecn/ (upstream mlx5): the card's
// ROCE_CC_PRIO_MASK_P<n> gains the priority; a card that is no ConnectX
// is an error naming the field; with ecn/ the firmware is left alone.
TEST(FirmwarePlanner, EcnWithoutSysfsGoesToRoceCcPrioMask) {
  HostFacts f = OnePf("0000:18:00.0", "enp24s0np0", "cx7-eth-ro.query");
  f.firmware["0000:18:00.0"].params["ROCE_CC_PRIO_MASK_P1"].next_boot = "1";
  f.roce.netdevs["enp24s0np0"] = RoceNetdevFacts();  // no ecn/
  DesiredState d = Want("0000:18:00.0", std::nullopt);
  d.nics[0].roce = NicRoceSpec{std::nullopt, std::nullopt, std::vector<int>{3, 4}, std::nullopt};
  EXPECT_EQ(FirmwareCardsToRead(d, f), std::set<std::string>{"0000:18:00.0"});
  Planned p = RunPlan(d, f);
  ASSERT_EQ(p.changes.size(), 1u) << p.Messages();
  EXPECT_EQ(p.changes[0].id, "firmware/0000:18:00.0/ROCE_CC_PRIO_MASK_P1");
  EXPECT_EQ(p.changes[0].before, 1);
  EXPECT_EQ(p.changes[0].after, 0x19);
  EXPECT_EQ(p.changes[0].field_path, "spec.nics[0].roce.ecn");
  EXPECT_EQ(p.changes[0].disruption, Disruption::kReboot);
  EXPECT_EQ(FirmwareSetText(p.changes[0]).value(), "25");

  f.roce.netdevs["enp24s0np0"].ecn_dir = true;  // NVIDIA's driver: the roce module's
  EXPECT_TRUE(RunPlan(d, f).changes.empty());
  EXPECT_TRUE(FirmwareCardsToRead(d, f).empty());

  f.roce.netdevs["enp24s0np0"].ecn_dir = false;
  f.pci[0].vendor = "8086";
  f.firmware.clear();
  p = RunPlan(d, f);
  EXPECT_TRUE(p.changes.empty());
  ASSERT_EQ(p.diags.size(), 1u);
  EXPECT_EQ(p.diags[0].path, "spec.nics[0].roce.ecn");
  EXPECT_NE(p.diags[0].message.find("is not an NVIDIA/Mellanox ConnectX"), std::string::npos)
      << p.Messages();
}

}  // namespace
}  // namespace provisioner
