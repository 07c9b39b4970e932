// End-to-end: the ipoib module with the real binary on the cx5-ib tree, the
// kernel simulator daemon acting as ib_ipoib (create_child/delete_child,
// mode). MTU and up go through the /sys/class/net files under --root, the
// addresses through run/provisioner/ipoib-addresses (real netlink:
// modules/ipoib:ipoib_netns_test).
#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kHostYaml = HostYaml(R"(  nics:
    - name: ib-nic
      nicSelector: { pfNames: [ibs5f0] }
      linkType: ib
      ipoib:
        mode: datagram
        mtu: 4092
        addresses: ["172.31.0.10/16"]
        pkeys: ["0x8001"]
)");

TEST(IpoibCliTest, PlanApplyThenNoChange) {
  const std::string root = ExtractHost("cx5-ib");
  KernelSimDaemon sim(root, 50);
  ASSERT_TRUE(sim.ready());
  const std::string yaml = WriteTempFile("ipoib.yaml", kHostYaml);
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const json plan = json::parse(p.out);
  EXPECT_EQ(Ids(plan["changes"]),
            (std::vector<std::string>{"ipoib/ibs5f0.8001/child", "ipoib/ibs5f0.8001/mode",
                                      "ipoib/ibs5f0/mtu", "ipoib/ibs5f0.8001/mtu",
                                      "ipoib/ibs5f0/addresses", "ipoib/ibs5f0.8001/up"}))
      << plan.dump(2);

  RunResult a = Provisioner({"apply", yaml, "--root", root, "--settle-timeout", "10"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err << sim.Refused();
  const std::string child = root + "/sys/class/net/ibs5f0.8001/";
  EXPECT_EQ(ReadFile(child + "pkey"), "0x8001\n");
  EXPECT_EQ(ReadFile(child + "parent"), "ibs5f0\n");
  EXPECT_EQ(ReadFile(child + "mode"), "datagram\n");
  EXPECT_EQ(ReadFile(child + "mtu"), "4092\n");
  EXPECT_EQ(ReadFile(child + "flags"), "0x1003\n");
  EXPECT_EQ(ReadFile(root + "/sys/class/net/ibs5f0/mtu"), "4092\n");
  EXPECT_EQ(ReadFile(root + "/run/provisioner/ipoib-addresses"), "ibs5f0 172.31.0.10/16\n");
  // The child sits beside its parent under the PCI function, as the kernel puts it.
  EXPECT_TRUE(Exists(root + "/sys/bus/pci/devices/0000:86:00.0/net/ibs5f0.8001/pkey"));

  ExpectConverged(yaml, root);

  RunResult d = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const json facts = json::parse(d.out);
  EXPECT_EQ(facts["ipoib"]["ibs5f0"]["children"], json::array({"ibs5f0.8001"}));
  EXPECT_EQ(facts["ipoib"]["ibs5f0.8001"]["pkey"], "0x8001");
  EXPECT_EQ(facts["ipoib"]["ibs5f0"]["mode"], "datagram");
  RunResult table = Provisioner({"discover", "--root", root});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("ibs5f0.8001  ibs5f0  0x8001  datagram  4092  yes"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("172.31.0.10/16"), std::string::npos) << table.out;
}

// The PF's mtu cannot be read at apply (here: garbage in its mtu file), after
// the child was made: apply fails naming the change and the path, and rolls
// back newest first, down to delete_child (the daemon removes the child).
TEST(IpoibCliTest, FailureRollsBackTheChild) {
  const std::string root = ExtractHost("cx5-ib");
  KernelSimDaemon sim(root, 50);
  ASSERT_TRUE(sim.ready());
  const std::string mtu = root + "/sys/class/net/ibs5f0/mtu";
  {
    FILE* f = std::fopen(mtu.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("bogus\n", f);
    std::fclose(f);
  }
  const std::string yaml = WriteTempFile("ipoib.yaml", kHostYaml);
  RunResult a = Provisioner({"apply", yaml, "--root", root, "--settle-timeout", "10"});
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  EXPECT_NE(a.err.find("ipoib/ibs5f0/mtu"), std::string::npos) << a.err;
  EXPECT_NE(a.err.find("/sys/class/net/ibs5f0/mtu"), std::string::npos) << a.err;
  EXPECT_FALSE(Exists(root + "/sys/class/net/ibs5f0.8001"));
  EXPECT_FALSE(Exists(root + "/sys/bus/pci/devices/0000:86:00.0/net/ibs5f0.8001"));
  EXPECT_FALSE(Exists(root + "/run/provisioner/ipoib-addresses"));
  EXPECT_EQ(sim.Refused(), "");
}

// A saved plan is refused once the IPoIB state it was made from changed (an
// address someone added), and applies the recorded children otherwise.
TEST(IpoibCliTest, SavedPlanIsRefusedWhenTheIpoibStateChanged) {
  const std::string root = ExtractHost("cx5-ib");
  KernelSimDaemon sim(root, 50);
  ASSERT_TRUE(sim.ready());
  const std::string yaml = WriteTempFile("ipoib.yaml", kHostYaml);
  const std::string planfile = WriteTempFile("ipoib.plan.json", "");
  ASSERT_EQ(Provisioner({"plan", yaml, "--root", root, "--out", planfile}).exit_code, 0);
  {
    FILE* f = std::fopen((root + "/run/provisioner/ipoib-addresses").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("ibs5f0 10.1.0.1/24\n", f);
    std::fclose(f);
  }
  RunResult stale = Provisioner({"apply", planfile});
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_NE(stale.err.find("changed since the plan was made"), std::string::npos) << stale.err;
  EXPECT_FALSE(Exists(root + "/sys/class/net/ibs5f0.8001"));

  ASSERT_EQ(Provisioner({"plan", yaml, "--root", root, "--out", planfile}).exit_code, 0);
  RunResult a = Provisioner({"apply", planfile, "--settle-timeout", "10"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_EQ(ReadFile(root + "/sys/class/net/ibs5f0.8001/pkey"), "0x8001\n");
  EXPECT_EQ(ReadFile(root + "/run/provisioner/ipoib-addresses"), "ibs5f0 172.31.0.10/16\n");
}

TEST(IpoibCliTest, ConnectedModeWithoutRcFlagIsAPlanError) {
  const std::string root = ExtractHost("cx5-ib");
  const std::string yaml = WriteTempFile("cm.yaml", HostYaml(R"(  nics:
    - name: ib-nic
      nicSelector: { pfNames: [ibs5f0] }
      ipoib: { mode: connected, mtu: 65520 }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("9:22: spec.nics[0].ipoib.mode"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("ipoib_enhanced=0"), std::string::npos) << p.err;
}

TEST(IpoibCliTest, IpoibOnAnEthernetPortIsAnError) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string yaml = WriteTempFile("eth.yaml", HostYaml(R"(  nics:
    - name: pf0
      nicSelector: { pfNames: [ens6f0np0] }
      ipoib: { mode: datagram }
)"));
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find(":9:14: spec.nics[0].ipoib: "), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("ens6f0np0 (type 1, Ethernet)"), std::string::npos) << p.err;
}

// doctor: the child's P_Key is not in the port's table until the SM puts it there.
TEST(IpoibCliTest, DoctorChecksThePkeyTable) {
  const std::string root = ExtractHost("cx5-ib");
  const std::string yaml = WriteTempFile("ipoib.yaml", kHostYaml);
  auto pkey_check = [&]() {
    RunResult d = Provisioner({"doctor", yaml, "--root", root, "-o", "json"});
    EXPECT_NE(d.exit_code, -1) << d.err;
    std::map<std::string, json> by_id;
    const json doc = json::parse(d.out);  // alive while iterated
    for (const auto& c : doc["checks"]) {
      if (c["module"] == "ipoib") by_id[c["id"]] = c;
    }
    return by_id;
  };
  auto before = pkey_check();
  ASSERT_EQ(before.count("ipoib.pkey"), 1u);
  EXPECT_EQ(before["ipoib.pkey"]["verdict"], "fail");
  EXPECT_NE(before["ipoib.pkey"]["fix"].get<std::string>().find("subnet manager"),
            std::string::npos);
  // 2044 now, 4092 asked: a warning until apply (the SM's broadcast group may cap it).
  EXPECT_EQ(before["ipoib.mode-mtu"]["verdict"], "warn");
  // The SM adds the port to partition 0x0001 (as a full member).
  const std::string table =
      root + "/sys/bus/pci/devices/0000:86:00.0/infiniband/mlx5_0/ports/1/pkeys/1";
  ASSERT_EQ(::chmod(table.c_str(), 0644), 0);
  {
    FILE* f = std::fopen(table.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs("0x8001\n", f);
    std::fclose(f);
  }
  auto after = pkey_check();
  EXPECT_EQ(after["ipoib.pkey"]["verdict"], "ok") << after["ipoib.pkey"].dump(2);
}

}  // namespace
}  // namespace provisioner::testing
