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
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

constexpr char kCapture[] = "/run/provisioner/mstconfig/0000:86:00.0.query";
constexpr char kResetCapture[] = "/run/provisioner/mstfwreset/0000:86:00.0.query";
constexpr char kRefuse[] = "/run/provisioner/mstfwreset/0000:86:00.0.refuse";
constexpr char kNumVfs[] = "/sys/bus/pci/devices/0000:86:00.0/sriov_numvfs";

std::string Yaml(const std::string& extra_spec, const std::string& extra_nic) {
  return WriteTempFile("host.yaml",
                       "apiVersion: provisioner/v1alpha1\nkind: HostConfig\n"
                       "metadata:\n  name: ib-worker1\nspec:\n" +
                           extra_spec +
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

  RunResult plan = Provisioner({"plan", yaml, "--root", root_, "-o", "json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  json p = json::parse(plan.out, nullptr, false);
  ASSERT_EQ(p["changes"].size(), 2u) << plan.out;
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
  RunResult plan = Provisioner({"plan", yaml, "--root", root_, "-o", "json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  json p = json::parse(plan.out, nullptr, false);
  ASSERT_EQ(p["changes"].size(), 1u) << plan.out;
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
  RunResult plan = Provisioner({"plan", yaml, "--root", root_, "-o", "json"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  json p = json::parse(plan.out, nullptr, false);
  ASSERT_GE(p["changes"].size(), 2u) << plan.out;
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
  RunResult bad = Provisioner({"plan", other, "--root", root_});
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.err.find("spec.nics[0].firmwareVersion.version: 0000:86:00.0 (PSID MT_0000000008) "
                         "runs firmware 16.35.2000, but nic ib0 pins 16.35.3006"),
            std::string::npos)
      << bad.err;
  const std::string same = Yaml("", "      firmwareVersion: { version: 16.35.2000 }\n");
  RunResult ok = Provisioner({"plan", same, "--root", root_, "-o", "json"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  // Without the capture: an error naming it, never a silent pass.
  ASSERT_EQ(::unlink((root_ + "/run/provisioner/mstflint/0000:86:00.0.query").c_str()), 0);
  RunResult missing = Provisioner({"plan", same, "--root", root_});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("cannot read the firmware version of 0000:86:00.0"), std::string::npos)
      << missing.err;
}

TEST_F(FirmwareResetCliTest, ActivationIsValidatedAtItsLine) {
  const std::string yaml = Yaml("  firmware:\n    activation: now\n", "");
  RunResult r = Provisioner({"validate", yaml});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find(":7:17"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace provisioner::testing
