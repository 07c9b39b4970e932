// End-to-end: eswitchMode (issue 28 item 5) with the real binary against the
// ConnectX-5 RoCE tree and the kernel_sim daemon (test/sim/eswitch_sim.h:
// the devlink capture is the request; switchdev brings one representor
// netdev per VF). Plan order, apply, no change after, doctor, and a refusal
// rolled back.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kYaml = Pf0Yaml(4, R"(      eswitchMode: switchdev
      resourceName: switchdev_vfs
)");

json Parse(const RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

TEST(EswitchCliTest, SwitchdevAfterVfsWithRepresentorsThenNoChange) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, 50);
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("host.yaml", kYaml);
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(
      Ids(Parse(p)["changes"]),
      (std::vector<std::string>{"sriov/0000:af:00.0/numVfs", "eswitch/0000:af:00.0/eswitchMode"}));
  RunResult a =
      Provisioner({"apply", yaml, "--root", root, "-o", "json", "--settle-timeout", "30"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err << sim.Refused();
  const std::string capture = ReadFile(root + "/run/provisioner/devlink/0000:af:00.0");
  EXPECT_NE(capture.find("\"mode\":\"switchdev\""), std::string::npos) << capture;
  EXPECT_NE(capture.find("\"flowSteeringMode\":\"smfs\""), std::string::npos) << capture;
  for (int i = 0; i < 4; ++i) {
    const std::string rep = root + "/sys/class/net/ens6f0npf0vf" + std::to_string(i);
    EXPECT_EQ(ReadFile(rep + "/phys_port_name"), "pf0vf" + std::to_string(i) + "\n") << rep;
    // Each VF bound to mlx5_core again after the change.
    EXPECT_TRUE(
        Exists(root + "/sys/bus/pci/devices/0000:af:00." + std::to_string(2 + i) + "/driver"));
  }
  EXPECT_EQ(sim.Refused(), "");
  ExpectConverged(yaml, root);

  // The operator's policy says the same mode (its CRD's spec.eSwitchMode).
  RunResult mj = Provisioner({"manifests", yaml, "--root", root});
  ASSERT_EQ(mj.exit_code, 0) << mj.err;
  const size_t policy = mj.out.find("kind: \"SriovNetworkNodePolicy\"");
  ASSERT_NE(policy, std::string::npos) << mj.out;
  const std::string doc = mj.out.substr(policy, mj.out.find("\n---", policy) - policy);
  EXPECT_NE(doc.find("eSwitchMode: \"switchdev\""), std::string::npos) << doc;

  RunResult doctor = Provisioner({"doctor", yaml, "--root", root, "-o", "json"});
  EXPECT_NE(doctor.out.find("eswitch.representors"), std::string::npos) << doctor.out;
  // A representor gone: doctor fails, naming the VF.
  const std::string rep2 = root + "/sys/class/net/ens6f0npf0vf2";
  char buf[4096];
  ssize_t n = ::readlink(rep2.c_str(), buf, sizeof buf - 1);
  ASSERT_GT(n, 0);
  std::string target(buf, static_cast<size_t>(n));
  const std::string dir = root + "/sys/class/net/" + target;
  ASSERT_EQ(std::system(("rm -rf '" + dir + "' '" + rep2 + "'").c_str()), 0);
  RunResult bad = Provisioner({"doctor", yaml, "--root", root, "-o", "json"});
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  EXPECT_NE(bad.out.find("VF 2 of 4 have no representor"), std::string::npos) << bad.out;
}

// The devlink request refused (EBUSY: TC rules on the E-Switch): apply
// fails at the eswitch change and rolls the VFs back; the mode stays legacy.
TEST(EswitchCliTest, ARefusedModeRollsBack) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, 50, {"--fault", "devlink/0000:af:00.0=EBUSY"});
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("host.yaml", kYaml);
  RunResult a = Provisioner({"apply", yaml, "--root", root, "--settle-timeout", "3"});
  EXPECT_NE(a.exit_code, 0) << a.out << a.err;
  EXPECT_NE((a.out + a.err).find("eswitch/0000:af:00.0/eswitchMode"), std::string::npos)
      << a.out << a.err;
  EXPECT_NE(sim.Refused().find("/run/provisioner/devlink/0000:af:00.0"), std::string::npos)
      << sim.Refused();
  EXPECT_NE(ReadFile(root + "/run/provisioner/devlink/0000:af:00.0").find("\"mode\":\"legacy\""),
            std::string::npos);
  EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs"), "0\n");
  EXPECT_FALSE(Exists(root + "/sys/class/net/ens6f0npf0vf0"));
}

}  // namespace
}  // namespace provisioner::testing
