#include "modules/firmware/firmware_module.h"

#include "engine/core/engine.h"
#include "engine/core/journal.h"
#include "engine/host/host_fs.h"
#include "engine/host/recording_host_fs.h"
#include "gtest/gtest.h"
#include "modules/firmware/command.h"
#include "modules/firmware/firmware_planner.h"
#include "modules/firmware/mstconfig_query.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/sriov_module.h"
#include "test/support/files.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using provisioner::testing::ReadFile;

// The cx5-ib host tree with a captured query from testdata (replacing the
// tree's own capture, when it has one).
std::string IbTree(const std::string& capture) {
  std::string dir = testing::MakeTempDir("fw");
  Status s = testing::ExtractTtar(testing::HostTreePath("cx5-ib"), dir);
  EXPECT_TRUE(s.ok()) << s.message();
  auto fs = NewLocalHostFs(dir);
  EXPECT_TRUE(fs->WriteFileAtomic("/run/provisioner/mstconfig/0000:86:00.0.query",
                                  ReadFile("modules/firmware/testdata/" + capture))
                  .ok());
  return dir;
}

DesiredState WantLinkType(const std::string& type) {
  DesiredState d;
  NicSpec n;
  n.name = "ib0";
  n.selector.pf_names = {"ibs5f0"};
  n.link_type = type;
  d.nics.push_back(n);
  return d;
}

std::string Diags(const PlanResult& r) {
  std::string s;
  for (const auto& d : r.diagnostics) s += d.path + ": " + d.message + "\n";
  return s;
}

// Live-root stand-in for mstconfig: answers with a recorded output.
class RecordedTool : public FirmwareTool {
 public:
  std::string Source(const std::string&) const override { return "mstconfig"; }
  bool Available() const override { return true; }
  StatusOr<std::string> Query(const std::string&) override {
    return ReadFile("modules/firmware/testdata/cx5-vpi-ib.query");
  }
  Status Set(const std::string&, const std::map<std::string, std::string>&) override {
    return UnimplementedError("read only");
  }
};

class NoTool : public FirmwareTool {
 public:
  std::string Source(const std::string&) const override { return "mstconfig"; }
  bool Available() const override { return false; }
  StatusOr<std::string> Query(const std::string&) override { return NotFoundError("absent"); }
  Status Set(const std::string&, const std::map<std::string, std::string>&) override {
    return NotFoundError("absent");
  }
};

std::vector<std::unique_ptr<Module>> Modules(FirmwareModuleOptions o = {}) {
  std::vector<std::unique_ptr<Module>> m;
  m.push_back(std::make_unique<PciModule>());
  m.push_back(std::make_unique<FirmwareModule>(std::move(o)));
  return m;
}

TEST(FirmwareModule, TreePlansAppliesAndConvergesToAPendingReboot) {
  std::string root = IbTree("cx5-vpi-ib.query");
  auto fs = NewLocalHostFs(root);
  HostContext ctx;
  ctx.fs = fs.get();
  auto modules = Modules();
  auto facts = Discover(modules, ctx);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  ASSERT_EQ(facts->firmware.count("0000:86:00.0"), 1u);
  EXPECT_EQ(facts->firmware.at("0000:86:00.0").device_type, "ConnectX5");
  EXPECT_FALSE(facts->firmware.at("0000:86:00.0").raw_query.empty());

  DesiredState want = WantLinkType("eth");
  PlanResult plan = BuildPlan(modules, want, *facts);
  ASSERT_EQ(plan.plan.changes.size(), 1u) << Diags(plan);
  EXPECT_TRUE(plan.plan.RebootRequired());
  ApplyReport report = ApplyPlan(modules, plan.plan, want, ctx);
  ASSERT_TRUE(report.status.ok()) << report.status.message();
  EXPECT_TRUE(report.reboot_required);
  auto q = ParseMstconfigQuery(ReadFile(root + "/run/provisioner/mstconfig/0000:86:00.0.query"));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->params.at("LINK_TYPE_P1").next_boot, "ETH(2)");
  EXPECT_EQ(q->params.at("LINK_TYPE_P1").current, "IB(1)");

  // Again: nothing new to do, the change pending a reboot.
  auto again = Discover(modules, ctx);
  ASSERT_TRUE(again.ok());
  PlanResult second = BuildPlan(modules, want, *again);
  EXPECT_TRUE(second.plan.changes.empty());
  EXPECT_TRUE(second.plan.warnings.empty());
  ASSERT_EQ(second.plan.set_for_next_boot.size(), 1u);
  EXPECT_NE(second.plan.set_for_next_boot[0].reason.find("reboot"), std::string::npos);
}

// numVfs above the firmware's NUM_OF_VFS (16 on this card): the firmware
// limit is raised for the next boot, the sriov planner waits for it.
TEST(FirmwareModule, NumVfsAboveTheFirmwareLimit) {
  std::string root = IbTree("cx5-vpi-ib.query");
  auto fs = NewLocalHostFs(root);
  HostContext ctx;
  ctx.fs = fs.get();
  std::vector<std::unique_ptr<Module>> modules;
  modules.push_back(std::make_unique<PciModule>());
  modules.push_back(std::make_unique<FirmwareModule>());
  modules.push_back(std::make_unique<SriovModule>());
  DesiredState want;
  NicSpec n;
  n.name = "ib0";
  n.selector.pf_names = {"ibs5f0"};
  n.num_vfs = 32;
  want.nics.push_back(n);
  auto facts = Discover(modules, ctx);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  PlanResult plan = BuildPlan(modules, want, *facts);
  for (const auto& d : plan.diagnostics) EXPECT_NE(d.severity, Severity::kError) << d.message;
  ASSERT_EQ(plan.plan.changes.size(), 1u) << Diags(plan);
  EXPECT_EQ(plan.plan.changes[0].id, "firmware/0000:86:00.0/NUM_OF_VFS");
  EXPECT_EQ(plan.plan.changes[0].before, 16);
  EXPECT_EQ(plan.plan.changes[0].after, 32);
  ASSERT_EQ(plan.plan.warnings.size(), 1u);
  EXPECT_NE(plan.plan.warnings[0].find("after the reboot"), std::string::npos);
  ApplyReport report = ApplyPlan(modules, plan.plan, want, ctx);
  ASSERT_TRUE(report.status.ok()) << report.status.message();
  EXPECT_TRUE(report.reboot_required);
  auto again = Discover(modules, ctx);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(BuildPlan(modules, want, *again).plan.changes.empty());
}

TEST(FirmwareModule, RollbackRestoresTheCapture) {
  std::string root = IbTree("cx5-vpi-ib.query");
  const std::string path = root + "/run/provisioner/mstconfig/0000:86:00.0.query";
  const std::string before = ReadFile(path);
  auto fs = NewLocalHostFs(root);
  HostContext ctx;
  ctx.fs = fs.get();
  FirmwareModule m;
  Change c = MakeChange("firmware", "0000:86:00.0", "LINK_TYPE_P1", "ib", "eth",
                        Disruption::kReboot, kPhaseFirmware, "", "");
  ASSERT_TRUE(m.Apply(c, ctx).ok());
  ASSERT_TRUE(m.Verify(c, ctx).ok());
  std::swap(c.before, c.after);
  ASSERT_TRUE(m.Apply(c, ctx).ok());
  ASSERT_TRUE(m.Verify(c, ctx).ok());
  EXPECT_EQ(ReadFile(path), before);
  // A change naming something odd is refused before any command runs.
  c.target = "0000:86:00.0; rm -rf /";
  EXPECT_FALSE(m.Apply(c, ctx).ok());
}

// firmware/<card>/burn on the tree's stand-ins: the burn puts the image's
// version on the flash (the running one stays until a reset); its inverse,
// what `apply --rollback` runs after an interrupted apply (the journal's
// entry, before/after swapped), burns nothing and succeeds: a burn cannot be
// undone, and the next plan reads the flash as it is. A plan from a file
// whose image no longer matches burns nothing.
TEST(FirmwareModule, BurnAndItsInverse) {
  std::string root = IbTree("cx5-vpi-ib.query");
  auto fs = NewLocalHostFs(root);
  const std::string flint = "/run/provisioner/mstflint/0000:86:00.0.query";
  ASSERT_TRUE(
      fs->WriteFileAtomic(flint, ReadFile("modules/firmware/testdata/mstflint-cx5.query")).ok());
  ASSERT_TRUE(fs->WriteFileAtomic("/opt/fw/cx5.bin",
                                  ReadFile("modules/firmware/testdata/mstflint-image-cx5.query"))
                  .ok());
  HostContext ctx;
  ctx.fs = fs.get();
  FirmwareModule m;
  Change c = MakeChange("firmware", "0000:86:00.0", "burn", "16.35.2000", "16.35.3006",
                        Disruption::kReboot, kPhaseFirmware, "pin", "spec.nics[0].firmwareVersion");
  c.detail["image"] = "/opt/fw/cx5.bin";
  c.detail["version"] = "16.35.3006";
  c.detail["psid"] = "MT_0000000008";
  Change inverse = InverseChange(c);
  ASSERT_TRUE(m.Apply(c, ctx).ok());
  ASSERT_TRUE(m.Verify(c, ctx).ok());
  const std::string burned = ReadFile(root + flint);
  EXPECT_EQ(burned, ReadFile("modules/firmware/testdata/mstflint-cx5-pending.query"));
  ASSERT_TRUE(m.Apply(inverse, ctx).ok());
  ASSERT_TRUE(m.Verify(inverse, ctx).ok());
  EXPECT_EQ(ReadFile(root + flint), burned);  // nothing undone, nothing burned
  // The image replaced by another card's since the plan: refused, flash unchanged.
  ASSERT_TRUE(
      fs->WriteFileAtomic("/opt/fw/cx5.bin",
                          ReadFile("modules/firmware/testdata/mstflint-image-cx5-other-psid.query"))
          .ok());
  Status s = m.Apply(c, ctx);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("PSID MT_0000000012"), std::string::npos) << s.message();
  EXPECT_EQ(ReadFile(root + flint), burned);
  // A relative or odd image path in a plan file is refused before any command.
  c.detail["image"] = "opt/fw/cx5.bin";
  EXPECT_FALSE(m.Apply(c, ctx).ok());
}

TEST(FirmwareModule, NoToolMeansAnErrorNotASilentSkip) {
  std::string root = IbTree("cx5-vpi-ib.query");
  auto fs = NewLocalHostFs(root);
  HostContext ctx;
  ctx.fs = fs.get();
  FirmwareModuleOptions o;
  o.tool = [](HostFs&) { return std::make_unique<NoTool>(); };
  auto modules = Modules(o);
  auto facts = Discover(modules, ctx);
  ASSERT_TRUE(facts.ok());
  EXPECT_TRUE(facts->firmware.at("0000:86:00.0").tool_missing);
  PlanResult plan = BuildPlan(modules, WantLinkType("eth"), *facts);
  EXPECT_TRUE(plan.plan.changes.empty());
  ASSERT_EQ(plan.diagnostics.size(), 1u);
  EXPECT_EQ(plan.diagnostics[0].severity, Severity::kError);
  EXPECT_NE(plan.diagnostics[0].message.find("apt install mstflint"), std::string::npos);
}

TEST(FirmwareModule, UncapturedTreeSaysWhereTheCaptureGoes) {
  std::string dir = testing::MakeTempDir("fw-none");
  ASSERT_TRUE(testing::ExtractTtar(testing::HostTreePath("cx5-ib"), dir).ok());
  auto fs = NewLocalHostFs(dir);
  ASSERT_TRUE(fs->RemoveFile("/run/provisioner/mstconfig/0000:86:00.0.query").ok() ||
              !fs->Exists("/run/provisioner/mstconfig/0000:86:00.0.query"));
  HostContext ctx;
  ctx.fs = fs.get();
  auto modules = Modules();
  auto facts = Discover(modules, ctx);
  ASSERT_TRUE(facts.ok());
  PlanResult plan = BuildPlan(modules, WantLinkType("eth"), *facts);
  ASSERT_EQ(plan.diagnostics.size(), 1u);
  EXPECT_NE(plan.diagnostics[0].message.find("mstconfig -e -d 0000:86:00.0 query"),
            std::string::npos)
      << plan.diagnostics[0].message;
}

// On the live root the query comes from mstconfig, not a file: discovery
// hands it to `snapshot` as the file a tree root reads.
TEST(FirmwareModule, LiveQueryIsCapturedForSnapshots) {
  auto live = NewLocalHostFs("/");
  HostFsRecord record;
  auto recording = NewRecordingHostFs(live.get(), &record);
  ASSERT_EQ(recording->root(), "/");  // the live root: the factory picks mstconfig
  HostContext ctx;
  ctx.fs = recording.get();
  FirmwareModuleOptions o;
  o.tool = [](HostFs&) { return std::make_unique<RecordedTool>(); };
  FirmwareModule m(o);
  HostFacts facts;
  PciFunction pf;
  pf.pci_address = "0000:86:00.0";
  pf.vendor = "15b3";
  pf.class_code = 0x020700;
  facts.pci.push_back(pf);
  ASSERT_TRUE(m.Discover(ctx, facts).ok());
  EXPECT_EQ(facts.firmware.at("0000:86:00.0").params.at("LINK_TYPE_P1").next_boot, "IB(1)");
  ASSERT_EQ(record.captures.count("/run/provisioner/mstconfig/0000:86:00.0.query"), 1u);
  EXPECT_EQ(record.captures.at("/run/provisioner/mstconfig/0000:86:00.0.query"),
            ReadFile("modules/firmware/testdata/cx5-vpi-ib.query"));
}

// The real mstconfig (Debian mstflint) on a device that does not exist: the
// error path end to end (exit 3, "-E- Failed to open the device").
TEST(FirmwareModule, RealMstconfigOnAMissingDevice) {
  ASSERT_FALSE(FindInPath("mstconfig").empty())
      << "mstconfig is not installed: run scripts/setup.sh (Debian package mstflint)";
  auto tool = NewMstconfigTool();
  ASSERT_TRUE(tool->Available());
  auto q = tool->Query("0000:ff:1f.7");
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("exited 3"), std::string::npos) << q.status().message();
  EXPECT_NE(q.status().message().find("-E-"), std::string::npos) << q.status().message();
  Status s = tool->Set("0000:ff:1f.7", {{"LINK_TYPE_P1", "2"}});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("LINK_TYPE_P1=2"), std::string::npos) << s.message();
}

TEST(Command, CapturesOutputExitCodeAndTimesOut) {
  auto r = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 4"}, std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->exit_code, 4);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err, "err\n");
  auto slow = RunCommand({"sleep", "10"}, std::chrono::milliseconds(200));
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.status().code(), StatusCode::kDeadlineExceeded);
  auto none = RunCommand({"no-such-command-provisioner"}, std::chrono::seconds(1));
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().err(), ENOENT);
  // Arguments are passed as they are, never through a shell.
  auto literal = RunCommand({"echo", "$HOME;", "`id`"}, std::chrono::seconds(5));
  ASSERT_TRUE(literal.ok());
  EXPECT_EQ(literal->out, "$HOME; `id`\n");
}

// The factory picks by root: mstconfig (the card itself) for "/" only, the
// tree's captured queries otherwise.
TEST(FirmwareToolFactory, MstconfigForTheLiveRootOnly) {
  auto live = NewLocalHostFs("/");
  auto l = NewFirmwareTool(*live);
  EXPECT_FALSE(l->FromCapture());
  EXPECT_EQ(l->Source("0000:86:00.0"), "mstconfig");
  std::string root = provisioner::testing::MakeTempDir("fw-factory");
  auto tree = NewLocalHostFs(root);
  auto t = NewFirmwareTool(*tree);
  EXPECT_TRUE(t->FromCapture());
  EXPECT_EQ(t->Source("0000:86:00.0"), "/run/provisioner/mstconfig/0000:86:00.0.query");
}

}  // namespace
}  // namespace provisioner
