// GPU <-> NIC topology, nicSelector.nearGpu and spec.rails end to end: the
// real binary against the HGX H100 tree (examples/hosts/hgx-h100.ttar, built from
// a real capture's bus layout) and the shared-switch tree.
#include <sys/stat.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"
#include "yaml-cpp/yaml.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// GPU i of the HGX tree (PCI address order) and the ConnectX-7 on its switch.
const std::vector<std::pair<std::string, std::string>> kRails = {
    {"0000:19:00.0", "0000:1a:00.0"}, {"0000:3b:00.0", "0000:3c:00.0"},
    {"0000:4c:00.0", "0000:4d:00.0"}, {"0000:5d:00.0", "0000:5e:00.0"},
    {"0000:9b:00.0", "0000:9c:00.0"}, {"0000:bb:00.0", "0000:bc:00.0"},
    {"0000:cb:00.0", "0000:cc:00.0"}, {"0000:db:00.0", "0000:dc:00.0"}};

// host.yaml of host "w" with `spec` (indented as under spec:), in file `name`.
std::string SpecFile(const std::string& name, const std::string& spec) {
  return WriteTempFile(name, HostYaml(spec, "w"));
}

TEST(TopologyCliTest, DiscoverPairsEachGpuWithTheNicUnderItsSwitch) {
  const std::string root = ExtractHost("hgx-h100");
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  ASSERT_EQ(doc["gpus"].size(), 8u);
  for (size_t i = 0; i < kRails.size(); ++i) {
    EXPECT_EQ(doc["gpus"][i]["pciAddress"], kRails[i].first);
    EXPECT_EQ(doc["gpus"][i]["numaNode"], i < 4 ? 0 : 1);
  }
  // 8 GPUs x 12 NICs (8 ConnectX-7, 2 dual-port ConnectX-6 Dx).
  ASSERT_EQ(doc["topology"].size(), 96u);
  std::map<std::pair<std::string, std::string>, std::string> level;
  auto at = [&](const std::string& gpu, const std::string& nic) { return level[{gpu, nic}]; };
  for (const auto& t : doc["topology"]) level[{t["gpu"], t["nic"]}] = t["level"];
  for (size_t i = 0; i < kRails.size(); ++i) {
    EXPECT_EQ(level[kRails[i]], "PIX") << kRails[i].first;
    // Another switch on the same socket is NODE, the other socket SYS.
    const auto& same_node = kRails[i < 4 ? (i + 1) % 4 : 4 + (i + 1) % 4].second;
    const auto& other_node = kRails[(i + 4) % 8].second;
    EXPECT_EQ(at(kRails[i].first, same_node), "NODE");
    EXPECT_EQ(at(kRails[i].first, other_node), "SYS");
  }
  // The ConnectX-6 Dx shares GPU 0's switch too.
  EXPECT_EQ(at("0000:19:00.0", "0000:1b:00.1"), "PIX");
  int pix = 0;
  for (const auto& [k, v] : level) pix += v == "PIX";
  EXPECT_EQ(pix, 12);
}

TEST(TopologyCliTest, DiscoverTablePrintsTheMatrix) {
  const std::string root = ExtractHost("hgx-h100");
  RunResult r = Provisioner({"discover", "--root", root});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("GPU x NIC PCIe topology"));
  EXPECT_THAT(r.out, HasSubstr("GPU0  PIX   PIX   PIX   NODE"));
  EXPECT_THAT(r.out, HasSubstr("GPU7  SYS"));
  EXPECT_THAT(r.out, HasSubstr("NIC0: 0000:1a:00.0 (15b3:1021 enp26s0np0,mlx5_0)"));
}

TEST(TopologyCliTest, HostWithoutGpusHasEmptyTopology) {
  const std::string root = ExtractHost("cx5-ib");
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out);
  EXPECT_TRUE(doc["gpus"].empty());
  EXPECT_TRUE(doc["topology"].is_array());
  EXPECT_TRUE(doc["topology"].empty());
}

TEST(TopologyCliTest, RailsPlanEightNumVfsChangesInGpuOrder) {
  const std::string root = ExtractHost("hgx-h100");
  json plan = PlanJson(Example("rails.yaml"), root);
  std::vector<std::string> targets;
  for (const auto& c : plan["changes"]) {
    if (c["module"] == "sriov" && c["attribute"] == "numVfs") {
      EXPECT_EQ(c["after"], 12);
      targets.push_back(c["target"]);
    }
  }
  ASSERT_EQ(targets.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(targets[i], kRails[i].second);
}

TEST(TopologyCliTest, RailsManifestsFollowTheGpuOrder) {
  // Without the host's topology the rails' selectors would match every NIC.
  RunResult bare = Provisioner({"manifests", Example("rails.yaml")});
  EXPECT_EQ(bare.exit_code, 1);
  EXPECT_THAT(bare.err, HasSubstr("spec.nics[0].nicSelector.nearGpu (from spec.rails, rail 1)"));
  EXPECT_EQ(bare.out, "");
  const std::string root = ExtractHost("hgx-h100");
  RunResult r = Provisioner({"manifests", Example("rails.yaml"), "--root", root});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, int> kinds;
  std::vector<std::string> roots;
  for (const YAML::Node& doc : YAML::LoadAll(r.out)) {
    const std::string kind = doc["kind"].as<std::string>();
    ++kinds[kind];
    if (kind == "SriovNetworkNodePolicy") {
      ASSERT_EQ(doc["spec"]["nicSelector"]["rootDevices"].size(), 1u);
      roots.push_back(doc["spec"]["nicSelector"]["rootDevices"][0].as<std::string>());
      EXPECT_EQ(doc["spec"]["resourceName"].as<std::string>(),
                "gpu" + std::to_string(roots.size()) + "sriov");
    }
  }
  EXPECT_EQ(kinds["SpiderIPPool"], 8);
  EXPECT_EQ(kinds["SpiderMultusConfig"], 8);
  EXPECT_EQ(kinds["SriovNetworkNodePolicy"], 8);
  ASSERT_EQ(roots.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(roots[i], kRails[i].second);
  // The one-block version is the guide's hand-written 8-rail layout.
  RunResult written = Provisioner({"manifests", Example("rails-8gpu.yaml"), "--root", root});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_EQ(r.out, written.out);
}

TEST(TopologyCliTest, ValidateShowExpanded) {
  RunResult r = Provisioner({"validate", Example("rails.yaml"), "--show-expanded"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  YAML::Node doc = YAML::Load(r.out);
  EXPECT_FALSE(doc["spec"]["rails"]);
  ASSERT_EQ(doc["spec"]["nics"].size(), 8u);
  EXPECT_EQ(doc["spec"]["nics"][7]["name"].as<std::string>(), "gpu8-nic");
  EXPECT_EQ(doc["spec"]["nics"][7]["nicSelector"]["nearGpu"].as<int>(), 7);
  EXPECT_EQ(doc["spec"]["ipPools"][7]["subnet"].as<std::string>(), "172.16.18.0/24");
  EXPECT_EQ(doc["spec"]["multusConfigs"][7]["ippools"]["ipv4"][0].as<std::string>(), "gpu8-net18");
  RunResult plain = Provisioner({"validate", Example("rails.yaml")});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("valid (8 nics, 8 ipPools, 8 multusConfigs"));
}

std::string AllGpusRails() {
  return SpecFile("all-gpus.yaml", R"(  rails:
    count: allGpus
    nic:
      name: "gpu{n}-nic"
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      numVfs: 4
      resourceName: "gpu{n}sriov"
    ipPool:
      subnet: "10.{n}.0.0/16"
    multus:
      namespace: spiderpool
      cniType: sriov
)");
}

TEST(TopologyCliTest, AllGpusExpandsPerHost) {
  const std::string file = AllGpusRails();
  const std::string root = ExtractHost("hgx-h100");
  RunResult v = Provisioner({"validate", file, "--root", root, "--show-expanded"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  YAML::Node doc = YAML::Load(v.out);
  ASSERT_EQ(doc["spec"]["nics"].size(), 8u);
  EXPECT_EQ(doc["spec"]["multusConfigs"][2]["name"].as<std::string>(), "rail3");
  // Without a host: unexpanded, and said so.
  RunResult bare = Provisioner({"validate", file, "--show-expanded"});
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_THAT(bare.err, HasSubstr("allGpus: expanded at plan time"));
  EXPECT_TRUE(YAML::Load(bare.out)["spec"]["rails"]);
  RunResult m = Provisioner({"manifests", file});
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_THAT(m.err, HasSubstr("spec.rails.count is allGpus: give --root DIR"));
  RunResult p = Provisioner({"plan", file, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(json::parse(p.out)["changes"].size(), 8u);
  // No GPUs on this host: a clear error at spec.rails.count.
  EXPECT_THAT(Refused("plan", file, ExtractHost("cx5-ib")),
              HasSubstr(":7:12: spec.rails.count: allGpus: this host has 0 GPUs"));
  // One GPU, but no ConnectX-7: the nearGpu selector says so.
  const std::string one = Refused("plan", file, ExtractHost("cx5-roce"));
  EXPECT_THAT(one, HasSubstr(":7:12: spec.rails.count: rail 1 (spec.nics[0].nicSelector.nearGpu): "
                             "no NIC matching the selector's other fields is connected to GPU 0 "
                             "(0000:18:00.0)"));
  EXPECT_THAT(one, ::testing::Not(HasSubstr("selects no PCI function")));
}

TEST(TopologyCliTest, TwoGpusSharingOneNicIsAClearError) {
  const std::string root = ExtractHost("gpu-shared-switch");
  const std::string file = SpecFile("shared.yaml", R"(  rails:
    count: allGpus
    nic: { nicSelector: { vendor: "15b3" }, numVfs: 4 }
)");
  const std::string err = Refused("plan", file, root);
  EXPECT_THAT(err, HasSubstr(":7:12: spec.rails.count: rail 2 (spec.nics[1].nicSelector.nearGpu): "
                             "the nearest NIC to GPU 1 (0000:1b:00.0), 0000:1a:00.0 (PIX), is "
                             "also the nearest to GPU 0 (0000:19:00.0), claimed by spec.nics[0] "
                             "(rail1): two GPUs share one NIC"));
  EXPECT_THAT(Refused("validate", file, root), HasSubstr("two GPUs share one NIC"));
}

TEST(TopologyCliTest, NearGpuOutOfRangeAndRemote) {
  const std::string root = ExtractHost("hgx-h100");
  const std::string file = SpecFile("near.yaml", R"(  nics:
    - name: far
      nicSelector: { nearGpu: 0, deviceID: "101d", rootDevices: ["0000:9d:00.0"] }
      numVfs: 2
    - name: missing
      nicSelector: { nearGpu: 8 }
)");
  const std::string err = Refused("plan", file, root);
  EXPECT_THAT(err, HasSubstr("near.yaml:8:31: spec.nics[0].nicSelector.nearGpu: the nearest NIC "
                             "to GPU 0 (0000:19:00.0) is 0000:9d:00.0 at level SYS (across NUMA "
                             "nodes)"));
  EXPECT_THAT(err, HasSubstr("allowRemote: true"));
  EXPECT_THAT(err, HasSubstr("near.yaml:11:31: spec.nics[1].nicSelector.nearGpu: GPU 8 does not "
                             "exist: this host has 8 GPUs (0-7, in PCI address order)"));
  // allowRemote accepts the remote NIC.
  const std::string ok = SpecFile("remote.yaml", R"(  nics:
    - name: far
      nicSelector: { nearGpu: 0, deviceID: "101d", rootDevices: ["0000:9d:00.0"], allowRemote: true }
      numVfs: 2
)");
  json plan = PlanJson(ok, root);
  ASSERT_EQ(plan["changes"].size(), 1u);
  EXPECT_EQ(plan["changes"][0]["target"], "0000:9d:00.0");
}

TEST(TopologyCliTest, PlanErrorsOnExpandedItemsNameTheRailsField) {
  const std::string root = ExtractHost("hgx-h100");
  const std::string file = SpecFile("too-many.yaml", R"(  rails:
    count: 2
    nic:
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      numVfs: 20
)");
  const std::string err = Refused("plan", file, root);
  EXPECT_THAT(err, HasSubstr("too-many.yaml:10:15: spec.rails.nic.numVfs: rail 2 "
                             "(spec.nics[1].numVfs): 20 exceeds sriov_totalvfs 16 of "
                             "0000:3c:00.0"));
}

// Apply on the HGX tree under the simulated kernel: every rail NIC gets its
// VFs, then the plan is empty.
TEST(TopologyCliTest, RailsApplyConverges) {
  const std::string root = ExtractHost("hgx-h100");
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/10);
  ASSERT_TRUE(sim.ready());
  const std::string file = SpecFile("apply-rails.yaml", R"(  rails:
    count: allGpus
    nic:
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      numVfs: 2
)");
  RunResult a =
      Provisioner({"apply", file, "--root", root, "-o", "json", "--settle-timeout", "30"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_EQ(json::parse(a.out)["changes"].size(), 8u);
  for (const auto& [gpu, nic] : kRails) {
    struct stat st;
    EXPECT_EQ(::stat((root + "/sys/bus/pci/devices/" + nic + "/virtfn1").c_str(), &st), 0) << nic;
  }
  EXPECT_EQ(sim.Refused(), "");
  ExpectConverged(file, root);
}

// A plan warning is printed once: as a located diagnostic on stderr; the
// table does not repeat it (JSON keeps it in "warnings", the contract's).
TEST(TopologyCliTest, PlanWarningPrintedOnceInTableMode) {
  const std::string root = ExtractHost("hgx-h100");
  const std::string warning = "kernel module nvidia_peermem is not loaded";
  auto count = [&](const std::string& text) {
    size_t n = 0;
    for (size_t at = text.find(warning); at != std::string::npos; at = text.find(warning, at + 1)) ++n;
    return n;
  };
  for (const char* command : {"plan", "apply"}) {
    SCOPED_TRACE(command);
    std::vector<std::string> args = {command, Example("rails-8gpu.yaml"), "--root", root};
    if (std::string(command) == "apply") args.push_back("--dry-run");
    RunResult t = Provisioner(args);
    ASSERT_EQ(t.exit_code, 0) << t.err;
    EXPECT_EQ(count(t.out) + count(t.err), 1u) << t.out << t.err;
    EXPECT_THAT(t.err, HasSubstr("rails-8gpu.yaml:18:7: warning: spec.kernelModules[2]: " + warning));
  }
  RunResult j = Provisioner({"plan", Example("rails-8gpu.yaml"), "--root", root, "-o", "json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(count(json::parse(j.out)["warnings"].dump()), 1u) << j.out;
}

}  // namespace
}  // namespace provisioner::testing
