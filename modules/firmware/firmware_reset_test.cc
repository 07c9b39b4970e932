// spec.firmware.activation: reset and nics[].firmwareReset: the mstfwreset
// query parser, the DPU-mode check, the stand-in rewrites of a captured
// mstconfig query, and the planner's changes.
#include "modules/firmware/firmware_reset.h"

#include <map>
#include <optional>

#include "gtest/gtest.h"
#include "modules/firmware/firmware_planner.h"
#include "modules/firmware/mstconfig_query.h"
#include "test/support/fake_pci_module.h"
#include "test/support/files.h"

namespace provisioner {
namespace {

std::string Testdata(const std::string& name) {
  return testing::ReadFile("modules/firmware/testdata/" + name);
}

FirmwareFacts Facts(const std::string& text) {
  auto q = ParseMstconfigQuery(text);
  EXPECT_TRUE(q.ok()) << q.status().message();
  FirmwareFacts fw;
  if (q.ok()) {
    fw.device_type = q->device_type;
    fw.params = q->params;
  }
  return fw;
}

TEST(MstfwresetQuery, LevelsOfACard) {
  auto q = ParseMstfwresetQuery(Testdata("mstfwreset-cx5.query"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->levels.size(), 4u);
  EXPECT_TRUE(q->levels.at(0));
  EXPECT_FALSE(q->levels.at(1));
  EXPECT_TRUE(q->levels.at(3));
  EXPECT_EQ(q->default_level, 3);
  EXPECT_EQ(ResetLevelRefusal(*q), "");
}

TEST(MstfwresetQuery, LevelThreeNotSupported) {
  auto q = ParseMstfwresetQuery(Testdata("mstfwreset-no-level3.query"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_FALSE(q->levels.at(3));
  EXPECT_EQ(q->default_level, 4);
  EXPECT_NE(ResetLevelRefusal(*q).find("reset level 3 (Driver restart and PCI reset) is Not "
                                       "Supported"),
            std::string::npos);
}

// Each layout mstfwreset printed (testdata/README.md): levels, types and the
// reset-sync owners with their default.
TEST(MstfwresetQuery, SyncOwnersInEveryLayout) {
  struct Case {
    const char* file;
    bool has_sync;
    std::map<int, bool> sync;
    std::optional<int> default_sync;
    size_t types;
  };
  const Case cases[] = {
      {"mstfwreset-v4.14-no-sync.query", false, {}, std::nullopt, 2},
      {"mstfwreset-cx5.query", true, {{0, true}, {1, true}}, 0, 5},
      {"mstfwreset-no-level3.query", true, {{0, true}, {1, false}}, 0, 5},
      {"mstfwreset-bf3-nic-driver-only.query", true, {{0, false}, {1, true}}, 1, 5},
      {"mstfwreset-cx7-mroq.query", true, {{0, true}, {1, true}, {2, false}}, 0, 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    auto q = ParseMstfwresetQuery(Testdata(c.file));
    ASSERT_TRUE(q.ok()) << q.status().message();
    EXPECT_EQ(q->has_sync, c.has_sync);
    EXPECT_EQ(q->sync, c.sync);
    EXPECT_EQ(q->default_sync, c.default_sync);
    EXPECT_EQ(q->types.size(), c.types);
    EXPECT_EQ(q->default_type, 0);
    EXPECT_TRUE(q->levels.at(3) || std::string(c.file) == "mstfwreset-no-level3.query");
    // The reset-request methods of the MROQ layout are no sync owners.
    EXPECT_EQ(q->sync.count(3), 0u);
  }
}

std::string Command(const char* file, const std::map<std::string, std::string>& drivers) {
  auto q = ParseMstfwresetQuery(Testdata(file));
  EXPECT_TRUE(q.ok()) << q.status().message();
  if (!q.ok()) return "";
  FirmwareResetMethod m = ChooseFirmwareReset(*q, drivers);
  if (m.kind == FirmwareResetMethod::kNone) return "reboot: " + m.why;
  return FirmwareResetCommand("0000:86:00.0", m);
}

// Issue 35.1: the driver-owned sync where supported, else the tool stops
// and starts the driver, else provisioner unbinds the PFs; none: the reboot.
// `--skip_driver` only when provisioner stopped the driver.
TEST(FirmwareResetChoice, FollowsTheSyncOwnersAndTheBoundDrivers) {
  const std::map<std::string, std::string> mlx5 = {{"0000:86:00.0", "mlx5_core"},
                                                   {"0000:86:00.1", "mlx5_core"}};
  const std::map<std::string, std::string> unbound = {{"0000:86:00.0", ""}};
  const std::map<std::string, std::string> vfio = {{"0000:86:00.0", "mlx5_core"},
                                                   {"0000:86:00.1", "vfio-pci"}};
  EXPECT_EQ(Command("mstfwreset-cx5.query", mlx5),
            "mstfwreset -d 0000:86:00.0 -y -l 3 --sync 1 reset");
  EXPECT_EQ(Command("mstfwreset-cx7-mroq.query", mlx5),
            "mstfwreset -d 0000:86:00.0 -y -l 3 --sync 1 reset");
  EXPECT_EQ(Command("mstfwreset-bf3-nic-driver-only.query", mlx5),
            "mstfwreset -d 0000:86:00.0 -y -l 3 --sync 1 reset");
  // No driver to take the sync: the tool's (nothing bound for it to stop).
  EXPECT_EQ(Command("mstfwreset-cx5.query", unbound),
            "mstfwreset -d 0000:86:00.0 -y -l 3 --sync 0 reset");
  // Sync 1 not supported: the tool stops and starts mlx5_core.
  auto no_driver_sync = Testdata("mstfwreset-cx5.query");
  no_driver_sync.replace(no_driver_sync.find("Supported     \n", no_driver_sync.find("1: Driver")),
                         14, "Not supported ");
  auto q = ParseMstfwresetQuery(no_driver_sync);
  ASSERT_TRUE(q.ok()) << q.status().message();
  FirmwareResetMethod m = ChooseFirmwareReset(*q, mlx5);
  EXPECT_EQ(m.kind, FirmwareResetMethod::kToolStopsDriver);
  EXPECT_EQ(FirmwareResetCommand("0000:86:00.0", m),
            "mstfwreset -d 0000:86:00.0 -y -l 3 --sync 0 reset");
  // Before v4.16 (no sync block): the tool's, without --sync.
  EXPECT_EQ(Command("mstfwreset-v4.14-no-sync.query", mlx5),
            "mstfwreset -d 0000:86:00.0 -y -l 3 reset");
  // A driver mstfwreset does not stop (vfio-pci on a PF): provisioner unbinds.
  m = ChooseFirmwareReset(*q, vfio);
  EXPECT_EQ(m.kind, FirmwareResetMethod::kUnbindFirst);
  EXPECT_EQ(FirmwareResetCommand("0000:86:00.0", m),
            "unbind 0000:86:00.0 (mlx5_core), 0000:86:00.1 (vfio-pci); mstfwreset -d 0000:86:00.0 "
            "-y -l 3 --sync 0 --skip_driver reset; bind them again");
  // Only the driver's sync and no mlx5_core bound: the reboot, with the reason.
  EXPECT_EQ(Command("mstfwreset-bf3-nic-driver-only.query", unbound),
            "reboot: mstfwreset query lists only the driver as the reset-sync owner (sync 1), and "
            "no PF of the card is bound to mlx5_core to take it");
  EXPECT_EQ(Command("mstfwreset-bf3-nic-driver-only.query", vfio),
            "reboot: mstfwreset query lists only the driver as the reset-sync owner (sync 1), "
            "which needs mlx5_core, but 0000:86:00.1 to vfio-pci is bound");
  EXPECT_EQ(Command("mstfwreset-no-level3.query", mlx5)
                .rfind("reboot: mstfwreset query says reset "
                       "level 3",
                       0),
            0u);
  // The check of issue 35.1, over every layout and binding: a bound card's
  // command never has --skip_driver unless provisioner unbinds it first.
  for (const char* file : {"mstfwreset-v4.14-no-sync.query", "mstfwreset-cx5.query",
                           "mstfwreset-bf3-nic-driver-only.query", "mstfwreset-cx7-mroq.query"}) {
    for (const auto* drivers : {&mlx5, &vfio}) {
      const std::string cmd = Command(file, *drivers);
      if (cmd.find("--skip_driver") != std::string::npos) {
        EXPECT_EQ(cmd.rfind("unbind ", 0), 0u) << file << ": " << cmd;
      }
    }
  }
}

TEST(MstfwresetQuery, ErrorsNameTheLine) {
  auto e = ParseMstfwresetQuery("-E- Failed to open device: 0000:86:00.0.\n");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message(), "mstfwreset: -E- Failed to open device: 0000:86:00.0.");
  auto bad = ParseMstfwresetQuery("Reset-levels:\nx: Warm Reboot -Supported\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2: not a number before the colon"),
            std::string::npos);
  EXPECT_FALSE(ParseMstfwresetQuery("nothing here\n").ok());
}

TEST(BlueFieldDpuMode, OffloadEngineEnabledIsDpuMode) {
  FirmwareFacts fw;
  fw.params["INTERNAL_CPU_OFFLOAD_ENGINE"] = {"DISABLED(1)", "ENABLED(0)", "ENABLED(0)", false};
  EXPECT_NE(BlueFieldDpuMode(fw).find("a BlueField in DPU mode (INTERNAL_CPU_OFFLOAD_ENGINE "
                                      "ENABLED(0))"),
            std::string::npos);
  fw.params["INTERNAL_CPU_OFFLOAD_ENGINE"] = {"DISABLED(1)", "DISABLED(1)", "DISABLED(1)", false};
  EXPECT_EQ(BlueFieldDpuMode(fw), "");  // NIC mode
  FirmwareFacts old;  // sriov-network-operator's check, without the offload engine
  old.params["INTERNAL_CPU_MODEL"] = {std::nullopt, "EMBEDDED_CPU(1)", "EMBEDDED_CPU(1)", false};
  old.params["INTERNAL_CPU_PAGE_SUPPLIER"] = {std::nullopt, "ECPF(0)", "ECPF(0)", false};
  old.params["INTERNAL_CPU_ESWITCH_MANAGER"] = {std::nullopt, "ECPF(0)", "ECPF(0)", false};
  EXPECT_NE(BlueFieldDpuMode(old), "");
  old.params["INTERNAL_CPU_PAGE_SUPPLIER"] = {std::nullopt, "EXT_HOST_PF(1)", "EXT_HOST_PF(1)",
                                              false};
  EXPECT_EQ(BlueFieldDpuMode(old), "");
  EXPECT_EQ(BlueFieldDpuMode(Facts(Testdata("cx5-vpi-ib.query"))), "");
}

TEST(MstconfigRewrite, ActivateMakesCurrentTheNextBoot) {
  const std::string pending = Testdata("cx5-vpi-pending-eth.query");
  FirmwareFacts before = Facts(pending);
  ASSERT_EQ(PendingParams(before).count("LINK_TYPE_P1"), 1u);
  auto after = ActivateNextBootValues(pending);
  ASSERT_TRUE(after.ok()) << after.status().message();
  FirmwareFacts fw = Facts(*after);
  EXPECT_EQ(*fw.params.at("LINK_TYPE_P1").current, "ETH(2)");
  EXPECT_EQ(fw.params.at("LINK_TYPE_P1").next_boot, "ETH(2)");
  EXPECT_TRUE(PendingParams(fw).empty());
  EXPECT_EQ(fw.params.size(), before.params.size());
  // The '*' stays where next boot differs from default (ETH vs IB default).
  EXPECT_NE(after->find("*        LINK_TYPE_P1"), std::string::npos) << *after;
}

TEST(MstconfigRewrite, NvResetMakesNextBootTheDefault) {
  auto after = ResetNextBootToDefaults(Testdata("cx5-vpi-ib.query"));
  ASSERT_TRUE(after.ok()) << after.status().message();
  FirmwareFacts fw = Facts(*after);
  EXPECT_EQ(fw.params.at("NUM_OF_VFS").next_boot, "8");  // default 8, was 16
  EXPECT_EQ(*fw.params.at("NUM_OF_VFS").current, "16");  // running until activated
  // Without the Default column the defaults are unknown.
  auto e = ResetNextBootToDefaults(Testdata("cx6-vpi-eth-sriov-off.query"));
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("no Default column"), std::string::npos);
  // The JSON form too.
  auto j = ResetNextBootToDefaults(Testdata("cx7-eth-ro.json.query"));
  ASSERT_TRUE(j.ok()) << j.status().message();
  FirmwareFacts jf = Facts(*j);
  EXPECT_EQ(jf.params.at("NUM_OF_VFS").next_boot, "8");
  auto ja = ActivateNextBootValues(*j);
  ASSERT_TRUE(ja.ok()) << ja.status().message();
  EXPECT_EQ(*Facts(*ja).params.at("NUM_OF_VFS").current, "8");
}

PciFunction Pf(const std::string& bdf) {
  return testing::NetworkPf(bdf, "ibs5f0", "15b3", "1017", testing::kInfinibandClass);
}

struct Result {
  std::vector<Change> changes;
  std::vector<Diagnostic> diags;
  std::string Messages() const {
    std::string s;
    for (const auto& d : diags) s += d.path + ": " + d.message + "\n";
    return s;
  }
};

Result Plan(const DesiredState& d, const HostFacts& f) {
  PlanSink sink;
  PlanFirmware(d, f, sink);
  return {sink.changes(), sink.diagnostics()};
}

DesiredState ResetEth() {
  DesiredState d;
  d.firmware = FirmwareActivationSpec{"reset"};
  NicSpec n;
  n.name = "ib0";
  n.selector.root_devices = {"0000:86:00.0"};
  n.link_type = "eth";
  d.nics.push_back(n);
  return d;
}

HostFacts Cx5(const std::string& reset_query) {
  HostFacts f;
  f.pci = {Pf("0000:86:00.0"), Pf("0000:86:00.1")};
  f.pci[1].netdevs = {"ibs5f1"};
  for (PciFunction& pf : f.pci) pf.driver = "mlx5_core";
  f.firmware["0000:86:00.0"] = Facts(Testdata("cx5-vpi-ib.query"));
  FirmwareFacts& fw = f.firmware["0000:86:00.0"];
  fw.reset_read = true;
  fw.reset_query = reset_query;
  auto q = ParseMstfwresetQuery(reset_query);
  fw.reset_refused = q.ok() ? ResetLevelRefusal(*q) : q.status().message();
  return f;
}

TEST(FirmwareActivation, ResetActivatesTheSetsAndRemovesTheVfsOfEveryPf) {
  Result r = Plan(ResetEth(), Cx5(Testdata("mstfwreset-cx5.query")));
  ASSERT_EQ(r.changes.size(), 2u) << r.Messages();
  EXPECT_TRUE(r.diags.empty()) << r.Messages();
  EXPECT_EQ(r.changes[0].id, "firmware/0000:86:00.0/LINK_TYPE_P1");
  EXPECT_EQ(r.changes[0].disruption, Disruption::kFirmwareReset);
  EXPECT_NE(r.changes[0].reason.find("takes effect at the firmware reset"), std::string::npos);
  const Change& a = r.changes[1];
  EXPECT_EQ(a.id, "firmware/0000:86:00.0/activate");
  EXPECT_EQ(a.disruption, Disruption::kFirmwareReset);
  EXPECT_EQ(a.phase, kPhaseFirmware);
  EXPECT_EQ(a.field_path, "spec.firmware.activation");
  EXPECT_EQ(a.before["LINK_TYPE_P1"], "ib");
  EXPECT_EQ(a.after["LINK_TYPE_P1"], "eth");
  EXPECT_EQ(a.detail["pfs"], nlohmann::json({"0000:86:00.0", "0000:86:00.1"}));
  EXPECT_EQ(a.detail["level"], 3);
  // mlx5_core bound, the card lists the driver as a sync owner: --sync 1,
  // never --skip_driver under the live driver (issue 35.1); the plan line
  // shows the exact command.
  EXPECT_EQ(a.detail["method"], "driver-sync");
  EXPECT_EQ(a.detail["command"], nlohmann::json({"mstfwreset", "-d", "0000:86:00.0", "-y", "-l",
                                                 "3", "--sync", "1", "reset"}));
  EXPECT_NE(a.reason.find("mstfwreset -d 0000:86:00.0 -y -l 3 --sync 1 reset activates"),
            std::string::npos)
      << a.reason;
  EXPECT_EQ(a.reason.find("--skip_driver"), std::string::npos) << a.reason;
}

// A PF on vfio-pci (mstfwreset refuses third-party drivers) and a card
// without the driver's sync: provisioner unbinds both PFs around
// `--skip_driver`; the plan says so.
TEST(FirmwareActivation, ThirdPartyDriverIsUnboundFirstAndBoundAfter) {
  std::string text = Testdata("mstfwreset-cx5.query");
  text.replace(text.find("Supported     \n", text.find("1: Driver")), 14, "Not supported ");
  HostFacts f = Cx5(text);
  f.pci[1].driver = "vfio-pci";
  Result r = Plan(ResetEth(), f);
  ASSERT_EQ(r.changes.size(), 2u) << r.Messages();
  const Change& a = r.changes[1];
  EXPECT_EQ(a.detail["method"], "unbind-first");
  EXPECT_EQ(a.detail["unbind"],
            nlohmann::json({{"0000:86:00.0", "mlx5_core"}, {"0000:86:00.1", "vfio-pci"}}));
  EXPECT_NE(a.reason.find("unbind 0000:86:00.0 (mlx5_core), 0000:86:00.1 (vfio-pci); mstfwreset "
                          "-d 0000:86:00.0 -y -l 3 --sync 0 --skip_driver reset; bind them again"),
            std::string::npos)
      << a.reason;
}

// Only the driver's sync, and no mlx5_core to take it: the reboot, with why.
TEST(FirmwareActivation, NoUsableSyncOwnerFallsBackToTheRebootWithTheReason) {
  HostFacts f = Cx5(Testdata("mstfwreset-bf3-nic-driver-only.query"));
  for (PciFunction& pf : f.pci) pf.driver = "";
  Result r = Plan(ResetEth(), f);
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].disruption, Disruption::kReboot);
  ASSERT_EQ(r.diags.size(), 1u) << r.Messages();
  EXPECT_NE(r.diags[0].message.find("only the driver as the reset-sync owner (sync 1), and no PF "
                                    "of the card is bound to mlx5_core"),
            std::string::npos)
      << r.Messages();
}

TEST(FirmwareActivation, NoLevelThreeFallsBackToTheRebootWithAWarning) {
  Result r = Plan(ResetEth(), Cx5(Testdata("mstfwreset-no-level3.query")));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].disruption, Disruption::kReboot);
  ASSERT_EQ(r.diags.size(), 1u);
  EXPECT_EQ(r.diags[0].severity, Severity::kWarning);
  EXPECT_EQ(r.diags[0].path, "spec.firmware.activation");
  EXPECT_NE(r.diags[0].message.find("0000:86:00.0: no firmware reset (mstfwreset query says "
                                    "reset level 3"),
            std::string::npos)
      << r.Messages();
  EXPECT_NE(r.diags[0].message.find("take effect after a reboot (apply exits 3)"),
            std::string::npos);
}

TEST(FirmwareActivation, BlueFieldInDpuModeIsAnError) {
  HostFacts f = Cx5(Testdata("mstfwreset-cx5.query"));
  f.firmware["0000:86:00.0"].params["INTERNAL_CPU_OFFLOAD_ENGINE"] = {"DISABLED(1)", "ENABLED(0)",
                                                                      "ENABLED(0)", false};
  Result r = Plan(ResetEth(), f);
  bool error = false;
  for (const Diagnostic& d : r.diags) {
    error = error || (d.severity == Severity::kError && d.path == "spec.firmware.activation" &&
                      d.message.find("a BlueField in DPU mode") != std::string::npos);
  }
  EXPECT_TRUE(error) << r.Messages();
}

TEST(FirmwareActivation, PendingValuesAreActivatedToo) {
  // Next Boot already ETH (an earlier apply with activation reboot), Current IB.
  HostFacts f = Cx5(Testdata("mstfwreset-cx5.query"));
  FirmwareFacts pending = Facts(Testdata("cx5-vpi-pending-eth.query"));
  f.firmware["0000:86:00.0"].params = pending.params;
  Result r = Plan(ResetEth(), f);
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].id, "firmware/0000:86:00.0/activate");
  EXPECT_EQ(r.changes[0].after["LINK_TYPE_P1"], "ETH(2)");
}

TEST(FirmwareActivation, RebootActivationIsUnchanged) {
  DesiredState d = ResetEth();
  d.firmware.reset();
  Result r = Plan(d, Cx5(Testdata("mstfwreset-cx5.query")));
  ASSERT_EQ(r.changes.size(), 1u) << r.Messages();
  EXPECT_EQ(r.changes[0].disruption, Disruption::kReboot);
}

TEST(FirmwareNvReset, ResetFirstThenTheSetsAgainstTheDefaults) {
  DesiredState d;
  NicSpec n;
  n.name = "ib0";
  n.selector.root_devices = {"0000:86:00.0"};
  n.firmware_reset = true;
  n.firmware["SAFE_MODE_THRESHOLD"] = {FirmwareSetting::Kind::kInt, "20"};
  d.nics.push_back(n);
  Result r = Plan(d, Cx5(Testdata("mstfwreset-cx5.query")));
  ASSERT_EQ(r.changes.size(), 2u) << r.Messages();
  EXPECT_EQ(r.changes[0].id, "firmware/0000:86:00.0/nvconfig");
  EXPECT_EQ(r.changes[0].before, nlohmann::json({{"NUM_OF_VFS", 16}}));
  EXPECT_EQ(r.changes[0].after, "defaults");
  EXPECT_EQ(r.changes[0].disruption, Disruption::kReboot);
  EXPECT_EQ(r.changes[0].field_path, "spec.nics[0].firmwareReset");
  EXPECT_EQ(r.changes[1].id, "firmware/0000:86:00.0/SAFE_MODE_THRESHOLD");

  // host.yaml asking for the value that differs from the default: no reset.
  d.nics[0].firmware["NUM_OF_VFS"] = {FirmwareSetting::Kind::kInt, "16"};
  Result kept = Plan(d, Cx5(Testdata("mstfwreset-cx5.query")));
  ASSERT_EQ(kept.changes.size(), 1u) << kept.Messages();
  EXPECT_EQ(kept.changes[0].id, "firmware/0000:86:00.0/SAFE_MODE_THRESHOLD");

  // Asking another value: reset (16 -> 8), then the set (8 -> 12).
  d.nics[0].firmware["NUM_OF_VFS"] = {FirmwareSetting::Kind::kInt, "12"};
  Result again = Plan(d, Cx5(Testdata("mstfwreset-cx5.query")));
  ASSERT_EQ(again.changes.size(), 3u) << again.Messages();
  EXPECT_EQ(again.changes[0].id, "firmware/0000:86:00.0/nvconfig");
  EXPECT_EQ(again.changes[1].id, "firmware/0000:86:00.0/NUM_OF_VFS");
  EXPECT_EQ(again.changes[1].before, 8);
  EXPECT_EQ(again.changes[1].after, 12);
}

}  // namespace
}  // namespace provisioner

namespace provisioner {
namespace {

TEST(FlintQuery, VersionRunningAndPsid) {
  auto q = ParseFlintQuery(Testdata("mstflint-cx5.query"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->fw_version, "16.35.2000");
  EXPECT_EQ(q->running, "");
  EXPECT_EQ(q->psid, "MT_0000000008");
  auto p = ParseFlintQuery(Testdata("mstflint-cx5-pending.query"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->fw_version, "16.35.3006");
  EXPECT_EQ(p->running, "16.35.2000");
  EXPECT_FALSE(
      ParseFlintQuery("-E- Cannot open Device: 0000:86:00.0. No such file or directory\n").ok());
  EXPECT_FALSE(ParseFlintQuery("PSID: X\n").ok());
}

TEST(FirmwareVersionPin, MismatchIsAPlanErrorNamingBothAndThePsid) {
  DesiredState d;
  NicSpec n;
  n.name = "ib0";
  n.selector.root_devices = {"0000:86:00.0"};
  n.firmware_version = FirmwareVersionSpec{"16.35.3006", "/opt/fw/cx5.bin", "validate"};
  d.nics.push_back(n);
  HostFacts f = Cx5(Testdata("mstfwreset-cx5.query"));
  FirmwareFacts& fw = f.firmware["0000:86:00.0"];
  fw.flint_read = true;
  auto q = ParseFlintQuery(Testdata("mstflint-cx5-pending.query"));
  fw.fw_version = q->fw_version;
  fw.fw_running = q->running;
  fw.psid = q->psid;
  Result r = Plan(d, f);
  ASSERT_EQ(r.diags.size(), 1u) << r.Messages();
  EXPECT_EQ(r.diags[0].path, "spec.nics[0].firmwareVersion.version");
  EXPECT_EQ(r.diags[0].message,
            "0000:86:00.0 (PSID MT_0000000008) runs firmware 16.35.2000 (16.35.3006 burned, not "
            "running yet), but nic ib0 pins 16.35.3006 (policy validate): burn an image of that "
            "version built for PSID MT_0000000008 (mstflint -d 0000:86:00.0 -i /opt/fw/cx5.bin -y "
            "burn), then reset the firmware or reboot");
  fw.fw_running = "";  // running what is burned
  EXPECT_TRUE(Plan(d, f).diags.empty());
  fw.flint_read = false;
  fw.flint_error = "mstflint (mstflint) is not installed";
  ASSERT_EQ(Plan(d, f).diags.size(), 1u);
  EXPECT_NE(Plan(d, f).diags[0].message.find("cannot read the firmware version of 0000:86:00.0"),
            std::string::npos);
}

}  // namespace
}  // namespace provisioner

namespace provisioner {
namespace {

// Every recorded `mstflint -d` and `mstflint -i` layout (testdata/README.md).
TEST(FlintQuery, EveryRecordedLayout) {
  struct Case {
    const char* file;
    const char* version;
    const char* running;
    const char* psid;
  };
  for (const Case& c : {
           Case{"mstflint-cx3pro-fs2.query", "2.40.5032", "", "MT_1090111023"},
           Case{"mstflint-cx3pro-fs2-burned.query", "2.42.5000", "2.40.5032", "MT_1090111019"},
           Case{"mstflint-cx4lx-hpe-full.query", "14.32.1908", "", "HP_2420110034"},
           Case{"mstflint-image-cx5.query", "16.35.3006", "", "MT_0000000008"},
           Case{"mstflint-image-cx5-other-psid.query", "16.35.3006", "", "MT_0000000012"},
           Case{"mstflint-image-cx7.query", "28.39.1002", "", "MT_0000000838"},
       }) {
    const std::string text = Testdata(c.file);
    ASSERT_FALSE(text.empty()) << c.file;
    auto q = ParseFlintQuery(text);
    ASSERT_TRUE(q.ok()) << c.file << ": " << q.status().message();
    EXPECT_EQ(q->fw_version, c.version) << c.file;
    EXPECT_EQ(q->running, c.running) << c.file;
    EXPECT_EQ(q->psid, c.psid) << c.file;
  }
  // A binary image file read as text (the tree's stand-in is the query's text).
  EXPECT_FALSE(ParseFlintQuery(std::string("\x7f\x00\x12\x34MTFW", 8)).ok());
  EXPECT_FALSE(ParseFlintQuery("-E- Can not open fw.bin: No such file or directory\n").ok());
}

// The stand-in for a burn and a reset: the real FS2 capture before and after
// `mstflint burn` differ in exactly these lines' order and values.
TEST(FlintQuery, FlashedVersionRewrite) {
  const std::string burned =
      SetFlashedVersion(Testdata("mstflint-cx5.query"), "16.35.3006", "16.35.2000");
  EXPECT_EQ(burned, Testdata("mstflint-cx5-pending.query"));
  EXPECT_EQ(SetFlashedVersion(burned, "16.35.3006", "16.35.3006"), [] {
    std::string s = Testdata("mstflint-cx5.query");
    return s.replace(s.find("16.35.2000"), 10, "16.35.3006");
  }());
}

NicSpec Pinned(const std::string& policy, std::optional<std::string> image) {
  NicSpec n;
  n.name = "ib0";
  n.selector.root_devices = {"0000:86:00.0"};
  n.firmware_version = FirmwareVersionSpec{"16.35.3006", std::move(image), policy};
  return n;
}

// The cx5 card on 16.35.2000 (PSID MT_0000000008), with the image
// `image_query` (or an error) at /opt/fw/cx5.bin.
HostFacts Cx5Flint(const std::string& flint_query, const std::string& image_query,
                   const std::string& image_error = "") {
  HostFacts f = Cx5(Testdata("mstfwreset-cx5.query"));
  FirmwareFacts& fw = f.firmware["0000:86:00.0"];
  fw.flint_read = true;
  fw.flint_source = "mstflint";
  auto q = ParseFlintQuery(flint_query);
  fw.fw_version = q->fw_version;
  fw.fw_running = q->running;
  fw.psid = q->psid;
  FirmwareFacts::Image img;
  img.error = image_error;
  if (image_error.empty()) {
    auto i = ParseFlintQuery(image_query);
    img.fw_version = i->fw_version;
    img.psid = i->psid;
  }
  fw.images["/opt/fw/cx5.bin"] = img;
  return f;
}

TEST(FirmwareVersionUpdate, BurnIsPlannedFirstNotReversibleAndTakesAReboot) {
  DesiredState d;
  d.nics.push_back(Pinned("update", "/opt/fw/cx5.bin"));
  d.nics[0].link_type = "eth";
  Result r =
      Plan(d, Cx5Flint(Testdata("mstflint-cx5.query"), Testdata("mstflint-image-cx5.query")));
  ASSERT_EQ(r.changes.size(), 2u) << r.Messages();
  const Change& b = r.changes[0];
  EXPECT_EQ(b.id, "firmware/0000:86:00.0/burn");
  EXPECT_EQ(b.before, "16.35.2000");
  EXPECT_EQ(b.after, "16.35.3006");
  EXPECT_EQ(b.disruption, Disruption::kReboot);
  EXPECT_EQ(b.field_path, "spec.nics[0].firmwareVersion");
  EXPECT_EQ(b.detail["image"], "/opt/fw/cx5.bin");
  EXPECT_EQ(b.detail["psid"], "MT_0000000008");
  EXPECT_EQ(b.detail["inverse"], "none");
  EXPECT_NE(b.reason.find("mstflint -d 0000:86:00.0 -i /opt/fw/cx5.bin -y burn"), std::string::npos)
      << b.reason;
  EXPECT_NE(b.reason.find("not reversible"), std::string::npos) << b.reason;
  EXPECT_EQ(r.changes[1].id, "firmware/0000:86:00.0/LINK_TYPE_P1");  // the sets after it
  ASSERT_EQ(r.diags.size(), 1u) << r.Messages();
  EXPECT_EQ(r.diags[0].severity, Severity::kWarning);
  EXPECT_NE(r.diags[0].message.find("cannot be undone"), std::string::npos) << r.Messages();
}

TEST(FirmwareVersionUpdate, ByResetTheActivationCarriesTheBurn) {
  DesiredState d;
  d.firmware = FirmwareActivationSpec{"reset"};
  d.nics.push_back(Pinned("update", "/opt/fw/cx5.bin"));
  HostFacts f = Cx5Flint(Testdata("mstflint-cx5.query"), Testdata("mstflint-image-cx5.query"));
  Result r = Plan(d, f);
  ASSERT_EQ(r.changes.size(), 2u) << r.Messages();
  EXPECT_EQ(r.changes[0].id, "firmware/0000:86:00.0/burn");
  EXPECT_EQ(r.changes[0].disruption, Disruption::kFirmwareReset);
  EXPECT_NE(r.changes[0].reason.find("takes effect at the firmware reset"), std::string::npos);
  EXPECT_EQ(r.changes[1].id, "firmware/0000:86:00.0/activate");
  EXPECT_EQ(r.changes[1].after["burn"], "16.35.3006");
  // Burned by an earlier apply, not running: the activation only.
  HostFacts burned =
      Cx5Flint(Testdata("mstflint-cx5-pending.query"), Testdata("mstflint-image-cx5.query"));
  Result p = Plan(d, burned);
  ASSERT_EQ(p.changes.size(), 1u) << p.Messages();
  EXPECT_EQ(p.changes[0].id, "firmware/0000:86:00.0/activate");
  EXPECT_EQ(p.changes[0].before["burn"], "16.35.2000");
  EXPECT_EQ(p.changes[0].after["burn"], "16.35.3006");
  // By reboot: nothing to do but wait for it (a warning says so).
  d.firmware.reset();
  Result w = Plan(d, burned);
  EXPECT_TRUE(w.changes.empty());
  ASSERT_EQ(w.diags.size(), 1u) << w.Messages();
  EXPECT_EQ(w.diags[0].severity, Severity::kWarning);
  EXPECT_NE(w.diags[0].message.find("a reboot is pending"), std::string::npos) << w.Messages();
}

TEST(FirmwareVersionUpdate, ImageOfAnotherPsidIsRefusedNamingBothAndThePath) {
  DesiredState d;
  d.nics.push_back(Pinned("update", "/opt/fw/cx5.bin"));
  Result r = Plan(
      d, Cx5Flint(Testdata("mstflint-cx5.query"), Testdata("mstflint-image-cx5-other-psid.query")));
  EXPECT_TRUE(r.changes.empty());
  ASSERT_EQ(r.diags.size(), 1u) << r.Messages();
  EXPECT_EQ(r.diags[0].severity, Severity::kError);
  EXPECT_EQ(r.diags[0].path, "spec.nics[0].firmwareVersion.image");
  EXPECT_EQ(r.diags[0].message,
            "the firmware image /opt/fw/cx5.bin is built for PSID MT_0000000012, but "
            "0000:86:00.0 is MT_0000000008 (mstflint refuses another PSID): use the image for "
            "MT_0000000008");
}

TEST(FirmwareVersionUpdate, ImageOfAnotherVersionIsRefused) {
  DesiredState d;
  d.nics.push_back(Pinned("update", "/opt/fw/cx5.bin"));
  std::string other = Testdata("mstflint-image-cx5.query");
  other.replace(other.find("16.35.3006"), 10, "16.35.4030");
  Result r = Plan(d, Cx5Flint(Testdata("mstflint-cx5.query"), other));
  EXPECT_TRUE(r.changes.empty());
  ASSERT_EQ(r.diags.size(), 1u) << r.Messages();
  EXPECT_EQ(r.diags[0].message,
            "the firmware image /opt/fw/cx5.bin holds firmware 16.35.4030, but nic ib0 pins "
            "16.35.3006");
}

TEST(FirmwareVersionUpdate, MissingImageOrNoImageIsAnError) {
  DesiredState d;
  d.nics.push_back(Pinned("update", "/opt/fw/cx5.bin"));
  const std::string missing =
      "the firmware image /opt/fw/cx5.bin cannot be opened: No such file or directory (errno 2, "
      "ENOENT)";
  Result r = Plan(d, Cx5Flint(Testdata("mstflint-cx5.query"), "", missing));
  EXPECT_TRUE(r.changes.empty());
  ASSERT_EQ(r.diags.size(), 1u) << r.Messages();
  EXPECT_EQ(r.diags[0].path, "spec.nics[0].firmwareVersion.image");
  EXPECT_EQ(r.diags[0].message, missing);
  DesiredState none;
  none.nics.push_back(Pinned("update", std::nullopt));
  Result n =
      Plan(none, Cx5Flint(Testdata("mstflint-cx5.query"), Testdata("mstflint-image-cx5.query")));
  ASSERT_EQ(n.diags.size(), 1u) << n.Messages();
  EXPECT_NE(n.diags[0].message.find("policy update needs the image to burn"), std::string::npos);
  // Running the pin already: no image needed, nothing planned.
  Result same = Plan(
      none, Cx5Flint(Testdata("mstflint-image-cx5.query"), Testdata("mstflint-image-cx5.query")));
  EXPECT_TRUE(same.changes.empty());
  EXPECT_TRUE(same.diags.empty()) << same.Messages();
}

}  // namespace
}  // namespace provisioner
