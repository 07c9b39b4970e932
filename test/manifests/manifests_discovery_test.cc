// provisioner manifests --root: the PF netdev (macvlan master, device plugin
// ifNames) and the policy's rootDevices come from discovery when host.yaml
// does not name them.
#include <cstdlib>
#include <string>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/host/host_fs.h"
#include "engine/module/clock.h"
#include "engine/module/registry.h"
#include "gtest/gtest.h"
#include "modules/k8s/manifests.h"
#include "nlohmann/json.hpp"
#include "test/support/ttar.h"

namespace provisioner::k8s {
namespace {

using nlohmann::json;

class NoProgress final : public Progress {
 public:
  void Step(std::string_view) override {}
};

HostFacts DiscoverTree(const std::string& ttar, const std::string& name) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  Status s = provisioner::testing::ExtractTtar(ttar, dir);
  EXPECT_TRUE(s.ok()) << s.message();
  auto fs = NewLocalHostFs(dir);
  auto modules = ModuleRegistry::CreateAll();
  NoProgress progress;
  HostContext ctx;
  ctx.fs = fs.get();
  ctx.clock = &RealClock();
  ctx.progress = &progress;
  auto facts = Discover(modules, ctx);
  EXPECT_TRUE(facts.ok()) << facts.status().message();
  return facts.ok() ? *facts : HostFacts();
}

const Manifest* Find(const std::vector<Manifest>& ms, const std::string& kind,
                     const std::string& name) {
  for (const auto& m : ms) {
    if (m.kind == kind && m.name == name) return &m;
  }
  return nullptr;
}

TEST(ManifestsDiscoveryTest, MacvlanMasterFromRootDevices) {
  LoadResult r = LoadDesiredStateFromFile("examples/roce-shared-macvlan.yaml");
  ASSERT_TRUE(r.state);
  DesiredState d = *r.state;
  d.nics[0].selector.pf_names.clear();
  d.nics[0].selector.root_devices = {"0000:af:00.0"};
  d.nics[1].selector.pf_names.clear();
  d.nics[1].selector.root_devices = {"0000:af:00.1"};

  HostFacts facts = DiscoverTree("examples/hosts/cx5-roce.ttar", "cx5-roce");
  ManifestOptions opt;
  opt.facts = &facts;
  auto ms = BuildManifests(d, opt);
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  EXPECT_EQ(Find(*ms, "SpiderMultusConfig", "macvlan-ens6f0np0")->doc["spec"]["macvlan"]["master"],
            json({"ens6f0np0"}));
  EXPECT_EQ(Find(*ms, "SpiderMultusConfig", "macvlan-ens6f1np1")->doc["spec"]["macvlan"]["master"],
            json({"ens6f1np1"}));
  const Manifest* cm = Find(*ms, "ConfigMap", "rdma-devices");
  ASSERT_NE(cm, nullptr);
  json c = json::parse(cm->doc["data"]["config.json"].get<std::string>());
  EXPECT_EQ(c["configList"][0]["selectors"]["ifNames"], json({"ens6f0np0", "ens6f1np1"}));
}

TEST(ManifestsDiscoveryTest, PolicyRootDevicesFromVendorDevice) {
  LoadResult r = LoadDesiredStateFromFile("examples/roce-sriov.yaml");
  ASSERT_TRUE(r.state);
  DesiredState d = *r.state;
  d.nics[0].selector.root_devices.clear();  // vendor 15b3 + deviceID 1017 only

  HostFacts facts = DiscoverTree("examples/hosts/cx5-roce.ttar", "cx5-roce-2");
  ManifestOptions opt;
  opt.facts = &facts;
  auto ms = BuildManifests(d, opt);
  ASSERT_TRUE(ms.ok()) << ms.status().message();
  const Manifest* p = Find(*ms, "SriovNetworkNodePolicy", "roce-sriov-nic");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->doc["spec"]["nicSelector"]["rootDevices"], json({"0000:af:00.0", "0000:af:00.1"}));
}

}  // namespace
}  // namespace provisioner::k8s
