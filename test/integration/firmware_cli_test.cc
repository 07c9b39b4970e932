// End-to-end: the firmware module with the real binary against the IB host
// tree, whose captured `mstconfig query` (run/provisioner/mstconfig/) says
// port 1 is InfiniBand.
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/call_log.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kCapture[] = "/run/provisioner/mstconfig/0000:86:00.0.query";

// host.yaml of cx5-ib's one port (ib0, ibs5f0) with `lines` (indented by six).
std::string Ib0Yaml(const std::string& lines) {
  return HostYaml(
      "  nics:\n    - name: ib0\n      nicSelector:\n        pfNames: [ibs5f0]\n" + lines,
      "ib-worker1");
}

// host.yaml of the HGX tree's first rail PF (rail0, 0000:1a:00.0) with
// `nic_fields` (indented by six), written to `file`.
std::string Rail0Yaml(const std::string& file, const std::string& nic_fields) {
  return WriteTempFile(
      file,
      HostYaml(
          "  nics:\n    - name: rail0\n      nicSelector: { rootDevices: [\"0000:1a:00.0\"] }\n" +
              nic_fields,
          "hgx"));
}

std::string LinkTypeYaml(const std::string& link_type) {
  return WriteTempFile("host-" + link_type + ".yaml",
                       Ib0Yaml("      linkType: " + link_type + "\n"));
}

// A firmware setting on cx5-ib that takes effect at the next boot: planned
// as one reboot change, applied with exit 3 (mstconfig's Next Boot column in
// the capture), then pending a reboot: no new change, no second write.
struct RebootCase {
  const char* name;
  const char* nic_fields;  // under ib0, indented by six
  const char* id;
  json before, after;
  const char* capture_line;  // the parameter's line in the capture after apply
  const char* plan_text;     // what plan's text says of the pending change
};

class FirmwareRebootTest : public ::testing::TestWithParam<RebootCase> {};

TEST_P(FirmwareRebootTest, PlansARebootApplyExits3ThenPendingReboot) {
  const RebootCase& t = GetParam();
  std::string root = ExtractHost("cx5-ib");
  std::string yaml = WriteTempFile(std::string("host-") + t.name + ".yaml", Ib0Yaml(t.nic_fields));

  RunResult plan = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  json j = ParseJson(plan);
  ASSERT_EQ(j["changes"].size(), 1u) << j.dump(2);
  const json& c = j["changes"][0];
  EXPECT_EQ(c["id"], t.id);
  EXPECT_EQ(c["module"], "firmware");
  EXPECT_EQ(c["before"], t.before);
  EXPECT_EQ(c["after"], t.after);
  EXPECT_EQ(c["disruption"], "reboot");
  EXPECT_EQ(j["summary"]["rebootRequired"], true);

  RunResult detailed = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(detailed.exit_code, 2) << detailed.err;

  RunResult apply = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  EXPECT_TRUE(Exists(root + "/run/reboot-required"));
  std::string capture = ReadFile(root + kCapture);
  EXPECT_NE(capture.find(t.capture_line), std::string::npos) << capture;

  // The change is set for the next boot: nothing new to do, a pending
  // reboot, from mstconfig's Next Boot column (issue 38 item 9: plan said
  // "No changes" and --detailed-exitcode 0).
  json k = PlanJson(yaml, root);
  EXPECT_TRUE(k["changes"].empty()) << k.dump(2);
  EXPECT_EQ(k["summary"]["pendingReboot"], 1) << k.dump(2);
  EXPECT_EQ(k["pendingReboot"], json({t.id})) << k.dump(2);
  RunResult text = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(text.exit_code, 2) << text.out << text.err;
  EXPECT_EQ(text.out.find("No changes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("1 change pending reboot"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(t.plan_text), std::string::npos) << text.out;
  RunResult second = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(ReadFile(root + kCapture), capture);
}

INSTANTIATE_TEST_SUITE_P(
    Settings, FirmwareRebootTest,
    ::testing::Values(
        // linkType on the IB tree: to Ethernet.
        RebootCase{"IbTreeToEth", "      linkType: eth\n", "firmware/0000:86:00.0/LINK_TYPE_P1",
                   "ib", "eth",
                   "*        LINK_TYPE_P1                        IB(1)           IB(1)           "
                   "ETH(2)",
                   "~ firmware 0000:86:00.0 LINK_TYPE_P1: ib -> eth  (pending reboot"},
        // The raw parameter through the same path (the capture reads
        // ATS_ENABLED False(0) in every column).
        RebootCase{"RawAtsEnabled", "      firmware: { ATS_ENABLED: true }\n",
                   "firmware/0000:86:00.0/ATS_ENABLED", false, true,
                   "*        ATS_ENABLED                         False(0)        False(0)        "
                   "True(1)",
                   "True(1) for the next boot, False(0) now"}),
    [](const ::testing::TestParamInfo<RebootCase>& info) { return info.param.name; });

TEST(FirmwareCliTest, DiscoverShowsTheFirmwareAndLinks) {
  std::string root = ExtractHost("cx5-ib");
  RunResult d = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  json j = json::parse(d.out, nullptr, false);
  const json* nic = nullptr;
  for (const json& n : j["nics"]) {
    if (n["pciAddress"] == "0000:86:00.0") nic = &n;
  }
  ASSERT_NE(nic, nullptr) << j.dump(2);
  const json& fw = (*nic)["firmware"];
  EXPECT_EQ(fw["deviceType"], "ConnectX5");
  EXPECT_EQ(fw["source"], kCapture);
  EXPECT_EQ(fw["parameters"]["LINK_TYPE_P1"]["nextBoot"], "IB(1)");
  EXPECT_EQ(fw["parameters"]["LINK_TYPE_P1"]["current"], "IB(1)");
  EXPECT_EQ(fw["parameters"]["NUM_OF_VFS"]["nextBoot"], "16");
  ASSERT_EQ((*nic)["links"].size(), 1u) << nic->dump(2);
  EXPECT_EQ((*nic)["links"][0]["name"], "ibs5f0");
  EXPECT_EQ((*nic)["links"][0]["mtu"], 2044);
}

TEST(FirmwareCliTest, MatchingLinkTypeIsNoChange) {
  std::string root = ExtractHost("cx5-ib");
  RunResult plan = Provisioner({"plan", LinkTypeYaml("ib"), "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(plan.exit_code, 0) << plan.out << plan.err;
}

TEST(FirmwareCliTest, UnreadableCaptureIsAnErrorNamingIt) {
  std::string root = ExtractHost("cx5-ib");
  {
    std::ofstream out(root + kCapture, std::ios::trunc);
    out << "-E- Failed to open the device\n";
  }
  const std::string plan = Refused("plan", LinkTypeYaml("eth"), root);
  EXPECT_THAT(plan, HasSubstr("spec.nics[0].linkType"));
  EXPECT_THAT(plan, HasSubstr("Failed to open the device"));
}

TEST(FirmwareCliTest, UnknownRawParameterIsAnErrorAtItsLine) {
  std::string root = ExtractHost("cx5-ib");
  std::string yaml =
      WriteTempFile("host-unknown.yaml", Ib0Yaml("      firmware:\n        NO_SUCH_PARAM: 1\n"));
  EXPECT_THAT(Refused("plan", yaml, root),
              HasSubstr(":11:24: spec.nics[0].firmware.NO_SUCH_PARAM: the firmware of "
                        "0000:86:00.0 (ConnectX5) has no parameter NO_SUCH_PARAM"));
}

// On the live root the firmware module runs mstconfig. The real binary on
// root "/" in a private mount and network namespace (unshare -m -n, as root):
// /sys is the hgx-h100 tree (8 ConnectX-7 cards each near its GPU, 2
// ConnectX-6 Dx), the tree's netdev names are veths (the live link backend
// reads rtnetlink), and `mstconfig` is a stand-in first on PATH that answers
// for a ConnectX card after 0.5 s, logging "start <device> <ns>" and "end
// <device> <ns>".
class LiveFirmwareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ExtractHost("hgx-h100");
    bin_ = MakeTempDir("fw-bin");
    log_ = bin_ + "/calls.log";
    std::string answer = ReadFile(RunfilePath("modules/firmware/testdata/cx7-ib-wide.query"));
    std::ofstream(bin_ + "/answer.query") << answer;
    std::ofstream(bin_ + "/mstconfig")
        << "#!/bin/sh\n"
           "# mstconfig -e -d <device> query\n"
           "echo \"start $3 $(date +%s%N)\" >> " << log_ << "\n"
           "sleep 0.5\n"
           "cat " << bin_ << "/answer.query\n"
           "echo \"end $3 $(date +%s%N)\" >> " << log_ << "\n";
    ASSERT_EQ(::chmod((bin_ + "/mstconfig").c_str(), 0755), 0);
  }

  // provisioner ARGS on the live root of the namespace.
  RunResult Live(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        "/usr/bin/unshare", "-m", "-n", "--", "/bin/sh", "-c",
        "root=$0 bin=$1 i=0\n"
        "shift\n"
        "for n in $(ls \"$root/sys/class/net\"); do\n"
        "  [ \"$n\" = lo ] && continue\n"
        "  ip link add \"$n\" type veth peer name \"peer$i\" || exit 97\n"
        "  ip link set \"$n\" up || exit 97\n"
        "  i=$((i + 1))\n"
        "done\n"
        "mount --bind \"$root/sys\" /sys || exit 98\n"
        "exec env PATH=\"$bin:$PATH\" \"$@\"",
        root_, bin_, ProvisionerBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::Run(argv);
  }

  // The stand-in's calls: every card called once, all at once.
  void ExpectOnceEachAtOnce(size_t cards) {
    provisioner::testing::ExpectOnceEachAtOnce(ReadFile(log_), cards);
  }

  std::string Rails(const std::string& extra) {
    return WriteTempFile(
        "rails.yaml",
        HostYaml("  rails:\n    count: allGpus\n    nic:\n      name: \"gpu{n}-nic\"\n"
                 "      nicSelector: { vendor: \"15b3\", deviceID: \"1021\" }\n"
                 "      numVfs: 12\n" +
                     extra,
                 "gpu-worker1"));
  }

  std::string root_, bin_, log_;
};

// spec.rails count: allGpus with numVfs within sriov_totalvfs: no field asks
// the firmware, no query.
TEST_F(LiveFirmwareTest, PlanWithoutFirmwareFieldsRunsNoQuery) {
  RunResult plan = Live({"plan", Rails(""), "-o", "json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  EXPECT_FALSE(Exists(log_)) << ReadFile(log_);
}

// linkType on the rails: expanded after discovery (count: allGpus), each
// rail's card (nearGpu) queried once, all 8 at once; the ConnectX-6 Dx cards,
// which no rail selects, not at all.
TEST_F(LiveFirmwareTest, LinkTypeOnRailsQueriesTheirCardsOnceAtOnce) {
  RunResult plan = Live({"plan", Rails("      linkType: ib\n"), "-o", "json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  ExpectOnceEachAtOnce(8);
  EXPECT_EQ(ReadCallLog(ReadFile(log_)).count("0000:1b:00.0"), 0u);
  EXPECT_EQ(ReadCallLog(ReadFile(log_)).count("0000:9d:00.0"), 0u);
  json j = json::parse(plan.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << plan.out;
  EXPECT_EQ(j["changes"].size(), 8u) << j.dump(2);  // numVfs 0 -> 12 on each rail
  for (const json& c : j["changes"]) {
    EXPECT_NE(c["module"], "firmware") << c.dump();  // the stand-in's cards read IB already
  }
}

// discover without host.yaml reports every card's firmware: all 10 queried,
// once each, at once.
TEST_F(LiveFirmwareTest, DiscoverQueriesEveryCardOnceAtOnce) {
  RunResult d = Live({"discover", "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  ExpectOnceEachAtOnce(10);
  EXPECT_NE(d.out.find("\"LINK_TYPE_P1\""), std::string::npos);
}

// discover and snapshot read each card's running firmware version and PSID
// from its RDMA device (fw_ver, board_id) and run no `mstflint query` (issue
// 35.9: a second a card on the boot path); a stand-in mstflint first on PATH
// records any run. The snapshot tree holds those sysfs files, and its
// discovery reports the same.
TEST_F(LiveFirmwareTest, DiscoverAndSnapshotReadTheFirmwareVersionFromSysfs) {
  const std::string ran = bin_ + "/mstflint.ran";
  std::ofstream(bin_ + "/mstflint") << "#!/bin/sh\n"
                                       "echo \"$*\" >> "
                                    << ran << "\nexit 1\n";
  ASSERT_EQ(::chmod((bin_ + "/mstflint").c_str(), 0755), 0);
  RunResult d = Live({"discover", "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_FALSE(Exists(ran)) << ReadFile(ran);
  json j = json::parse(d.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << d.out;
  size_t with_version = 0;
  for (const json& nic : j["nics"]) {
    if (!nic.contains("firmware") || !nic["firmware"].contains("version")) continue;
    const json& fw = nic["firmware"];
    const bool cx7 = nic.value("deviceID", nic.value("deviceId", "")) == "1021" ||
                     fw.value("psid", "") == "MT_0000000838";
    EXPECT_EQ(fw["version"], cx7 ? "28.39.1002" : "22.39.1002") << nic.dump();
    EXPECT_EQ(fw["psid"], cx7 ? "MT_0000000838" : "MT_0000000359") << nic.dump();
    EXPECT_EQ(fw["versionSource"].get<std::string>().rfind("/sys/class/infiniband/mlx5_", 0), 0u)
        << nic.dump();
    ++with_version;
  }
  EXPECT_GE(with_version, 10u) << d.out;
  const std::string out = MakeTempDir("fw-snap") + "/tree";
  RunResult snap = Live({"snapshot", "--output-dir", out});
  ASSERT_EQ(snap.exit_code, 0) << snap.out << snap.err;
  EXPECT_FALSE(Exists(ran)) << ReadFile(ran);
  EXPECT_FALSE(Exists(out + "/run/provisioner/mstflint"));
  RunResult tree = Provisioner({"discover", "--root", out, "-o", "json"});
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_NE(tree.out.find("\"psid\": \"MT_0000000838\""), std::string::npos) << tree.out;
}

// On the bundled HGX H100 tree with the ConnectX-7 captures: a misspelt
// parameter is a plan error naming each card; SR-IOV off or NUM_OF_VFS below
// numVfs beside numVfs is a validation error naming both fields' positions.
TEST(FirmwareCliTest, MisspeltParameterAndVfConflictsOnTheHgxTree) {
  std::string root = ExtractHost("hgx-h100-pcie");
  auto yaml = [](const std::string& nic_fields) { return Rail0Yaml("host-hgx.yaml", nic_fields); };
  auto refused = [&](const std::string& nic_fields) {
    return Refused("plan", yaml(nic_fields), root);
  };
  EXPECT_THAT(refused("      firmware: { ATS_ENABLE: true }\n"),
              HasSubstr(":9:31: spec.nics[0].firmware.ATS_ENABLE: the firmware of 0000:1a:00.0 "
                        "(ConnectX7) has no parameter ATS_ENABLE"));
  EXPECT_THAT(
      refused("      numVfs: 8\n      firmware: { SRIOV_EN: false }\n"),
      AllOf(HasSubstr("host-hgx.yaml:10:29: spec.nics[0].firmware.SRIOV_EN: SRIOV_EN false"),
            HasSubstr("but numVfs 8 ("), HasSubstr("host-hgx.yaml:9:15) asks for VFs")));
  EXPECT_THAT(refused("      numVfs: 12\n      firmware: { NUM_OF_VFS: 8 }\n"),
              AllOf(HasSubstr(":10:31: spec.nics[0].firmware.NUM_OF_VFS: NUM_OF_VFS 8"),
                    HasSubstr("host-hgx.yaml:9:15) asks for 12")));
}

// The HGX tree's ConnectX-7 captures are in the layout of mstflint >= 4.26:
// an "RO" column before the name (NUM_OF_PF read-only). linkType reads the
// card, plans LINK_TYPE_P1 and applies it; asking to set the read-only
// parameter is a plan error that says so.
TEST(FirmwareCliTest, ReadOnlyColumnOnTheHgxTree) {
  std::string root = ExtractHost("hgx-h100-pcie");
  const std::string capture = "/run/provisioner/mstconfig/0000:1a:00.0.query";
  ASSERT_NE(ReadFile(root + capture).find(" RO     NUM_OF_PF"), std::string::npos);
  auto yaml = [](const std::string& nic_fields) {
    return Rail0Yaml("host-hgx-ro.yaml", nic_fields);
  };
  const std::string ib = yaml("      linkType: ib\n");
  json j = PlanJson(ib, root);
  ASSERT_EQ(j["changes"].size(), 1u) << j.dump();
  EXPECT_EQ(j["changes"][0]["id"], "firmware/0000:1a:00.0/LINK_TYPE_P1");
  EXPECT_EQ(j["changes"][0]["before"], "eth");
  EXPECT_EQ(j["changes"][0]["after"], "ib");

  RunResult apply = Provisioner({"apply", ib, "--root", root});
  EXPECT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  const std::string after = ReadFile(root + capture);
  EXPECT_NE(after.find("*       LINK_TYPE_P1"), std::string::npos) << after;
  EXPECT_NE(after.find(" RO     NUM_OF_PF"), std::string::npos) << after;

  RunResult ro = Provisioner({"plan", yaml("      firmware: { NUM_OF_PF: 2 }\n"), "--root", root});
  EXPECT_EQ(ro.exit_code, 1);
  EXPECT_NE(ro.err.find(":9:30: spec.nics[0].firmware.NUM_OF_PF: 0000:1a:00.0 NUM_OF_PF is "
                        "read-only (mstconfig marks it RO)"),
            std::string::npos)
      << ro.err;
}

// The upstream mlx5 driver has no /sys/class/net/<if>/ecn (the HGX tree's
// netdevs have none): roce.ecn and roce.cnp go to the card's firmware,
// ROCE_CC_PRIO_MASK_P1 (the wanted priorities added to the mask),
// CNP_DSCP_P1 and CNP_802P_PRIO_P1, for the next boot.
TEST(FirmwareCliTest, EcnAndCnpWithoutEcnSysfsGoToTheFirmware) {
  std::string root = ExtractHost("hgx-h100-pcie");
  const std::string capture = root + "/run/provisioner/mstconfig/0000:1a:00.0.query";
  ASSERT_FALSE(Exists(root + "/sys/class/net/enp26s0np0/ecn"));
  // Congestion control on priorities 0 and 1 only, for the next boot.
  std::string text = ReadFile(capture);
  const size_t at = text.find("        ROCE_CC_PRIO_MASK_P1");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, text.find('\n', at) - at, "*       ROCE_CC_PRIO_MASK_P1    255    3    3");
  std::ofstream(capture) << text;
  const std::string yaml =
      Rail0Yaml("host-ecn.yaml", "      roce: { ecn: [3], cnp: { dscp: 26, priority: 3 } }\n");
  json j = PlanJson(yaml, root);
  std::map<std::string, std::pair<json, json>> got;
  for (const json& c : j["changes"]) {
    got[c["id"]] = {c["before"], c["after"]};
    EXPECT_EQ(c["disruption"], "reboot") << c.dump();
  }
  EXPECT_EQ(got, (std::map<std::string, std::pair<json, json>>{
                     {"firmware/0000:1a:00.0/ROCE_CC_PRIO_MASK_P1", {3, 11}},
                     {"firmware/0000:1a:00.0/CNP_DSCP_P1", {48, 26}},
                     {"firmware/0000:1a:00.0/CNP_802P_PRIO_P1", {6, 3}}}))
      << j.dump();

  RunResult apply = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  RunResult again = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(json::parse(again.out)["changes"].empty()) << again.out;
}

// MAX_ACC_OUT_READ is listed only once ADVANCED_PCI_SETTINGS is 1: asked
// together, both are planned, ADVANCED_PCI_SETTINGS first, and one apply
// sets both (set, re-query, set), one reboot; asked alone, the error says
// what to add.
TEST(FirmwareCliTest, HiddenPciParameterAfterAdvancedPciSettings) {
  std::string root = ExtractHost("hgx-h100-pcie");
  const std::string capture = root + "/run/provisioner/mstconfig/0000:1a:00.0.query";
  ASSERT_EQ(ReadFile(capture).find("MAX_ACC_OUT_READ"), std::string::npos);
  auto yaml = [](const std::string& firmware) {
    return Rail0Yaml("host-adv.yaml", "      firmware: { " + firmware + " }\n");
  };
  EXPECT_THAT(Refused("plan", yaml("MAX_ACC_OUT_READ: 32"), root),
              HasSubstr("spec.nics[0].firmware.MAX_ACC_OUT_READ: the firmware of 0000:1a:00.0 "
                        "lists MAX_ACC_OUT_READ only with ADVANCED_PCI_SETTINGS=1 (it reads "
                        "False(0)): add ADVANCED_PCI_SETTINGS: true"));

  const std::string both = yaml("MAX_ACC_OUT_READ: 32, ADVANCED_PCI_SETTINGS: true");
  json j = PlanJson(both, root);
  ASSERT_EQ(j["changes"].size(), 2u) << j.dump();
  EXPECT_EQ(j["changes"][0]["id"], "firmware/0000:1a:00.0/ADVANCED_PCI_SETTINGS");
  EXPECT_EQ(j["changes"][0]["after"], true);
  EXPECT_EQ(j["changes"][1]["id"], "firmware/0000:1a:00.0/MAX_ACC_OUT_READ");
  EXPECT_EQ(j["changes"][1]["before"], 0);
  EXPECT_EQ(j["changes"][1]["after"], 32);

  RunResult apply = Provisioner({"apply", both, "--root", root});
  EXPECT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  const std::string after = ReadFile(capture);
  EXPECT_NE(after.find("*       ADVANCED_PCI_SETTINGS"), std::string::npos) << after;
  EXPECT_NE(after.find("MAX_ACC_OUT_READ"), std::string::npos) << after;
  RunResult again = Provisioner({"plan", both, "--root", root, "-o", "json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(json::parse(again.out)["changes"].empty()) << again.out;
}

}  // namespace
}  // namespace provisioner::testing
