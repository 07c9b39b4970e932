// End-to-end (issue 39): the railnet module with the real binary on the
// 8-rail hgx-h100 tree. A rails host.yaml with addresses plans, per rail, the
// address, the table (routes), the rule and the sysctls; apply makes them
// under the tree (the run/provisioner captures the live backends leave for
// snapshot, /proc/sys/net/ipv4/conf/<netdev>/ as the live root has it); a
// second plan has nothing to do; discover shows them; doctor fails a rail
// whose rule is gone and names the fix. The rtnetlink side:
// modules/railnet:railnet_netns_test.
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/host_yaml.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

// The conf/ directory of each Ethernet netdev, as the live root has it.
void AddConfFiles(const std::string& root) {
  std::vector<std::string> names = {"default"};  // what a new netdev's conf copies
  for (const auto& e : std::filesystem::directory_iterator(root + "/sys/class/net")) {
    names.push_back(e.path().filename());
  }
  for (const std::string& n : names) {
    if (n == "lo") continue;
    const std::string dir = root + "/proc/sys/net/ipv4/conf/" + n;
    std::filesystem::create_directories(dir);
    for (const char* k : {"arp_ignore", "arp_announce", "rp_filter", "accept_local"}) {
      std::ofstream(dir + "/" + k) << (std::string(k) == "rp_filter" ? "1\n" : "0\n");
    }
  }
}

std::vector<std::string> Ids(const json& changes) {
  std::vector<std::string> ids;
  for (const json& c : changes) ids.push_back(c["id"]);
  return ids;
}

TEST(RailnetCliTest, EightRailsPlanApplyConvergeDiscoverDoctor) {
  const std::string root = ExtractHost("hgx-h100");
  AddConfFiles(root);
  const std::string yaml = WriteTempFile("rails.yaml", RailsYaml());
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  const json plan = json::parse(p.out);
  const std::vector<std::string> ids = Ids(plan["changes"]);
  int addresses = 0, sysctls = 0, routes = 0, rules = 0;
  for (const std::string& id : ids) {
    if (id.find("/addresses") != std::string::npos) ++addresses;
    if (id.find("/sysctl") != std::string::npos && id.find("sysctl.d") == std::string::npos) {
      ++sysctls;
    }
    if (id.find("/routes") != std::string::npos) ++routes;
    if (id.find("/rules") != std::string::npos) ++rules;
  }
  EXPECT_EQ(addresses, 8);
  EXPECT_EQ(sysctls, 8);
  EXPECT_EQ(routes, 8);
  EXPECT_EQ(rules, 8);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "railnet/rt_tables/file"), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), "railnet/sysctl.d/file"), ids.end());

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  const std::string addr = ReadFile(root + "/run/provisioner/rail-addresses");
  EXPECT_NE(addr.find(" 172.16.1.7/24\n"), std::string::npos) << addr;
  EXPECT_NE(addr.find(" 172.16.8.7/24\n"), std::string::npos) << addr;
  const std::string rule_text = ReadFile(root + "/run/provisioner/rules");
  EXPECT_NE(rule_text.find("pref 1000 from 172.16.1.7 lookup 101\n"), std::string::npos);
  EXPECT_NE(rule_text.find("pref 1000 from 172.16.8.7 lookup 108\n"), std::string::npos);
  const std::string route_text = ReadFile(root + "/run/provisioner/routes");
  EXPECT_NE(route_text.find("table 101 172.16.0.0/16 via 172.16.1.254 dev "), std::string::npos)
      << route_text;
  EXPECT_NE(ReadFile(root + "/etc/iproute2/rt_tables.d/provisioner-rails.conf").find("108\tgpu8-nic\n"),
            std::string::npos);
  const std::string conf = ReadFile(root + "/etc/sysctl.d/90-provisioner-rails.conf");
  EXPECT_NE(conf.find(".arp_ignore = 1\n"), std::string::npos) << conf;

  RunResult again = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;

  // A netplan file that names rail 1's netdev: discover says who configures it.
  std::filesystem::create_directories(root + "/etc/netplan");
  std::ofstream(root + "/etc/netplan/50-cloud-init.yaml")
      << "network:\n  ethernets:\n    enp26s0np0:\n      dhcp4: true\n";
  RunResult d = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  const json facts = json::parse(d.out)["railnet"];
  EXPECT_EQ(facts["addresses"].size(), 8u) << facts.dump(2);
  EXPECT_EQ(facts["tables"].size(), 8u);
  EXPECT_EQ(facts["rules"].size(), 8u);
  EXPECT_EQ(facts["tables"]["101"].size(), 3u);
  EXPECT_EQ(facts["networkStacks"], json::array({"netplan"}));
  EXPECT_EQ(facts["configuredBy"],
            json({{"enp26s0np0", "netplan (/etc/netplan/50-cloud-init.yaml)"}}));

  RunResult ok = Provisioner({"doctor", yaml, "--root", root, "-o", "json"});
  const json checks = json::parse(ok.out);
  for (const json& c : checks["checks"]) {
    if (c["module"] != "railnet" || c["id"] == "railnet.gid") continue;
    EXPECT_EQ(c["verdict"], "ok") << c.dump();
  }

  // Rail 3's rule gone: doctor fails it and says which to fix.
  std::string without;
  for (size_t at = 0; at < rule_text.size();) {
    const size_t end = rule_text.find('\n', at) + 1;
    const std::string line = rule_text.substr(at, end - at);
    if (line.find("lookup 103") == std::string::npos) without += line;
    at = end;
  }
  std::ofstream(root + "/run/provisioner/rules") << without;
  RunResult bad = Provisioner({"doctor", yaml, "--root", root, "-o", "json"});
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  const json bad_doc = json::parse(bad.out);
  std::vector<std::string> failed;
  for (const json& c : bad_doc["checks"]) {
    // (railnet.gid: the tree's GID tables are static captures, without the new addresses.)
    if (c["module"] != "railnet" || c["verdict"] != "fail" || c["id"] == "railnet.gid") continue;
    failed.push_back(c["id"].get<std::string>() + ": " + c["fix"].get<std::string>());
  }
  EXPECT_EQ(failed, (std::vector<std::string>{
                        "railnet.rule: fix the rule: `ip rule add pref 1000 from 172.16.3.7 "
                        "lookup 103`, or run `provisioner apply` with this host.yaml"}))
      << bad.out;
}

// Issue 39 item 1: rail n's VFs 0-1 on the host network. Their netdevs do
// not exist when the plan is made: the kernel simulator makes them.
constexpr const char* kVfGroupLines = R"(      numVfs: 2
      vfGroups:
        - range: "0-1"
          deviceType: netdevice
          addresses: ["172.16.{n}.{host}1/24", "172.16.{n}.{host}2/24"]
)";

size_t IndexOf(const std::vector<std::string>& ids, const std::string& id) {
  return static_cast<size_t>(std::find(ids.begin(), ids.end(), id) - ids.begin());
}

TEST(RailnetCliTest, HostNetworkVfGroupGetsAddressesTablesRulesSysctls) {
  const std::string root = ExtractHost("hgx-h100");
  AddConfFiles(root);
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/20);
  ASSERT_TRUE(sim.ready());
  const std::string yaml = WriteTempFile("rails-vfs.yaml", RailsYaml(kVfGroupLines));
  RunResult p = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.out << p.err;
  const json plan = json::parse(p.out);
  const std::vector<std::string> ids = Ids(plan["changes"]);
  std::string pf;  // rail 1's PF, from its VF 0's change
  int vf_addresses = 0;
  for (const json& c : plan["changes"]) {
    const std::string id = c["id"];
    if (id.find("#vf") == std::string::npos || c["attribute"] != "addresses") continue;
    ++vf_addresses;
    if (c["after"] == json::array({"172.16.1.71/24"})) pf = id.substr(8, id.find('#') - 8);
  }
  EXPECT_EQ(vf_addresses, 16);
  ASSERT_FALSE(pf.empty()) << p.out;
  // After the VFs exist and their netdevs are up.
  const std::string vf_change = "railnet/" + pf + "#vf0/addresses";
  EXPECT_LT(IndexOf(ids, "sriov/" + pf + "/numVfs"), IndexOf(ids, "link/" + pf + "/vfsUp"));
  EXPECT_LT(IndexOf(ids, "link/" + pf + "/vfsUp"), IndexOf(ids, vf_change));
  EXPECT_LT(IndexOf(ids, vf_change), ids.size());
  EXPECT_LT(IndexOf(ids, "railnet/table101000/rules"), ids.size());

  RunResult a = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_EQ(sim.Refused(), "");
  const std::string net = root + "/sys/bus/pci/devices/" + pf + "/virtfn0/net";
  ASSERT_TRUE(std::filesystem::exists(net));
  const std::string vf0 = std::filesystem::directory_iterator(net)->path().filename();
  EXPECT_NE(ReadFile(root + "/run/provisioner/rail-addresses").find(vf0 + " 172.16.1.71/24\n"),
            std::string::npos);
  const std::string routes = ReadFile(root + "/run/provisioner/routes");
  EXPECT_NE(routes.find("table 101000 172.16.1.0/24 dev " + vf0 + " scope link src 172.16.1.71\n"),
            std::string::npos)
      << routes;
  EXPECT_NE(routes.find("table 101000 172.16.0.0/16 via 172.16.1.254 dev " + vf0 + "\n"),
            std::string::npos);
  EXPECT_NE(
      ReadFile(root + "/run/provisioner/rules").find("pref 1000 from 172.16.1.71 lookup 101000\n"),
      std::string::npos);
  const std::string tables = ReadFile(root + "/etc/iproute2/rt_tables.d/provisioner-rails.conf");
  EXPECT_NE(tables.find("101000\tgpu1-nic-vf0\n101001\tgpu1-nic-vf1\n"), std::string::npos)
      << tables;
  const std::string conf = ReadFile(root + "/etc/sysctl.d/90-provisioner-rails.conf");
  EXPECT_NE(conf.find("net.ipv4.conf." + vf0 + ".arp_ignore = 1\n"), std::string::npos) << conf;
  EXPECT_EQ(conf.find("#vf"), std::string::npos) << conf;
  EXPECT_EQ(ReadFile(root + "/proc/sys/net/ipv4/conf/" + vf0 + "/arp_ignore"), "1\n");

  // Converged: the VFs are named by their netdevs now, and have all.
  RunResult again = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  // discover shows the VF netdevs' addresses; doctor checks them.
  RunResult d = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(json::parse(d.out)["railnet"]["addresses"][vf0], json::array({"172.16.1.71/24"}))
      << d.out;
  RunResult doc = Provisioner({"doctor", yaml, "--root", root, "-o", "json"});
  int vf_checks = 0;
  const json checks = json::parse(doc.out);
  for (const json& c : checks["checks"]) {
    if (c["module"] != "railnet" || c["id"] == "railnet.gid") continue;
    EXPECT_EQ(c["verdict"], "ok") << c.dump();
    if (c.dump().find(vf0) != std::string::npos) ++vf_checks;
  }
  EXPECT_GT(vf_checks, 0) << doc.out;
  // manifests: no policy or resource for the host-network group.
  RunResult m = Provisioner({"manifests", yaml, "--root", root});
  EXPECT_EQ(m.out.find("gpu1-nic-vf0-1"), std::string::npos) << m.out;

  // Issue 39 item 2: rail 8 and the VF addresses dropped, their lines go;
  // no rail left, the files go.
  const std::string seven = WriteTempFile("rails7.yaml", [] {
    std::string y = RailsYaml();
    y.replace(y.find("count: 8"), 8, "count: 7");
    return y;
  }());
  RunResult a7 = Provisioner({"apply", seven, "--root", root});
  ASSERT_EQ(a7.exit_code, 0) << a7.out << a7.err;
  const std::string tables7 = ReadFile(root + "/etc/iproute2/rt_tables.d/provisioner-rails.conf");
  EXPECT_EQ(tables7.find("108\t"), std::string::npos) << tables7;
  EXPECT_EQ(tables7.find("101000\t"), std::string::npos) << tables7;
  EXPECT_NE(tables7.find("107\tgpu7-nic\n"), std::string::npos) << tables7;
  EXPECT_EQ(ReadFile(root + "/etc/sysctl.d/90-provisioner-rails.conf").find(vf0),
            std::string::npos);
  const std::string none = WriteTempFile("norails.yaml", R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: gpu-worker7
spec:
  nics:
    - name: nics
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      linkType: eth
)");
  RunResult gone = Provisioner({"plan", none, "--root", root, "-o", "json"});
  ASSERT_EQ(gone.exit_code, 0) << gone.err;
  EXPECT_EQ(Ids(json::parse(gone.out)["changes"]),
            (std::vector<std::string>{"railnet/rt_tables/file", "railnet/sysctl.d/file"}));
  RunResult a0 = Provisioner({"apply", none, "--root", root});
  ASSERT_EQ(a0.exit_code, 0) << a0.out << a0.err;
  EXPECT_FALSE(std::filesystem::exists(root + "/etc/iproute2/rt_tables.d/provisioner-rails.conf"));
  EXPECT_FALSE(std::filesystem::exists(root + "/etc/sysctl.d/90-provisioner-rails.conf"));
  RunResult clean = Provisioner({"plan", none, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(clean.exit_code, 0) << clean.out;
}

}  // namespace
}  // namespace provisioner::testing
