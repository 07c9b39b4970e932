// Scenario: provisioner and the sriov-network-operator's Mellanox plugin on
// one card. provisioner only raises the firmware's NUM_OF_VFS; the plugin sets
// it exactly (lowering it too) for every PF whose merged policy is not
// externallyManaged. The two fight unless the policy that wins on each of our
// PFs is ours. This test runs the operator's rules, as read in
// k8snetworkplumbingwg/sriov-network-operator @ 249e2001 (v1.6.0+):
// - controllers/sriovnetworknodepolicy_controller.go: policies sorted by
//   api/v1 ByPriority (priority descending, then name) and applied in turn;
// - api/v1/helper.go Apply: each selected PF's interface is replaced by the
//   applied policy's (numVfs, externallyManaged), merged only at equal
//   priority: the last applied, the lowest number, wins;
// - pkg/vendors/mellanox/mellanox.go HandleTotalVfs and
//   pkg/plugins/mellanox/mellanox_plugin.go: externallyManaged -> never write
//   NUM_OF_VFS (fail if the policy wants more than the firmware has); else
//   NUM_OF_VFS := the policy's numVfs whenever it differs.
// against the policies provisioner emits and a cluster admin's policy that
// selects every Mellanox NIC.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/manifests/manifests.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

struct Pf {
  std::string pci, vendor, device, name;
  int fw_num_of_vfs = 0;  // NUM_OF_VFS as provisioner left it (current boot)
};

bool Selected(const json& sel, const Pf& pf) {
  if (sel.contains("vendor") && sel["vendor"] != pf.vendor) return false;
  if (sel.contains("deviceID") && sel["deviceID"] != pf.device) return false;
  if (sel.contains("rootDevices")) {
    auto r = sel["rootDevices"];
    if (std::find(r.begin(), r.end(), pf.pci) == r.end()) return false;
  }
  if (sel.contains("pfNames")) {
    auto r = sel["pfNames"];
    if (std::find(r.begin(), r.end(), pf.name) == r.end()) return false;
  }
  return !sel.empty();
}

struct Outcome {
  std::string winner;
  bool externally_managed = false;
  int num_vfs = 0;
  // What the Mellanox plugin does with the firmware: -1 nothing, else the
  // NUM_OF_VFS it writes; `fails` when it refuses the externally managed PF.
  int writes_num_of_vfs = -1;
  bool fails = false;
};

Outcome Operator(std::vector<json> policies, const Pf& pf) {
  std::sort(policies.begin(), policies.end(), [](const json& a, const json& b) {
    const int pa = a["spec"].value("priority", 0), pb = b["spec"].value("priority", 0);
    if (pa != pb) return pa > pb;
    return a["metadata"]["name"].get<std::string>() < b["metadata"]["name"].get<std::string>();
  });
  Outcome o;
  for (const auto& p : policies) {
    if (!Selected(p["spec"]["nicSelector"], pf) || p["spec"].value("numVfs", 0) <= 0) continue;
    o.winner = p["metadata"]["name"];
    o.externally_managed = p["spec"].value("externallyManaged", false);
    o.num_vfs = p["spec"]["numVfs"];
  }
  if (o.winner.empty()) return o;
  if (o.externally_managed) {
    o.fails = o.num_vfs > pf.fw_num_of_vfs;
  } else if (o.num_vfs != pf.fw_num_of_vfs) {
    o.writes_num_of_vfs = o.num_vfs;
  }
  return o;
}

std::vector<json> Policies(const std::string& example) {
  LoadResult r = LoadDesiredStateFromFile("examples/" + example + ".yaml");
  EXPECT_TRUE(r.state.has_value());
  auto ms = BuildManifests(*r.state, ManifestOptions());
  EXPECT_TRUE(ms.ok()) << ms.status().message();
  std::vector<json> out;
  for (const auto& m : *ms) {
    if (m.kind == "SriovNetworkNodePolicy") out.push_back(m.doc);
  }
  return out;
}

json AdminPolicy(const std::string& name, std::optional<int> priority) {
  json spec = {{"nicSelector", {{"vendor", "15b3"}}},
               {"numVfs", 4},
               {"resourceName", "mlnx"},
               {"nodeSelector", {{"kubernetes.io/os", "linux"}}}};
  if (priority) spec["priority"] = *priority;
  return {{"apiVersion", "sriovnetwork.openshift.io/v1"},
          {"kind", "SriovNetworkNodePolicy"},
          {"metadata", {{"name", name}, {"namespace", "spiderpool"}}},
          {"spec", spec}};
}

TEST(OperatorScenarioTest, OurPolicyWinsOnEveryPfWeProvisionSoNumOfVfsIsNeverRewritten) {
  std::vector<json> ours = Policies("rails-8gpu");
  ASSERT_EQ(ours.size(), 8u);
  // The eight rails' PFs, NUM_OF_VFS raised by provisioner to numVfs (12).
  const char* const kPcis[] = {"0000:1a:00.0", "0000:3c:00.0", "0000:4d:00.0", "0000:5e:00.0",
                               "0000:9c:00.0", "0000:bc:00.0", "0000:cc:00.0", "0000:dc:00.0"};
  for (const std::optional<int>& admin_priority :
       {std::optional<int>(), std::optional<int>(1), std::optional<int>(50),
        std::optional<int>(99)}) {
    std::vector<json> all = ours;
    // Named to sort after ours: at equal priority the later name wins.
    all.push_back(AdminPolicy("zz-all-mellanox", admin_priority));
    for (size_t i = 0; i < 8; ++i) {
      const char* pci = kPcis[i];
      // As provisioner left it: rails-8gpu.yaml's names give rail i+1's PF
      // the netdev name rail<i+1>, which our policy's pfNames select.
      Pf pf{pci, "15b3", "1021", "rail" + std::to_string(i + 1), 12};
      Outcome o = Operator(all, pf);
      const std::string label = std::string(pci) + " admin priority " +
                                (admin_priority ? std::to_string(*admin_priority) : "unset");
      if (!admin_priority) {
        // Unset is 0, ours too: the tie goes by name, and the webhook
        // compares externallyManaged only between pfNames policies.
        // docs/kubernetes.md says to give other policies a priority of 1 or
        // more; here the later name wins, as the operator sorts.
        EXPECT_EQ(o.winner, "zz-all-mellanox") << label;
        continue;
      }
      EXPECT_TRUE(o.externally_managed) << label << ": won by " << o.winner;
      EXPECT_EQ(o.num_vfs, 12) << label;
      EXPECT_EQ(o.writes_num_of_vfs, -1)
          << label << ": the plugin would set NUM_OF_VFS=" << o.writes_num_of_vfs
          << " where provisioner keeps 12";
      EXPECT_FALSE(o.fails) << label;
    }
  }
  // A PF provisioner does not manage stays the admin's: exactly its numVfs.
  std::vector<json> all = ours;
  all.push_back(AdminPolicy("zz-all-mellanox", 10));
  Outcome other = Operator(all, Pf{"0000:e1:00.0", "15b3", "1021", "", 0});
  EXPECT_EQ(other.winner, "zz-all-mellanox");
  EXPECT_EQ(other.writes_num_of_vfs, 4);
}

// Before the host is provisioned (or before the reboot that makes the raised
// NUM_OF_VFS current), the operator fails the sync of an externally managed
// policy: the manifests' header says to provision first.
TEST(OperatorScenarioTest, ExternallyManagedPolicyBeforeProvisioningFailsTheSync) {
  std::vector<json> ours = Policies("roce-sriov");
  ASSERT_EQ(ours.size(), 1u);
  Outcome before = Operator(ours, Pf{"0000:af:00.0", "15b3", "1017", "ens6f0np0", 8});
  EXPECT_TRUE(before.fails);
  EXPECT_EQ(before.writes_num_of_vfs, -1);  // it never writes the firmware of such a PF
  Outcome after = Operator(ours, Pf{"0000:af:00.0", "15b3", "1017", "ens6f0np0", 12});
  EXPECT_FALSE(after.fails);
}

}  // namespace
}  // namespace provisioner::manifests
