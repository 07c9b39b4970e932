// End-to-end: spec.firmware.activation: reset and nics[].firmwareReset with
// the real binary on the cx5-ib tree under the kernel simulator. The tree's
// stand-ins for the card: the captured `mstconfig -e query`
// (run/provisioner/mstconfig/), whose Next Boot column `set` rewrites, and
// the captured `mstfwreset -d <BDF> query` (run/provisioner/mstfwreset/,
// mstflint 4.36's layout), whose reset makes Current the Next Boot column; a
// <BDF>.refuse file there is the card refusing the reset (what mstfwreset
// printed).
#include <unistd.h>

#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr char kCapture[] = "/run/provisioner/mstconfig/0000:86:00.0.query";
constexpr char kResetCapture[] = "/run/provisioner/mstfwreset/0000:86:00.0.query";
constexpr char kRefuse[] = "/run/provisioner/mstfwreset/0000:86:00.0.refuse";
constexpr char kNumVfs[] = "/sys/bus/pci/devices/0000:86:00.0/sriov_numvfs";

std::string Yaml(const std::string& extra_spec, const std::string& extra_nic) {
  return WriteTempFile("host.yaml",
                       HostYaml("", "ib-worker1") + extra_spec +
                           "  nics:\n"
                           "    - name: ib0\n      nicSelector:\n        pfNames: [ibs5f0]\n"
                           "      numVfs: 4\n" +
                           extra_nic);
}

void PutFile(const std::string& path, const std::string& text) {
  ASSERT_EQ(Run({"/bin/mkdir", "-p", path.substr(0, path.rfind('/'))}).exit_code, 0);
  std::ofstream out(path, std::ios::binary);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

// The running and next-boot LINK_TYPE_P1 of the capture ("IB(1) ETH(2)").
std::string LinkType(const std::string& root) {
  std::string q = ReadFile(root + kCapture);
  size_t at = q.find("LINK_TYPE_P1");
  if (at == std::string::npos) return "?";
  size_t end = q.find('\n', at);
  std::string line = q.substr(at, end - at);
  std::vector<std::string> tok;
  size_t i = 0;
  while (i < line.size()) {
    size_t j = line.find_first_not_of(' ', i);
    if (j == std::string::npos) break;
    size_t k = line.find(' ', j);
    if (k == std::string::npos) k = line.size();
    tok.push_back(line.substr(j, k - j));
    i = k;
  }
  return tok.size() == 4 ? tok[2] + " " + tok[3] : "?";
}

class FirmwareResetCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = ExtractHost("cx5-ib");
    PutFile(root_ + kResetCapture,
            ReadFile(RunfilePath("modules/firmware/testdata/mstfwreset-cx5.query")));
  }
  // numVfs 4 applied first: the VFs a reset takes away.
  void WithVfs() {
    RunResult r = Provisioner({"apply", Yaml("", ""), "--root", root_});
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    ASSERT_EQ(ReadFile(root_ + kNumVfs), "4\n");
  }
  std::string root_;
};

TEST_F(FirmwareResetCliTest, LinkTypeByResetRemakesTheVfsAndExits0) {
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  WithVfs();
  const std::string yaml = Yaml("  firmware:\n    activation: reset\n", "      linkType: eth\n");

  json p = PlanJson(yaml, root_);
  ASSERT_EQ(p["changes"].size(), 2u) << p.dump();
  EXPECT_EQ(p["changes"][0]["id"], "firmware/0000:86:00.0/LINK_TYPE_P1");
  EXPECT_EQ(p["changes"][0]["disruption"], "firmware-reset");
  EXPECT_EQ(p["changes"][1]["id"], "firmware/0000:86:00.0/activate");
  EXPECT_EQ(p["changes"][1]["disruption"], "firmware-reset");
  EXPECT_EQ(p["changes"][1]["after"], json({{"LINK_TYPE_P1", "eth"}}));
  EXPECT_EQ(p["summary"]["rebootRequired"], false);

  RunResult apply = Provisioner({"apply", yaml, "--root", root_, "-o", "json"});
  EXPECT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  EXPECT_FALSE(Exists(root_ + "/run/reboot-required"));
  EXPECT_EQ(LinkType(root_), "ETH(2) ETH(2)");  // running now
  EXPECT_EQ(ReadFile(root_ + kNumVfs), "4\n");  // made anew after the reset
  EXPECT_TRUE(Exists(root_ + "/sys/bus/pci/devices/0000:86:00.0/virtfn3"));
  json a = json::parse(apply.out, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << apply.out;
  std::vector<std::string> ids;
  for (const auto& c : a["changes"]) ids.push_back(c["id"]);
  // The reset, then the VFs it took away, planned anew from the reset host.
  EXPECT_EQ(ids, (std::vector<std::string>{"firmware/0000:86:00.0/LINK_TYPE_P1",
                                           "firmware/0000:86:00.0/activate",
                                           "sriov/0000:86:00.0/numVfs"}))
      << apply.out;
  EXPECT_EQ(sim.Refused(), "");

  RunResult again = Provisioner({"plan", yaml, "--root", root_, "-o", "json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out, nullptr, false)["changes"].size(), 0u) << again.out;
}

// Issue 35.1: the cx5-ib tree's PF is bound to mlx5_core. For each layout
// mstfwreset printed, the plan's activate line is the exact command, and it
// never has --skip_driver under the bound driver: --sync 1 where the card
// lists the driver as a sync owner, else the tool stops the driver itself.
TEST_F(FirmwareResetCliTest, BoundCardIsNeverResetWithSkipDriver) {
  const std::string yaml = Yaml("  firmware:\n    activation: reset\n", "      linkType: eth\n");
  const std::pair<const char*, const char*> cases[] = {
      {"mstfwreset-cx5.query", "mstfwreset -d 0000:86:00.0 -y -l 3 --sync 1 reset"},
      {"mstfwreset-cx7-mroq.query", "mstfwreset -d 0000:86:00.0 -y -l 3 --sync 1 reset"},
      {"mstfwreset-bf3-nic-driver-only.query", "mstfwreset -d 0000:86:00.0 -y -l 3 --sync 1 reset"},
      {"mstfwreset-v4.14-no-sync.query", "mstfwreset -d 0000:86:00.0 -y -l 3 reset"},
  };
  for (const auto& [file, command] : cases) {
    SCOPED_TRACE(file);
    PutFile(root_ + kResetCapture, ReadFile(RunfilePath(std::string("modules/firmware/testdata/") + file)));
    RunResult plan = Provisioner({"plan", yaml, "--root", root_});
    ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
    EXPECT_NE(plan.out.find(std::string("spec.firmware.activation: reset: ") + command +
                            " activates"),
              std::string::npos)
        << plan.out;
    EXPECT_EQ(plan.out.find("--skip_driver"), std::string::npos) << plan.out;
  }
  // And the reset runs with it: the stand-in takes --sync 1 as the card does.
  PutFile(root_ + kResetCapture,
          ReadFile(RunfilePath("modules/firmware/testdata/mstfwreset-cx7-mroq.query")));
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  RunResult apply = Provisioner({"apply", yaml, "--root", root_});
  EXPECT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  EXPECT_EQ(LinkType(root_), "ETH(2) ETH(2)");
}

TEST_F(FirmwareResetCliTest, CardRefusingTheResetExits3AndSaysWhy) {
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  WithVfs();
  PutFile(root_ + kRefuse, "-E- Firmware reset failed, retry operation or reboot machine.\n");
  const std::string yaml = Yaml("  firmware:\n    activation: reset\n", "      linkType: eth\n");
  RunResult apply = Provisioner({"apply", yaml, "--root", root_});
  EXPECT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  EXPECT_TRUE(Exists(root_ + "/run/reboot-required"));
  const std::string said = apply.out + apply.err;
  EXPECT_NE(said.find("the firmware reset of 0000:86:00.0 failed"), std::string::npos) << said;
  EXPECT_NE(said.find("-E- Firmware reset failed, retry operation or reboot machine."),
            std::string::npos)
      << said;
  EXPECT_EQ(LinkType(root_), "IB(1) ETH(2)");   // set for the next boot, not running
  EXPECT_EQ(ReadFile(root_ + kNumVfs), "4\n");  // nothing half-applied: the VFs are back
  EXPECT_EQ(sim.Refused(), "");
}

TEST_F(FirmwareResetCliTest, NoLevelThreeIsAWarningAndARebootWithoutTouchingTheVfs) {
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  WithVfs();
  PutFile(root_ + kResetCapture,
          ReadFile(RunfilePath("modules/firmware/testdata/mstfwreset-no-level3.query")));
  const std::string yaml = Yaml("  firmware:\n    activation: reset\n", "      linkType: eth\n");
  json p = PlanJson(yaml, root_);
  ASSERT_EQ(p["changes"].size(), 1u) << p.dump();
  EXPECT_EQ(p["changes"][0]["disruption"], "reboot");
  EXPECT_NE(p["warnings"].dump().find("no firmware reset (mstfwreset query says reset level 3"),
            std::string::npos)
      << p["warnings"].dump();
  RunResult apply = Provisioner({"apply", yaml, "--root", root_});
  EXPECT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  EXPECT_EQ(LinkType(root_), "IB(1) ETH(2)");
  EXPECT_TRUE(Exists(root_ + "/sys/bus/pci/devices/0000:86:00.0/virtfn3"));
}

TEST_F(FirmwareResetCliTest, FirmwareResetToDefaultsThenActivated) {
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  // NUM_OF_VFS reads 16 for the next boot (default 8): another cluster's.
  const std::string yaml =
      Yaml("  firmware:\n    activation: reset\n", "      firmwareReset: true\n");
  json p = PlanJson(yaml, root_);
  ASSERT_GE(p["changes"].size(), 2u) << p.dump();
  EXPECT_EQ(p["changes"][0]["id"], "firmware/0000:86:00.0/nvconfig");
  EXPECT_EQ(p["changes"][0]["before"], json({{"NUM_OF_VFS", 16}}));
  EXPECT_EQ(p["changes"][0]["after"], "defaults");
  EXPECT_EQ(p["changes"][1]["id"], "firmware/0000:86:00.0/activate");
  RunResult apply = Provisioner({"apply", yaml, "--root", root_});
  EXPECT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  std::string q = ReadFile(root_ + kCapture);
  EXPECT_NE(q.find("NUM_OF_VFS                          8               8               8"),
            std::string::npos)
      << q;
  EXPECT_EQ(ReadFile(root_ + kNumVfs), "4\n");
  RunResult again = Provisioner({"plan", yaml, "--root", root_, "-o", "json"});
  EXPECT_EQ(json::parse(again.out, nullptr, false)["changes"].size(), 0u) << again.out;
}

// nics[].firmwareVersion (policy validate) against the tree's captured
// `mstflint -d 0000:86:00.0 query` (FW Version 16.35.2000, PSID
// MT_0000000008): another version is a plan error, the same none.
TEST_F(FirmwareResetCliTest, PinnedFirmwareVersionValidates) {
  PutFile(root_ + "/run/provisioner/mstflint/0000:86:00.0.query",
          ReadFile(RunfilePath("modules/firmware/testdata/mstflint-cx5.query")));
  const std::string other =
      Yaml("", "      firmwareVersion: { version: 16.35.3006, image: /opt/fw/cx5.bin }\n");
  EXPECT_THAT(Refused("plan", other, root_),
              HasSubstr("spec.nics[0].firmwareVersion.version: 0000:86:00.0 (PSID MT_0000000008) "
                        "runs firmware 16.35.2000, but nic ib0 pins 16.35.3006"));
  const std::string same = Yaml("", "      firmwareVersion: { version: 16.35.2000 }\n");
  RunResult ok = Provisioner({"plan", same, "--root", root_, "-o", "json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  // Without the capture (issue 35.9): the running version from the card's
  // RDMA device, /sys/class/infiniband/mlx5_0/fw_ver, as on a live host
  // that runs no mstflint for a policy validate.
  ASSERT_EQ(::unlink((root_ + "/run/provisioner/mstflint/0000:86:00.0.query").c_str()), 0);
  RunResult by_sysfs = Provisioner({"plan", same, "--root", root_});
  EXPECT_EQ(by_sysfs.exit_code, 0) << by_sysfs.out << by_sysfs.err;
  EXPECT_THAT(Refused("plan", other, root_),
              HasSubstr("0000:86:00.0 (PSID MT_0000000008) runs firmware 16.35.2000, but "
                        "nic ib0 pins 16.35.3006"));
  // Neither a capture nor an RDMA device: an error naming it, never a silent pass.
  ASSERT_EQ(::provisioner::testing::Run(
                {"/bin/rm", "-rf", root_ + "/sys/bus/pci/devices/0000:86:00.0/infiniband"})
                .exit_code,
            0);
  EXPECT_THAT(Refused("plan", same, root_),
              HasSubstr("cannot read the firmware version of 0000:86:00.0"));
}

TEST_F(FirmwareResetCliTest, ActivationIsValidatedAtItsLine) {
  const std::string yaml = Yaml("  firmware:\n    activation: now\n", "");
  RunResult r = Provisioner({"validate", yaml});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find(":7:17"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace provisioner::testing

namespace provisioner::testing {
namespace {

constexpr char kFlintCapture[] = "/run/provisioner/mstflint/0000:86:00.0.query";

// nics[].firmwareVersion policy update on the cx5-ib tree: the card runs
// 16.35.2000 (PSID MT_0000000008; the capture run/provisioner/mstflint/ is
// the stand-in `mstflint -d` answers from, which a burn and a reset rewrite
// as the card would), the image /opt/fw/cx5.bin of the tree is the stand-in
// image (its content: what `mstflint -i` prints for it).
class FirmwareUpdateCliTest : public FirmwareResetCliTest {
 protected:
  void SetUp() override {
    FirmwareResetCliTest::SetUp();
    PutFile(root_ + kFlintCapture,
            ReadFile(RunfilePath("modules/firmware/testdata/mstflint-cx5.query")));
    PutFile(root_ + "/opt/fw/cx5.bin",
            ReadFile(RunfilePath("modules/firmware/testdata/mstflint-image-cx5.query")));
  }
  static std::string Pin(const std::string& spec) {
    return Yaml(spec,
                "      firmwareVersion: { version: 16.35.3006, image: /opt/fw/cx5.bin, "
                "policy: update }\n");
  }
  std::string Flint() const { return ReadFile(root_ + kFlintCapture); }
};

TEST_F(FirmwareUpdateCliTest, UpdateBurnsThenTheRebootActivatesIt) {
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  const std::string yaml = Pin("");
  json p = PlanJson(yaml, root_);
  ASSERT_FALSE(p.is_discarded()) << p.dump();
  ASSERT_GE(p["changes"].size(), 1u) << p.dump();
  EXPECT_EQ(p["changes"][0]["id"], "firmware/0000:86:00.0/burn");
  EXPECT_EQ(p["changes"][0]["before"], "16.35.2000");
  EXPECT_EQ(p["changes"][0]["after"], "16.35.3006");
  EXPECT_EQ(p["changes"][0]["disruption"], "reboot");
  EXPECT_EQ(p["summary"]["rebootRequired"], true);
  EXPECT_NE(p["warnings"].dump().find("cannot be undone"), std::string::npos) << p.dump();

  RunResult apply = Provisioner({"apply", yaml, "--root", root_});
  EXPECT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  EXPECT_TRUE(Exists(root_ + "/run/reboot-required"));
  // On the flash, not running: what mstflint prints after a burn.
  EXPECT_EQ(Flint(), ReadFile(RunfilePath("modules/firmware/testdata/mstflint-cx5-pending.query")));
  EXPECT_FALSE(Exists(JournalPath(root_)));

  // Nothing more to burn: the reboot is pending, and the plan says so.
  json a = PlanJson(yaml, root_);
  EXPECT_EQ(a["changes"].size(), 0u) << a.dump();
  EXPECT_NE(a["warnings"].dump().find("a reboot is pending"), std::string::npos) << a.dump();
  EXPECT_EQ(sim.Refused(), "");
}

TEST_F(FirmwareUpdateCliTest, UpdateByResetRunsTheNewFirmwareAndExits0) {
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  WithVfs();
  const std::string yaml = Pin("  firmware:\n    activation: reset\n");
  RunResult apply = Provisioner({"apply", yaml, "--root", root_, "-o", "json"});
  EXPECT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  EXPECT_FALSE(Exists(root_ + "/run/reboot-required"));
  json a = json::parse(apply.out, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << apply.out;
  std::vector<std::string> ids;
  for (const auto& c : a["changes"]) ids.push_back(c["id"]);
  EXPECT_EQ(
      ids, (std::vector<std::string>{"firmware/0000:86:00.0/burn", "firmware/0000:86:00.0/activate",
                                     "sriov/0000:86:00.0/numVfs"}))
      << apply.out;
  const std::string q = Flint();
  EXPECT_NE(q.find("FW Version:            16.35.3006\n"), std::string::npos) << q;
  EXPECT_EQ(q.find("FW Version(Running)"), std::string::npos) << q;  // running it
  EXPECT_EQ(ReadFile(root_ + kNumVfs), "4\n");                       // made anew
  RunResult again = Provisioner({"plan", yaml, "--root", root_, "-o", "json"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(json::parse(again.out, nullptr, false)["changes"].size(), 0u) << again.out;
  EXPECT_EQ(sim.Refused(), "");
}

TEST_F(FirmwareUpdateCliTest, BadImagesArePlanErrorsAndNothingIsBurned) {
  const std::string before = Flint();
  // Another card's image.
  PutFile(root_ + "/opt/fw/cx5.bin",
          ReadFile(RunfilePath("modules/firmware/testdata/mstflint-image-cx5-other-psid.query")));
  EXPECT_THAT(Refused("apply", Pin(""), root_),
              HasSubstr("spec.nics[0].firmwareVersion.image: the firmware image /opt/fw/cx5.bin "
                        "is built for PSID MT_0000000012, but 0000:86:00.0 is MT_0000000008"));
  // No image at that host path.
  ASSERT_EQ(::unlink((root_ + "/opt/fw/cx5.bin").c_str()), 0);
  EXPECT_THAT(Refused("apply", Pin(""), root_),
              HasSubstr("the firmware image /opt/fw/cx5.bin cannot be opened: No such file "
                        "or directory (errno 2, ENOENT)"));
  // Binary content where the stand-in's text is expected.
  PutFile(root_ + "/opt/fw/cx5.bin", std::string("\x7f\x00MTFW\x01\x02", 8));
  EXPECT_THAT(Refused("plan", Pin(""), root_),
              HasSubstr("the firmware image /opt/fw/cx5.bin is not one mstflint reads"));
  EXPECT_EQ(Flint(), before);
  EXPECT_FALSE(Exists(root_ + "/run/reboot-required"));
}

TEST_F(FirmwareUpdateCliTest, DiscoverReportsVersionAndPsid) {
  PutFile(root_ + kFlintCapture,
          ReadFile(RunfilePath("modules/firmware/testdata/mstflint-cx5-pending.query")));
  RunResult r = Provisioner({"discover", "--root", root_, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json d = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(d.is_discarded()) << r.out;
  bool found = false;
  for (const auto& nic : d["nics"]) {
    if (nic["pciAddress"] != "0000:86:00.0") continue;
    found = true;
    EXPECT_EQ(nic["firmware"]["version"], "16.35.3006") << nic.dump();
    EXPECT_EQ(nic["firmware"]["running"], "16.35.2000") << nic.dump();
    EXPECT_EQ(nic["firmware"]["psid"], "MT_0000000008") << nic.dump();
    EXPECT_EQ(nic["firmware"]["versionSource"], kFlintCapture) << nic.dump();
  }
  EXPECT_TRUE(found) << r.out;
  RunResult t = Provisioner({"discover", "--root", root_});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("Firmware (mstflint -d <card> query):"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("0000:86:00.0  MT_0000000008  16.35.3006  16.35.2000 (reset pending)"),
            std::string::npos)
      << t.out;
}

TEST_F(FirmwareUpdateCliTest, DoctorFailsOnAPinMismatch) {
  const std::string yaml = Yaml("", "      firmwareVersion: { version: 16.35.3006 }\n");
  RunResult r = Provisioner({"doctor", yaml, "--root", root_, "-o", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string out = r.out;
  size_t at = out.find("firmware.version-pin");
  ASSERT_NE(at, std::string::npos) << out;
  json j = json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  bool found = false;
  std::function<void(const json&)> walk = [&](const json& v) {
    if (v.is_object() && v.value("id", "") == "firmware.version-pin") {
      found = true;
      EXPECT_EQ(v.value("verdict", ""), "fail") << v.dump();
      EXPECT_NE(v.dump().find("runs firmware 16.35.2000, but nic ib0 pins 16.35.3006"),
                std::string::npos)
          << v.dump();
      EXPECT_NE(v.dump().find(kFlintCapture), std::string::npos) << v.dump();     // evidence
      EXPECT_NE(v.dump().find("policy: update"), std::string::npos) << v.dump();  // fix
      return;
    }
    if (v.is_structured()) {
      for (const auto& e : v) walk(e);
    }
  };
  walk(j);
  EXPECT_TRUE(found) << out;
  // The pinned version running: ok, exit 0.
  const std::string same = Yaml("", "      firmwareVersion: { version: 16.35.2000 }\n");
  RunResult ok = Provisioner({"doctor", same, "--root", root_, "-o", "json", "--only", "fail"});
  EXPECT_EQ(ok.out.find("firmware.version-pin"), std::string::npos) << ok.out;
}

}  // namespace
}  // namespace provisioner::testing

namespace provisioner::testing {
namespace {

// The journal an apply of `yaml` leaves when killed with the card's burn in
// `burn_step` ("applying" or "applied") and every other change pending (a
// dead pid): from the saved plan's changes.
void KilledApplyJournal(const std::string& yaml, const std::string& root,
                        const std::string& burn_step) {
  const std::string saved = MakeTempDir("fw-plan") + "/plan.json";
  RunResult plan = Provisioner({"plan", yaml, "--root", root, "--out", saved});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  json record = json::parse(ReadFile(saved), nullptr, false);
  ASSERT_TRUE(record.contains("changes")) << record.dump();
  json journal = {{"formatVersion", 1},
                  {"pid", 999999},
                  {"startedAt", "2026-11-26T05:00:00Z"},
                  {"changes", json::array()}};
  bool burn = false;
  for (json c : record["changes"]) {
    burn = burn || c["id"] == "firmware/0000:86:00.0/burn";
    c["step"] = c["id"] == "firmware/0000:86:00.0/burn" ? burn_step : "pending";
    journal["changes"].push_back(c);
  }
  ASSERT_TRUE(burn) << record.dump();
  PutFile(JournalPath(root), journal.dump());
}

// An apply killed during the burn (the journal holds the burn as "applying";
// flint's failsafe burn switches to the new image only at its end, so the
// flash still reads 16.35.2000): plan reports the interrupted change and
// plans the burn again; apply --rollback burns nothing (a burn cannot be
// undone), says so and exits 3; the next apply burns.
TEST_F(FirmwareUpdateCliTest, KilledDuringTheBurnIsReportedAndReplanned) {
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  const std::string yaml = Pin("");
  ASSERT_NO_FATAL_FAILURE(KilledApplyJournal(yaml, root_, "applying"));
  const std::string flash = Flint();

  json p = PlanJson(yaml, root_);
  EXPECT_NE(p["warnings"].dump().find("stopped during firmware/0000:86:00.0/burn"),
            std::string::npos)
      << p.dump();
  ASSERT_GE(p["changes"].size(), 1u);
  EXPECT_EQ(p["changes"][0]["id"], "firmware/0000:86:00.0/burn");

  // Exit 3 as after any reboot change: a burn killed after flint switched
  // images leaves one that runs at the next boot.
  RunResult rollback = Provisioner({"apply", yaml, "--root", root_, "--rollback"});
  EXPECT_EQ(rollback.exit_code, 3) << rollback.out << rollback.err;
  EXPECT_NE((rollback.out + rollback.err).find("a firmware burn cannot be undone"),
            std::string::npos)
      << rollback.out << rollback.err;
  EXPECT_EQ(Flint(), flash);
  EXPECT_FALSE(Exists(JournalPath(root_)));

  RunResult apply = Provisioner({"apply", yaml, "--root", root_});
  EXPECT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  EXPECT_EQ(Flint(), ReadFile(RunfilePath("modules/firmware/testdata/mstflint-cx5-pending.query")));
}

}  // namespace
}  // namespace provisioner::testing

namespace provisioner::testing {
namespace {

// Issue 36.5: activation reset, an apply killed after the burn and before
// the reset (the journal holds the burn applied, the activate pending; the
// flash holds 16.35.3006, the card runs 16.35.2000). apply --rollback cannot
// undo the burn: the image runs at the next boot, so it exits 3, writes the
// reboot marker and names the card and both versions.
TEST_F(FirmwareUpdateCliTest, RollbackAfterTheBurnBeforeTheResetExits3WithTheMarker) {
  KernelSimDaemon sim(root_);
  ASSERT_TRUE(sim.ready());
  const std::string yaml = Pin("  firmware:\n    activation: reset\n");
  ASSERT_NO_FATAL_FAILURE(KilledApplyJournal(yaml, root_, "applied"));
  // What the burn left: the new image on the flash, the old one running.
  PutFile(root_ + kFlintCapture,
          ReadFile(RunfilePath("modules/firmware/testdata/mstflint-cx5-pending.query")));

  RunResult rollback = Provisioner({"apply", yaml, "--root", root_, "--rollback", "-o", "json"});
  EXPECT_EQ(rollback.exit_code, 3) << rollback.out << rollback.err;
  EXPECT_TRUE(Exists(root_ + "/run/reboot-required"));
  EXPECT_NE(rollback.out.find("0000:86:00.0 carries firmware 16.35.3006 on its flash and runs "
                              "16.35.2000"),
            std::string::npos)
      << rollback.out << rollback.err;
  EXPECT_EQ(Flint(), ReadFile(RunfilePath("modules/firmware/testdata/mstflint-cx5-pending.query")));
  EXPECT_FALSE(Exists(JournalPath(root_)));
  EXPECT_EQ(sim.Refused(), "");
}

}  // namespace
}  // namespace provisioner::testing
