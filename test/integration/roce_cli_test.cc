// The roce module end to end with the real binary, on trees of the
// generated cx5-roce-qos host (mlx5 ECN sysfs on both PF netdevs, their DCB
// state in the capture files run/provisioner/dcb/<if>): plan lists one change
// per attribute that differs, apply under --root writes exactly those files,
// the next plan is empty; discover, doctor and snapshot show the state.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kHostYaml = HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce: { trust: dscp, pfc: [3], ecn: [3] }
    - name: rail1
      nicSelector: { vendor: "15b3", pfNames: ["ens6f1np1"] }
      roce: { trust: dscp, pfc: [3], ecn: [3] }
)");

// The captured port buffers and cable length of the preset (both ports).
constexpr const char* kBuffers =
    "{\"buffer\":{\"prio2buffer\":[0,0,0,0,0,0,0,0],\"sizes\":[130944,130944,0,0,0,0,0,0],"
    "\"total\":262016},\"cableLength\":7,";

// Every file apply may touch: both netdevs' ECN enables and DCB captures.
std::map<std::string, std::string> State(const std::string& root) {
  std::map<std::string, std::string> out;
  for (const char* nd : {"ens6f0np0", "ens6f1np1"}) {
    const std::string dcb = std::string("/run/provisioner/dcb/") + nd;
    out[dcb] = ReadFile(root + dcb);
    for (const char* point : {"roce_np", "roce_rp"}) {
      for (int p = 0; p < 8; ++p) {
        const std::string f =
            std::string("/sys/class/net/") + nd + "/ecn/" + point + "/enable/" + std::to_string(p);
        out[f] = ReadFile(root + f);
      }
    }
  }
  return out;
}

TEST(RoceCliTest, PlanApplyPlanOnTheTree) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  const auto before = State(root);

  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::vector<std::string> ids;
  const json plan = json::parse(p.out);  // alive while iterated
  for (const auto& c : plan["changes"]) {
    ids.push_back(c["id"]);
    // mlx5 toggles the port's link to set PFC: a disruption of its own.
    EXPECT_EQ(c["disruption"], c["attribute"] == "pfc" ? "link-flap" : "live") << c.dump();
    EXPECT_NE(
        c["reason"].get<std::string>().find("live; re-applied at every boot by the systemd unit"),
        std::string::npos);
  }
  EXPECT_EQ(
      ids, (std::vector<std::string>{"roce/ens6f0np0/trust", "roce/ens6f0np0/pfc",
                                     "roce/ens6f0np0/ecn.roce_np.3", "roce/ens6f0np0/ecn.roce_rp.3",
                                     "roce/ens6f1np1/trust", "roce/ens6f1np1/pfc"}));
  EXPECT_EQ(plan["summary"]["linkFlaps"], 2);
  EXPECT_EQ(plan["summary"]["rebootRequired"], false);
  RunResult text = Provisioner({"plan", yaml, "--root", root});
  EXPECT_NE(
      text.out.find("~ roce ens6f0np0 pfc: [] -> [3]  (link flap)"),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("; 2 flap a link (down and up) now."), std::string::npos) << text.out;

  // Live, if disruptive: applied now, no reboot (exit 0, not 3).
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_FALSE(Exists(root + "/run/reboot-required"));
  auto expect = before;
  expect["/run/provisioner/dcb/ens6f0np0"] =
      std::string(kBuffers) + "\"dcbx\":\"firmware\",\"pfc\":[3],\"trust\":\"dscp\"}\n";
  expect["/run/provisioner/dcb/ens6f1np1"] =
      std::string(kBuffers) + "\"dcbx\":\"firmware\",\"pfc\":[3],\"trust\":\"dscp\"}\n";
  expect["/sys/class/net/ens6f0np0/ecn/roce_np/enable/3"] = "1\n";
  expect["/sys/class/net/ens6f0np0/ecn/roce_rp/enable/3"] = "1\n";
  EXPECT_EQ(State(root), expect);

  RunResult again = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
}

// NVIDIA's out-of-tree mlx5 has ecn/roce_np/cnp_dscp and cnp_802p_prio:
// roce.cnp is then set there, live (no firmware, no reboot).
TEST(RoceCliTest, CnpIsLiveWhereTheDriverHasItsFiles) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string np = root + "/sys/class/net/ens6f0np0/ecn/roce_np/";
  ASSERT_TRUE(std::filesystem::is_directory(np));
  std::ofstream(np + "cnp_dscp") << "48\n";
  std::ofstream(np + "cnp_802p_prio") << "6\n";
  const std::string yaml = WriteTempFile("host-cnp.yaml", HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce: { cnp: { dscp: 26, priority: 3 } }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const json plan = json::parse(p.out);
  ASSERT_EQ(plan["changes"].size(), 2u) << p.out;
  EXPECT_EQ(plan["changes"][0]["id"], "roce/ens6f0np0/cnp.dscp");
  EXPECT_EQ(plan["changes"][0]["before"], 48);
  EXPECT_EQ(plan["changes"][1]["id"], "roce/ens6f0np0/cnp.priority");
  EXPECT_EQ(plan["changes"][1]["disruption"], "live");
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(ReadFile(np + "cnp_dscp"), "26\n");
  EXPECT_EQ(ReadFile(np + "cnp_802p_prio"), "3\n");
  ExpectConverged(yaml, root);
}

TEST(RoceCliTest, DiscoverShowsTrustPfcAndEcn) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  RunResult d = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  std::map<std::string, json> roce;
  const json doc = json::parse(d.out);  // alive while iterated
  for (const auto& nic : doc["nics"]) {
    if (!nic.contains("roce")) continue;
    for (const auto& r : nic["roce"]) roce[r["netdev"]] = r;
  }
  ASSERT_EQ(roce.size(), 2u) << d.out;
  EXPECT_EQ(roce["ens6f0np0"]["trust"], "pcp");
  EXPECT_EQ(roce["ens6f0np0"]["pfc"], json::array());
  EXPECT_EQ(roce["ens6f0np0"]["ecn"]["roceNp"], json::array());
  EXPECT_EQ(roce["ens6f1np1"]["ecn"]["roceRp"], json::parse("[0,1,2,3,4,5,6,7]"));
  RunResult t = Provisioner({"discover", "--root", root});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("RoCE QoS"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("ens6f1np1  pcp    []   [0,1,2,3,4,5,6,7]"), std::string::npos) << t.out;
}

TEST(RoceCliTest, DoctorChecksThePriorityNcclUses) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  auto checks = [&]() {
    RunResult d = Provisioner({"doctor", "--root", root, "-o", "json"});
    EXPECT_NE(d.exit_code, -1) << d.err;
    std::map<std::string, json> out;
    const json doc = json::parse(d.out);  // alive while iterated
    for (const auto& c : doc["checks"]) {
      if (c["id"] == "roce.nccl-priority") out[c["target"]] = c;
    }
    return out;
  };
  auto before = checks();
  ASSERT_EQ(before.size(), 2u);
  EXPECT_EQ(before["ens6f0np0"]["verdict"], "fail");
  EXPECT_NE(before["ens6f0np0"]["summary"].get<std::string>().find("priority 3"),
            std::string::npos);
  EXPECT_NE(before["ens6f0np0"].dump().find("/sys/class/net/ens6f0np0/ecn/roce_np/enable/3"),
            std::string::npos);
  EXPECT_NE(before["ens6f0np0"]["fix"].get<std::string>().find("pfc: [3]"), std::string::npos);

  ASSERT_EQ(Provisioner({"apply", yaml, "--root", root}).exit_code, 0);
  auto after = checks();
  EXPECT_EQ(after["ens6f0np0"]["verdict"], "ok") << after["ens6f0np0"];
  EXPECT_EQ(after["ens6f1np1"]["verdict"], "ok") << after["ens6f1np1"];

  // NCCL configured for another traffic class: 160 is DSCP 40, priority 5.
  ASSERT_TRUE(TreeWriter(root).WriteFile("/etc/nccl.conf", "NCCL_IB_TC=160\n", 0644).ok());
  auto other = checks();
  EXPECT_EQ(other["ens6f0np0"]["verdict"], "fail");
  EXPECT_NE(other["ens6f0np0"]["summary"].get<std::string>().find(
                "PFC, ECN roce_np, ECN roce_rp not enabled on priority 5"),
            std::string::npos)
      << other["ens6f0np0"];
  EXPECT_NE(other["ens6f0np0"].dump().find("160 (/etc/nccl.conf)"), std::string::npos);
}

TEST(RoceCliTest, SnapshotKeepsTheDcbCaptureAndEcn) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string out = MakeTempDir("roce-snap") + "/snap";
  RunResult s = Provisioner({"snapshot", "--output", out, "--root", root});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(ReadFile(out + "/run/provisioner/dcb/ens6f0np0"),
            std::string(kBuffers) + "\"dcbx\":\"firmware\",\"pfc\":[],\"trust\":\"pcp\"}\n");
  EXPECT_EQ(ReadFile(out + "/run/provisioner/pause/ens6f0np0"), "{\"rx\":true,\"tx\":true}\n");
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  RunResult a = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  RunResult b = Provisioner({"plan", yaml, "--root", out, "-o", "json"});
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(json::parse(a.out)["changes"], json::parse(b.out)["changes"]);
}

// The rest of lossless RoCE on the tree: DCBX host-managed, a custom DSCP
// map entry, global pause off, the RDMA device's default ToS; apply writes
// the captures and mlx5_ib's traffic_class, the next plan is empty, doctor
// sees who owns PFC and the forced traffic class.
TEST(RoceCliTest, DcbxDscpMapPauseAndTos) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string yaml = WriteTempFile("host-rest.yaml", HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce: { dcbx: host, trust: dscp, dscpMap: { 26: 5 }, pfc: [5], pause: false, tos: 106 }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const json plan = json::parse(p.out);
  EXPECT_EQ(Ids(plan["changes"]),
            (std::vector<std::string>{"roce/ens6f0np0/dcbx", "roce/ens6f0np0/trust",
                                      "roce/ens6f0np0/dscpMap", "roce/ens6f0np0/pause",
                                      "roce/ens6f0np0/pfc", "roce/ens6f0np0/tos"}));
  EXPECT_EQ(plan["changes"][5]["before"], nullptr);
  EXPECT_EQ(plan["changes"][5]["after"], 106);

  // Doctor before: DCBX in the firmware is a warning naming the fix.
  RunResult d0 = Provisioner({"doctor", "--root", root, "-o", "json"});
  bool dcbx_warned = false;
  const json doc0 = json::parse(d0.out);  // alive while iterated
  for (const auto& c : doc0["checks"]) {
    if (c["id"] == "roce.dcbx" && c["target"] == "ens6f0np0") {
      dcbx_warned = c["verdict"] == "warn" &&
                    c["fix"].get<std::string>().find("dcbx: host") != std::string::npos;
    }
  }
  EXPECT_TRUE(dcbx_warned) << d0.out;

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(ReadFile(root + "/run/provisioner/dcb/ens6f0np0"),
            std::string(kBuffers) +
                "\"dcbx\":\"host\",\"dscpMap\":{\"26\":5},\"pfc\":[5],\"trust\":\"dscp\"}\n");
  EXPECT_EQ(ReadFile(root + "/run/provisioner/pause/ens6f0np0"), "{\"rx\":false,\"tx\":false}\n");
  EXPECT_EQ(ReadFile(root + "/sys/class/infiniband/mlx5_0/tc/1/traffic_class"), "106\n");
  // Untouched: the other port.
  EXPECT_EQ(ReadFile(root + "/run/provisioner/pause/ens6f1np1"), "{\"rx\":false,\"tx\":false}\n");
  ExpectConverged(yaml, root);

  // Discover shows it; doctor takes the forced ToS 106 (DSCP 26) through the
  // custom map to priority 5, where PFC is on.
  RunResult disc = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(disc.exit_code, 0) << disc.err;
  EXPECT_NE(disc.out.find("\"dscpMap\": {\n"), std::string::npos);
  EXPECT_NE(disc.out.find("\"tosFile\": \"/sys/class/infiniband/mlx5_0/tc/1/traffic_class\""),
            std::string::npos)
      << disc.out;
  RunResult d1 = Provisioner({"doctor", "--root", root, "-o", "json"});
  const json doc1 = json::parse(d1.out);
  int seen = 0;
  for (const auto& c : doc1["checks"]) {
    if (c["target"] != "ens6f0np0") continue;
    if (c["id"] == "roce.dcbx") {
      ++seen;
      EXPECT_EQ(c["verdict"], "ok") << c;
    }
    if (c["id"] == "roce.nccl-priority") {
      ++seen;
      EXPECT_NE(c.dump().find("the DSCP map's entry for DSCP 26"), std::string::npos) << c;
      EXPECT_NE(c["summary"].get<std::string>().find("priority 5"), std::string::npos) << c;
    }
  }
  EXPECT_EQ(seen, 2) << d1.out;
}

// Bad values: the schema (line and column), keys of dscpMap that are no DSCP.
TEST(RoceCliTest, RestOfLosslessBadValues) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string yaml = WriteTempFile("host-bad.yaml", HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce: { trust: dscp, dscpMap: { 64: 3, 26: 9 }, tos: 300, dcbx: lldp, pause: "off" }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1);
  for (const char* want : {"host-bad.yaml:9:", "spec.nics[0].roce.dscpMap.64: \"64\" is not a DSCP",
                           "spec.nics[0].roce.dscpMap.26: 9 exceeds the maximum 7",
                           "spec.nics[0].roce.tos: 300 exceeds the maximum 255",
                           "spec.nics[0].roce.dcbx: \"lldp\" is not one of: host, firmware",
                           "spec.nics[0].roce.pause"}) {
    EXPECT_NE(p.err.find(want), std::string::npos) << want << "\n" << p.err;
  }
}

// Long optics: the cable length (PFC delay) and the port buffers, applied on
// the tree as mlx5 takes them (PFC first; the buffers before a longer
// cable), verified, shown by discover and doctor; the next plan is empty.
const std::string kBufferYaml = HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce:
        trust: dscp
        pfc: [3]
        cableLength: CABLE
        buffers: { prio2buffer: [0, 0, 0, 1, 0, 0, 0, 0], sizes: [65536, 195968] }
)");

std::string Cable(int cable) {
  std::string y = kBufferYaml;
  return y.replace(y.find("CABLE"), 5, std::to_string(cable));
}

std::string BufferYaml(const std::string& name, int cable) {
  return WriteTempFile(name, Cable(cable));
}

TEST(RoceCliTest, CableLengthAndBuffersApplyVerifyAndShow) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string yaml = BufferYaml("host-buffers.yaml", 30);
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const json plan = json::parse(p.out);
  EXPECT_EQ(Ids(plan["changes"]),
            (std::vector<std::string>{"roce/ens6f0np0/trust", "roce/ens6f0np0/pfc",
                                      "roce/ens6f0np0/buffers", "roce/ens6f0np0/cableLength"}));
  EXPECT_EQ(
      plan["changes"][2]["before"],
      json::parse(R"({"prio2buffer":[0,0,0,0,0,0,0,0],"sizes":[130944,130944,0,0,0,0,0,0]})"));
  EXPECT_EQ(plan["changes"][3]["before"], 7);
  EXPECT_EQ(plan["changes"][3]["after"], 30);

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(ReadFile(root + "/run/provisioner/dcb/ens6f0np0"),
            "{\"buffer\":{\"prio2buffer\":[0,0,0,1,0,0,0,0],\"sizes\":[65536,195968,0,0,0,0,0,0],"
            "\"total\":262016},\"cableLength\":30,\"dcbx\":\"firmware\",\"manualBuffer\":true,"
            "\"pfc\":[3],\"trust\":\"dscp\",\"xoffCableLength\":30}\n");
  ExpectConverged(yaml, root);

  RunResult disc = Provisioner({"discover", "--root", root});
  ASSERT_EQ(disc.exit_code, 0) << disc.err;
  EXPECT_NE(disc.out.find("RoCE port buffers:"), std::string::npos) << disc.out;
  EXPECT_NE(disc.out.find("30 m"), std::string::npos) << disc.out;
  RunResult dj = Provisioner({"discover", "--root", root, "-o", "json"});
  EXPECT_NE(dj.out.find("\"cableLength\": 30"), std::string::npos) << dj.out;
}

// 900 m needs an xoff of (301 + 2.16 * 900) * 100 Gb/s + 2.72 * 1500 =
// 228580 bytes, more than lossless buffer 1 holds: mlx5 answers ENOMEM;
// apply stops there and rolls the buffers, PFC and trust back.
TEST(RoceCliTest, ACableTooLongForTheBuffersIsRefusedAndRolledBack) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  // Buffers that leave mlx5 its 4 shared cells, so that the rollback's
  // buffer write is one the driver takes.
  const std::string before =
      "{\"buffer\":{\"prio2buffer\":[0,0,0,0,0,0,0,0],\"sizes\":[130944,130048,0,0,0,0,0,0],"
      "\"total\":262016},\"cableLength\":7,\"dcbx\":\"firmware\",\"pfc\":[],\"trust\":\"pcp\"}\n";
  TreeWriter w(root);
  ASSERT_TRUE(w.WriteFile("/run/provisioner/dcb/ens6f0np0", before, 0644).ok());
  const std::string yaml = BufferYaml("host-far.yaml", 900);
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_NE(a.exit_code, 0);
  EXPECT_NE(a.err.find("roce/ens6f0np0/cableLength"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("ENOMEM"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("lossless buffer 1 of 195968 bytes is not enough"), std::string::npos)
      << a.err;
  // The settings rolled back; mlx5 stays in manual buffer mode (no write
  // leaves it: only a driver load does), its thresholds for 7 m again.
  json after = json::parse(ReadFile(root + "/run/provisioner/dcb/ens6f0np0"));
  EXPECT_EQ(after["manualBuffer"], true);
  EXPECT_EQ(after["xoffCableLength"], 7);
  after.erase("manualBuffer");
  after.erase("xoffCableLength");
  EXPECT_EQ(after, json::parse(before));
}

// A DCB capture of ens6f0np0 the driver starts from, a roce spec, the
// capture after apply; the next plan is empty.
struct DcbApplyCase {
  const char* name;
  std::string start;      // run/provisioner/dcb/ens6f0np0 before
  std::string yaml;       // host.yaml
  const char* plan_says;  // in plan's text ("" for nothing to check)
  std::string want;       // the capture after apply
};

class DcbApplyTest : public ::testing::TestWithParam<DcbApplyCase> {};

TEST_P(DcbApplyTest, ApplyLeavesTheCaptureThenNoChange) {
  const DcbApplyCase& t = GetParam();
  const std::string root = BuildPresetTree("cx5-roce-qos");
  TreeWriter w(root);
  ASSERT_TRUE(w.WriteFile("/run/provisioner/dcb/ens6f0np0", t.start, 0644).ok());
  const std::string yaml = WriteTempFile(std::string(t.name) + ".yaml", t.yaml);
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.out.find(t.plan_says), std::string::npos) << p.out;
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(ReadFile(root + "/run/provisioner/dcb/ens6f0np0"), t.want);
  ExpectConverged(yaml, root);
}

INSTANTIATE_TEST_SUITE_P(
    Buffers, DcbApplyTest,
    ::testing::Values(
        // Every byte in buffer 0, buffer 1 empty: moving PFC priority 3 to
        // buffer 1 with a size in the same message is ENOMEM on mlx5 (the
        // mapping is checked against the sizes the port has); apply then
        // sends the sizes first and the mapping after them.
        DcbApplyCase{
            "BuffersMovingPfcToAnEmptyBufferTakeTwoSteps",
            "{\"buffer\":{\"prio2buffer\":[0,0,0,0,0,0,0,0],\"sizes\":[262016,0,0,0,0,0,0,0],"
            "\"total\":262016},\"cableLength\":7,\"pfc\":[3],\"trust\":\"dscp\"}\n",
            Cable(7), "",
            "{\"buffer\":{\"prio2buffer\":[0,0,0,1,0,0,0,0],\"sizes\":[65536,195968,0,0,0,0,0,0],"
            "\"total\":262016},\"cableLength\":7,\"manualBuffer\":true,\"pfc\":[3],"
            "\"trust\":\"dscp\",\"xoffCableLength\":7}\n"},
        // Issue 35 item 6: mlx5 applies a cable length to its lossless
        // buffers only in manual buffer mode, which a changing buffer write
        // sets and a driver load clears (the capture's manualBuffer and
        // xoffCableLength model it). A cableLength alone on a freshly loaded
        // driver: apply sets it and re-sends the buffers (a cell off and
        // back), so xoff follows; verify checks it.
        DcbApplyCase{
            "CableLengthReachesTheBuffersOutsideManualMode",
            "{\"buffer\":{\"prio2buffer\":[0,0,0,1,0,0,0,0],\"sizes\":[65536,195968,0,0,0,0,0,0],"
            "\"total\":262016},\"cableLength\":7,\"pfc\":[3],\"trust\":\"dscp\","
            "\"xoffCableLength\":7}\n",
            HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce: { cableLength: 30 }
)"),
            "port buffers re-sent",
            "{\"buffer\":{\"prio2buffer\":[0,0,0,1,0,0,0,0],\"sizes\":[65536,195968,0,0,0,0,0,0],"
            "\"total\":262016},\"cableLength\":30,\"manualBuffer\":true,\"pfc\":[3],"
            "\"trust\":\"dscp\",\"xoffCableLength\":30}\n"}),
    [](const ::testing::TestParamInfo<DcbApplyCase>& info) { return info.param.name; });

// Done-when of issue 35: a buffer size of 65500 (not whole 128-byte cells)
// is refused at the field with the nearest sizes mlx5 keeps.
TEST(RoceCliTest, ABufferSizeOutsideTheCellsIsRefused) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string yaml = WriteTempFile("host-cells.yaml", HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce: { pfc: [3], buffers: { sizes: [65500, 130944] } }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("host-cells.yaml:9:44: spec.nics[0].roce.buffers.sizes[0]: 65500 is not "
                       "a whole number of mlx5's 128-byte buffer cells (the driver would keep "
                       "65408): use 65408 or 65536"),
            std::string::npos)
      << p.err;
}

// Issue 35 item 7: an upstream kernel (no NVIDIA tc/<port>/traffic_class)
// with configfs mounted and rdma_cm loaded, and no rdma_cm/<dev> directory
// yet (every boot): the plan sets tos through it, apply makes the directory
// (the tree models the files the kernel then makes), verify reads the value
// back, the next plan is empty, and the boot apply makes it again.
TEST(RoceCliTest, TosThroughRdmaCmConfigfsMakesTheDirectory) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  std::filesystem::remove(root + "/sys/class/infiniband/mlx5_0/tc/1/traffic_class");
  std::filesystem::create_directories(root + "/sys/kernel/config/rdma_cm");
  const std::string yaml = WriteTempFile("host-tos.yaml", HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce: { tos: 106 }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const json plan = json::parse(p.out);
  ASSERT_EQ(plan["changes"].size(), 1u) << p.out;
  const json& c = plan["changes"][0];
  EXPECT_EQ(c["id"], "roce/ens6f0np0/tos");
  EXPECT_EQ(c["before"], nullptr);
  EXPECT_EQ(c["after"], 106);
  EXPECT_NE(c["reason"].get<std::string>().find(
                "in /sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos (after mkdir "
                "/sys/kernel/config/rdma_cm/mlx5_0, which makes the kernel create it)"),
            std::string::npos)
      << c;

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(ReadFile(root + "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"), "106\n");
  EXPECT_EQ(ReadFile(root + "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode"),
            "RoCE v2\n");
  RunResult again = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;

  // After a reboot the directory is gone: planned (and made) again.
  std::filesystem::remove_all(root + "/sys/kernel/config/rdma_cm/mlx5_0");
  RunResult boot = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(boot.exit_code, 0) << boot.err;
  EXPECT_EQ(ReadFile(root + "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos"), "106\n");
}

// Bad values with file:line:column.
TEST(RoceCliTest, CableLengthAndBuffersBadValues) {
  const std::string root = BuildPresetTree("cx5-roce-qos");
  const std::string yaml = WriteTempFile("host-badbuf.yaml", HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { vendor: "15b3", pfNames: ["ens6f0np0"] }
      roce: { cableLength: 0, buffers: { prio2buffer: [0, 0, 8], sizes: [-1] } }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1);
  for (const char* want :
       {"host-badbuf.yaml:9:28: spec.nics[0].roce.cableLength: 0 is below the minimum 1",
        "spec.nics[0].roce.buffers.prio2buffer", "spec.nics[0].roce.buffers.sizes[0]"}) {
    EXPECT_NE(p.err.find(want), std::string::npos) << want << "\n" << p.err;
  }
}

TEST(RoceCliTest, ErrorsNameTheFieldAndWhy) {
  // The plain cx5-roce tree: no ECN sysfs, no DCB capture.
  const std::string root = MakeTempDir("cx5");
  ASSERT_TRUE(ExtractTtar(HostTreePath("cx5-roce"), root).ok());
  const std::string yaml = WriteTempFile("host.yaml", kHostYaml);
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("host.yaml:9:22: spec.nics[0].roce.trust: the DCB trust state of "
                       "ens6f0np0 could not be read"),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("/run/provisioner/dcb/ens6f0np0: ENOENT"), std::string::npos) << p.err;
  // No ecn/ (as with the upstream mlx5): the firmware's, whose capture the
  // tree lacks.
  EXPECT_NE(p.err.find("spec.nics[0].roce.ecn: ens6f0np0 has no ECN settings in sysfs"),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("set in the firmware of 0000:af:00.0, which cannot be read: no captured "
                       "query /run/provisioner/mstconfig/0000:af:00.0.query"),
            std::string::npos)
      << p.err;
  // A priority out of range: the schema, with line and column.
  std::string bad = kHostYaml;
  bad.replace(bad.find("pfc: [3]"), 8, "pfc: [9]");
  RunResult v = Provisioner({"plan", WriteTempFile("bad.yaml", bad), "--root", root});
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_NE(v.err.find("bad.yaml:9:34: spec.nics[0].roce.pfc[0]: 9 exceeds the maximum 7"),
            std::string::npos)
      << v.err;
}

}  // namespace
}  // namespace provisioner::testing
