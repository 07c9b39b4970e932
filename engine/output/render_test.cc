#include "engine/output/render.h"

#include "engine/plan/change_text.h"
#include "gtest/gtest.h"
#include "yaml-cpp/yaml.h"

namespace provisioner {
namespace {

Change NumVfs(int before, int after) {
  Change c;
  c.id = "sriov/0000:af:00.0/numVfs";
  c.module = "sriov";
  c.target = "0000:af:00.0";
  c.attribute = "numVfs";
  c.before = before;
  c.after = after;
  c.reason = "nic gpu1-nic wants " + std::to_string(after) + " VFs";
  return c;
}

TEST(RenderTest, PlanJsonHasContractKeys) {
  Plan p;
  p.changes.push_back(NumVfs(0, 12));
  auto j = PlanToJson(p, "/");
  EXPECT_EQ(j["formatVersion"], 1);
  EXPECT_EQ(j["root"], "/");
  ASSERT_EQ(j["changes"].size(), 1u);
  EXPECT_EQ(j["changes"][0]["id"], "sriov/0000:af:00.0/numVfs");
  EXPECT_EQ(j["changes"][0]["before"], 0);
  EXPECT_EQ(j["changes"][0]["after"], 12);
  EXPECT_EQ(j["changes"][0]["disruption"], "live");
  EXPECT_EQ(j["summary"]["changes"], 1);
  EXPECT_EQ(j["summary"]["rebootRequired"], false);
  EXPECT_TRUE(j["warnings"].is_array());
}

TEST(RenderTest, SymbolsLikeTerraform) {
  EXPECT_STREQ(ChangeSymbol(NumVfs(0, 12)), "+");
  EXPECT_STREQ(ChangeSymbol(NumVfs(12, 0)), "-");
  // Between two non-zero counts apply writes 0 first: every VF goes away.
  EXPECT_STREQ(ChangeSymbol(NumVfs(4, 8)), "-/+");
  EXPECT_EQ(ChangeAction(NumVfs(16, 4)), Action::kReplace);
  EXPECT_EQ(ReplacementNote(NumVfs(16, 4)), "destroys 16 VFs, creates 4");
  EXPECT_EQ(ReplacementNote(NumVfs(0, 4)), "");
  // A flag that flips is a value that changes, not a thing created.
  Change trust = NumVfs(0, 0);
  trust.attribute = "trust";
  trust.before = false;
  trust.after = true;
  EXPECT_STREQ(ChangeSymbol(trust), "~");
  EXPECT_EQ(ChangeAction(trust), Action::kChange);
  // Any disruption beyond live/reboot (a device reset, a link taken down)
  // replaces, whatever the attribute.
  Change fw = trust;
  fw.disruption = Disruption::kFirmwareReset;
  EXPECT_EQ(ChangeAction(fw), Action::kReplace);
  EXPECT_EQ(ReplacementNote(fw), "firmware-reset");
  Change reboot = trust;
  reboot.disruption = Disruption::kReboot;
  EXPECT_EQ(ChangeAction(reboot), Action::kChange);
}

TEST(RenderTest, ReplacementIsCountedAndMarked) {
  Plan p;
  p.changes.push_back(NumVfs(16, 4));
  p.changes.push_back(NumVfs(0, 4));
  auto j = PlanToJson(p, "/");
  EXPECT_EQ(j["changes"][0]["action"], "replace");
  EXPECT_EQ(j["changes"][1]["action"], "add");
  EXPECT_EQ(j["summary"]["replace"], 1);
  EXPECT_EQ(j["summary"]["add"], 1);
  EXPECT_EQ(j["summary"]["change"], 0);
  EXPECT_EQ(j["summary"]["remove"], 0);
  EXPECT_EQ(j["summary"]["changes"], 2);
  std::string t = RenderPlanTable(p, false);
  EXPECT_NE(
      t.find("  -/+ sriov 0000:af:00.0 numVfs: 16 -> 4  (forces replacement: destroys 16 VFs, "
             "creates 4)\n"),
      std::string::npos)
      << t;
  EXPECT_NE(t.find("Plan: 1 to add, 0 to change, 1 to replace, 0 to remove."), std::string::npos)
      << t;
}

// Keys and values that a YAML 1.1 reader (PyYAML, Ansible) would take for
// another type are quoted; plain words stay plain.
TEST(RenderTest, YamlQuotesWhatAReaderWouldRetype) {
  nlohmann::json j = {{"0000:17:01.0", "x"},
                      {"on", 1},
                      {"y", 2},
                      {"12:30", 3},
                      {"1e3", 4},
                      {"~", 5},
                      {"null", 6},
                      {"<<", 7},
                      {"=", 8},
                      {"", 9},
                      {"numVfs", 1e20},
                      {"k8s.v1.cni.cncf.io/resourceName", "yes"}};
  std::string yaml = JsonToYaml(j);
  for (const char* quoted :
       {"\"0000:17:01.0\": ", "\"on\": ", "\"y\": ", "\"12:30\": ", "\"1e3\": ", "\"~\": ",
        "\"null\": ", "\"<<\": ", "\"=\": ", "\"\": "}) {
    EXPECT_NE(yaml.find(quoted), std::string::npos) << quoted << "\n" << yaml;
  }
  EXPECT_NE(yaml.find("\nk8s.v1.cni.cncf.io/resourceName: \"yes\"\n"), std::string::npos) << yaml;
  // A float keeps its dot (YAML 1.1 reads 1e+20 as a string).
  EXPECT_NE(yaml.find("numVfs: 1.0e+20\n"), std::string::npos) << yaml;
}

TEST(RenderTest, PlanTableReadable) {
  Plan p;
  p.changes.push_back(NumVfs(0, 12));
  Change r = NumVfs(4, 8);
  r.disruption = Disruption::kReboot;
  p.changes.push_back(r);
  std::string t = RenderPlanTable(p, false);
  EXPECT_NE(t.find("  + sriov 0000:af:00.0 numVfs: 0 -> 12\n"), std::string::npos) << t;
  EXPECT_NE(t.find("      # nic gpu1-nic wants 12 VFs\n"), std::string::npos) << t;
  EXPECT_NE(t.find("(forces replacement: destroys 4 VFs, creates 8; reboot)"), std::string::npos)
      << t;
  EXPECT_NE(t.find("Plan: 1 to add, 0 to change, 1 to replace, 0 to remove; 1 takes effect after a "
                   "reboot."),
            std::string::npos)
      << t;
  EXPECT_EQ(RenderPlanTable(Plan(), false), "No changes. The host matches the desired state.\n");
}

// Issue 31 (low): "matches the desired state" says how many PFs with VFs
// host.yaml leaves alone; JSON adds summary.unmanagedPfsWithVfs only then.
TEST(RenderTest, NoChangesSaysHowManyPfsWithVfsAreUnmanaged) {
  Plan p;
  EXPECT_FALSE(PlanToJson(p, "/")["summary"].contains("unmanagedPfsWithVfs"));
  p.unmanaged_pfs_with_vfs = 2;
  EXPECT_EQ(RenderPlanTable(p, false),
            "No changes. The host matches the desired state (2 PFs with VFs are not in "
            "host.yaml).\n");
  EXPECT_EQ(PlanToJson(p, "/")["summary"]["unmanagedPfsWithVfs"], 2);
  p.unmanaged_pfs_with_vfs = 1;
  EXPECT_EQ(RenderPlanTable(p, false),
            "No changes. The host matches the desired state (1 PF with VFs is not in "
            "host.yaml).\n");
}

// A PFC change flaps the link: shown and counted as "link-flap", in the
// JSON too, and no reboot (the saved record reads back the same).
TEST(RenderTest, LinkFlapIsShownAndCountedButNeedsNoReboot) {
  Plan p;
  Change c = MakeChange("roce", "ens6f0np0", "pfc", nlohmann::json::array(),
                        nlohmann::json::array({3}), Disruption::kLive, kPhaseRoce, "PFC", "");
  c.link_flap = true;
  p.changes.push_back(c);
  p.changes.push_back(NumVfs(0, 12));
  auto j = PlanToJson(p, "/");
  EXPECT_EQ(j["changes"][0]["disruption"], "link-flap");
  EXPECT_EQ(j["changes"][1]["disruption"], "live");
  EXPECT_EQ(j["summary"]["linkFlaps"], 1);
  EXPECT_EQ(j["summary"]["rebootRequired"], false);
  EXPECT_FALSE(p.RebootRequired());
  std::string t = RenderPlanTable(p, false);
  // Issue 38 item 4: changed in place, "~ ... (link flap)", counted once
  // (a change, not a replacement as well).
  EXPECT_EQ(j["changes"][0]["action"], "change");
  EXPECT_EQ(j["summary"]["replace"], 0);
  EXPECT_NE(t.find("  ~ roce ens6f0np0 pfc: [] -> [3]  (link flap)\n"), std::string::npos) << t;
  EXPECT_NE(t.find("Plan: 1 to add, 1 to change, 0 to remove; 1 flap a link (down and up) now."),
            std::string::npos)
      << t;
  auto back = ParseChangeRecord(ChangeToRecord(c));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->link_flap);
  EXPECT_EQ(back->disruption, Disruption::kLive);
}

// Multi-line strings become literal blocks and read back byte for byte;
// strings a block would not keep exactly stay double-quoted.
TEST(RenderTest, YamlMultiLineStringsRoundTrip) {
  for (const std::string& s :
       {std::string("{\n  \"a\": [\n    1\n  ]\n}\n"), std::string("no newline at end\nx"),
        std::string("two\n\n"), std::string(" leading\n"), std::string("tab\there\n"),
        std::string("plain")}) {
    nlohmann::json j = {{"data", {{"config.json", s}}}};
    std::string yaml = JsonToYaml(j);
    YAML::Node y = YAML::Load(yaml);
    EXPECT_EQ(y["data"]["config.json"].as<std::string>(), s) << yaml;
  }
  std::string yaml = JsonToYaml({{"k", "line1\nline2\n"}});
  EXPECT_NE(yaml.find("k: |"), std::string::npos) << yaml;
}

// A change for part of a PF's VFs (a vfGroup's range) shows its range.
TEST(RenderTest, TableShowsAVfRange) {
  Plan p;
  p.changes.push_back(MakeChange("vf", "0000:af:00.0", "vlan", nullptr, 100, Disruption::kLive, 0,
                                 "nic n wants VFs 0-3 VLAN 100", ""));
  p.changes.back().id += "#0-3";  // the vfGroup's range
  EXPECT_NE(RenderPlanTable(p, false).find("vf 0000:af:00.0 vlan#0-3: (none) -> 100"),
            std::string::npos)
      << RenderPlanTable(p, false);
}

// Issue 38 item 4: a long value (the udev rules of the names module, one
// 2,000-character line today) is summarised in the table; JSON keeps it.
TEST(RenderTest, LongValuesAreSummarisedInTheTable) {
  nlohmann::json rules = nlohmann::json::array();
  for (int i = 0; i < 16; ++i) {
    rules.push_back("SUBSYSTEM==\"net\", KERNELS==\"0000:" + std::to_string(10 + i) +
                    ":00.0\", NAME=\"rail" + std::to_string(i) + "\"");
  }
  Plan p;
  p.changes.push_back(MakeChange("names", "/etc/udev/rules.d/10-provisioner-names.rules", "rules",
                                 nullptr, rules, Disruption::kLive, kPhaseNames, "", ""));
  const std::string t = RenderPlanTable(p, false);
  EXPECT_NE(t.find("(16 items)"), std::string::npos) << t;
  for (size_t start = 0, end; start < t.size(); start = end + 1) {
    end = t.find('\n', start);
    if (end == std::string::npos) end = t.size();
    EXPECT_LE(end - start, 200u) << t.substr(start, end - start);
  }
  EXPECT_EQ(PlanToJson(p, "/")["changes"][0]["after"], rules);
  EXPECT_EQ(ShowValue("a\nb\nc\n"), "a\u2026 (3 lines)");
  EXPECT_EQ(ShowValue(nullptr), "(none)");
}

}  // namespace
}  // namespace provisioner
