// Partial captures (issue 18, item 5): a tree that lacks files discovery
// would read still gives a useful discovery and plan, with warnings; the
// captures are real (ghw's I350 SR-IOV snapshot, hwloc's POWER9 topology).
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

// ghw's snapshot has empty net/<if>/ directories (no flags, no mtu): the
// numVfs 4 -> 2 change is planned; the link step is planned with an unknown
// current value and a warning, instead of failing the plan.
TEST(PartialCapturesTest, I350WithoutLinkStatePlansNumVfsAndWarnsAboutTheLink) {
  const std::string yaml =
      WriteTempFile("i350.yaml", HostYaml("  nics:\n"
                                          "    - name: igb\n"
                                          "      nicSelector: { rootDevices: [\"0000:05:00.0\"] }\n"
                                          "      numVfs: 2\n",
                                          "r610"));
  RunResult r = Provisioner({"plan", yaml, "--root", ExtractHost("i350-sriov-ghw"), "-o", "json",
                             "--detailed-exitcode"});
  ASSERT_EQ(r.exit_code, 2) << r.out << r.err;
  json j = ParseJson(r);
  bool numvfs = false, up = false;
  for (const json& c : j["changes"]) {
    if (c["id"] == "sriov/0000:05:00.0/numVfs") {
      numvfs = true;
      EXPECT_EQ(c["before"], 4);
      EXPECT_EQ(c["after"], 2);
    }
    if (c["module"] == "link" && c["attribute"] == "up") {
      up = true;
      EXPECT_TRUE(c["before"].is_null()) << c.dump();
    }
  }
  EXPECT_TRUE(numvfs) << j.dump(2);
  EXPECT_TRUE(up) << j.dump(2);
  ASSERT_FALSE(j["warnings"].empty()) << j.dump(2);
  EXPECT_NE(j["warnings"].dump().find("is not in the tree (a partial capture)"), std::string::npos)
      << j["warnings"].dump();
}

// hwloc's POWER9 capture: each PCI function has only class and local_cpus,
// and libpci aborted the whole discovery ("Cannot open .../vendor"). Each is
// now skipped with a warning naming the missing file; discovery goes on.
TEST(PartialCapturesTest, Power9FunctionsWithoutVendorAreSkippedWithWarnings) {
  const std::string root = ExtractHost("power9-partial-hwloc");
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ParseJson(r);
  size_t skipped = 0;
  for (const json& w : j["warnings"]) skipped += w.get<std::string>().rfind("PCI function ", 0) == 0;
  ASSERT_EQ(skipped, 6u) << j["warnings"].dump(2);
  EXPECT_EQ(j["warnings"][0],
            "PCI function 0004:05:00.0 skipped: /sys/bus/pci/devices/0004:05:00.0/vendor is "
            "missing (a partial capture); libpci cannot scan it");
  EXPECT_EQ(j["nics"], json::array());
  RunResult t = Provisioner({"discover", "--root", root});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("Warnings (discovery skipped these):"), std::string::npos) << t.out;
}

// hwloc's ConnectX-3 capture has no proc/modules, but its mlx4_0, bound
// mlx4_core and IPoIB ib0 say what is loaded: inferred, with a warning, and
// a plan asking for mlx4_ib does not try to load it again.
TEST(PartialCapturesTest, TreeWithoutProcModulesInfersLoadedModulesFromEvidence) {
  const std::string root = ExtractHost("mlx4-ib-hwloc");
  RunResult d = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  json j = ParseJson(d);
  const json& km = j["kernelModules"];
  for (const char* m : {"mlx4_core", "mlx4_ib", "ib_core", "ib_ipoib"}) {
    EXPECT_NE(km["loaded"].dump().find(std::string("\"") + m + "\""), std::string::npos)
        << m << " in " << km["loaded"].dump();
  }
  EXPECT_EQ(km["loadedSource"], "inferred from the tree (no /proc/modules)");
  EXPECT_NE(j["warnings"].dump().find("/proc/modules is not in the tree"), std::string::npos);

  const std::string yaml =
      WriteTempFile("mlx4.yaml", HostYaml("  kernelModules: [mlx4_ib, ib_ipoib]\n", "cx3"));
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  EXPECT_EQ(p.err.find("is not loaded"), std::string::npos) << p.err;
  const json plan = ParseJson(p);
  for (const json& c : plan["changes"]) {
    EXPECT_NE(c["attribute"], "loaded") << c.dump();  // only the modules-load.d line
  }
}

const json* Check(const json& doctor, const std::string& id, const std::string& target_part) {
  for (const json& c : doctor["checks"]) {
    if (c["id"] == id && c["target"].get<std::string>().find(target_part) != std::string::npos) {
      return &c;
    }
  }
  return nullptr;
}

// doctor on partial captures (issue 19, item 8): evidence a capture lacks is
// "not captured", a warning, not a failure of the host.
TEST(PartialCapturesTest, DoctorSaysNotCapturedForMissingEvidence) {
  const std::string root = ExtractHost("cx5-roce");
  // hwloc's captures have a dev/ with only dev/cpuset; gpud's copy of
  // /sys/class/infiniband has no gids/ (and no device links).
  std::filesystem::create_directories(root + "/dev/cpuset");
  std::filesystem::remove_all(root + "/sys/class/infiniband/mlx5_0/ports/1/gids");
  RunResult r = Provisioner({"doctor", "--root", root, "-o", "json"});
  ASSERT_NE(r.exit_code, -1) << r.err;
  json j = ParseJson(r);
  const json* dev = Check(j, "rdma.dev-files", "/dev/infiniband");
  ASSERT_NE(dev, nullptr) << j.dump(2).substr(0, 3000);
  EXPECT_EQ((*dev)["verdict"], "warn") << dev->dump();
  EXPECT_NE((*dev)["summary"].get<std::string>().find("not captured"), std::string::npos);
  const json* port = Check(j, "rdma.port-netdev", "mlx5_0");
  ASSERT_NE(port, nullptr) << j.dump(2).substr(0, 3000);
  EXPECT_EQ((*port)["verdict"], "warn") << port->dump();
  EXPECT_NE((*port)["summary"].get<std::string>().find(
                "not captured: /sys/class/infiniband/mlx5_0/ports/1/gids is not in this tree"),
            std::string::npos)
      << port->dump();
  // The other port, fully captured, is still checked for real.
  const json* other = Check(j, "rdma.port-netdev", "mlx5_1");
  ASSERT_NE(other, nullptr);
  EXPECT_EQ((*other)["verdict"], "ok") << other->dump();
}

// A complete tree has no discovery warnings (the key is there, empty).
TEST(PartialCapturesTest, CompleteTreeHasNoDiscoveryWarnings) {
  RunResult r = Provisioner({"discover", "--root", ExtractHost("cx5-roce"), "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ParseJson(r)["warnings"], json::array());
}

}  // namespace
}  // namespace provisioner::testing
