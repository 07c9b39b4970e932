// End-to-end (issue 39 item 4): the rails persisted with the node's own
// network stack, with the real binary on the 8-rail hgx-h100 tree made
// NetworkManager-, systemd-networkd- or netplan-managed (a management NIC's
// file in etc/NetworkManager/system-connections/, etc/systemd/network/ or
// etc/netplan/). plan + apply of a rails host.yaml with addresses lands the
// persistence in that stack's format, a second plan has nothing to do, and
// an apply that fails rolls the files back (the tree as it was). netplan's
// own reading of our YAML: `netplan generate --root-dir` on the applied tree
// must yield networkd files that say what our networkd rendering of the same
// rails says (addresses, table routes, rules). A rail another file
// configures is a plan error naming that file; spec.network.owner:
// provisioner marks the rails unmanaged instead.
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/host_yaml.h"
#include "test/support/tree_diff.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

// The management NIC (not a rail) of the tree.
constexpr const char* kMgmt = "enp27s0f0np0";

// The conf/ directory of each Ethernet netdev, as the live root has it.
void AddConfFiles(const std::string& root) {
  for (const auto& e : std::filesystem::directory_iterator(root + "/sys/class/net")) {
    const std::string n = e.path().filename();
    if (n == "lo") continue;
    const std::string dir = root + "/proc/sys/net/ipv4/conf/" + n;
    std::filesystem::create_directories(dir);
    for (const char* k : {"arp_ignore", "arp_announce", "rp_filter", "accept_local"}) {
      std::ofstream(dir + "/" + k) << (std::string(k) == "rp_filter" ? "1\n" : "0\n");
    }
  }
}

void Write(const std::string& path, const std::string& text, mode_t mode = 0644) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
  ::chmod(path.c_str(), mode);
}

// hgx-h100 with `stack`'s file for the management NIC.
std::string StackTree(const std::string& stack) {
  const std::string root = ExtractHost("hgx-h100");
  AddConfFiles(root);
  // Where apply writes our other files: present before, so that a rolled
  // back tree is byte for byte the one before.
  std::filesystem::create_directories(root + "/etc/iproute2/rt_tables.d");
  std::filesystem::create_directories(root + "/etc/sysctl.d");
  std::filesystem::create_directories(root + "/run/provisioner");
  const std::string m = kMgmt;
  if (stack == "NetworkManager") {
    Write(root + "/etc/NetworkManager/system-connections/mgmt.nmconnection",
          "[connection]\nid=mgmt\ntype=ethernet\ninterface-name=" + m + "\n\n[ipv4]\nmethod=auto\n",
          0600);
  } else if (stack == "systemd-networkd") {
    Write(root + "/etc/systemd/network/50-mgmt.network",
          "[Match]\nName=" + m + "\n\n[Network]\nDHCP=yes\n");
  } else if (stack == "netplan") {
    Write(root + "/etc/netplan/50-cloud-init.yaml",
          "network:\n  version: 2\n  ethernets:\n    " + m + ":\n      dhcp4: true\n", 0600);
  }
  return root;
}

// The plan's stack files by host path (plan -o json has no detail: the
// path from the change id, railnet/<file name>/file, and its stack's folder).
std::map<std::string, json> FileChanges(const json& plan) {
  std::map<std::string, json> out;
  auto ends = [](const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const json& c : plan["changes"]) {
    const std::string id = c["id"];
    if (id.rfind("railnet/", 0) != 0 || !ends(id, "/file")) continue;
    const std::string name = id.substr(8, id.size() - 8 - 5);
    if (ends(name, ".nmconnection")) {
      out["/etc/NetworkManager/system-connections/" + name] = c;
    } else if (ends(name, ".network")) {
      out["/etc/systemd/network/" + name] = c;
    } else if (ends(name, ".yaml")) {
      out["/etc/netplan/" + name] = c;
    } else if (ends(name, "-unmanaged.conf")) {
      out["/etc/NetworkManager/conf.d/" + name] = c;
    }
  }
  return out;
}

int ModeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return st.st_mode & 07777;
}

// Plan and apply on a `stack` tree: the files planned (by host path), each
// written with its text and mode; a second plan has nothing to do.
std::map<std::string, json> PlanApplyConverge(const std::string& root, const std::string& yaml) {
  const json plan = PlanJson(yaml, root);
  std::map<std::string, json> files = FileChanges(plan);
  RunResult a = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a.exit_code, 0) << a.out << a.err;
  for (const auto& [path, c] : files) {
    EXPECT_EQ(ReadFile(root + path), c["after"].get<std::string>()) << path;
  }
  ExpectConverged(yaml, root);
  return files;
}

// An apply that fails (one of the files' paths is a directory) leaves the
// tree as it was: the files it wrote are removed again.
void ExpectRollbackRemovesFiles(const std::string& stack, const std::string& blocked) {
  const std::string root = StackTree(stack);
  const std::string yaml = WriteTempFile("rails.yaml", RailsYaml());
  std::filesystem::create_directories(root + blocked);
  const std::string before = root + ".before";
  std::filesystem::copy(
      root, before,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  // One change at a time, in plan order: the blocked file (the last rail's)
  // after the others were written.
  RunResult a = Provisioner({"apply", yaml, "--root", root, "--parallelism", "1", "-o", "json"});
  EXPECT_EQ(a.exit_code, 1) << a.out << a.err;
  int rolled_back = 0;
  for (const auto& [path, c] : FileChanges(ParseJson(a))) {
    if (c["status"] == "rolled-back") ++rolled_back;
  }
  EXPECT_EQ(rolled_back, 7) << a.out;  // written, then removed again
  TreeDiffOptions options;
  options.ignore = {"run/provisioner"};  // the journal and the live backends' captures
  EXPECT_EQ(DiffTreesText(before, root, options), "");
}

TEST(RailnetPersistCliTest, NetworkManagerTreeGetsAKeyfilePerRail) {
  const std::string root = StackTree("NetworkManager");
  const std::string yaml = WriteTempFile("rails.yaml", RailsYaml());
  const std::map<std::string, json> files = PlanApplyConverge(root, yaml);
  ASSERT_EQ(files.size(), 8u);
  const std::string rail1 =
      "/etc/NetworkManager/system-connections/provisioner-enp26s0np0.nmconnection";
  ASSERT_TRUE(files.count(rail1));
  EXPECT_EQ(files.at(rail1)["id"], "railnet/provisioner-enp26s0np0.nmconnection/file");
  EXPECT_EQ(ModeOf(root + rail1), 0600);
  const std::string text = ReadFile(root + rail1);
  for (const char* want : {"interface-name=enp26s0np0\n", "address1=172.16.1.7/24\n",
                           "route2=0.0.0.0/0,172.16.1.254\n", "route2_options=table=101\n",
                           "routing-rule1=priority 1000 from 172.16.1.7/32 table 101\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << text;
  }
  EXPECT_TRUE(Exists(root + "/etc/NetworkManager/system-connections/mgmt.nmconnection"));
}

TEST(RailnetPersistCliTest, NetworkdTreeGetsANetworkFilePerRail) {
  const std::string root = StackTree("systemd-networkd");
  const std::string yaml = WriteTempFile("rails.yaml", RailsYaml());
  const std::map<std::string, json> files = PlanApplyConverge(root, yaml);
  ASSERT_EQ(files.size(), 8u);
  const std::string text =
      ReadFile(root + "/etc/systemd/network/10-provisioner-enp26s0np0.network");
  for (const char* want : {"[Match]\nName=enp26s0np0\n", "[Address]\nAddress=172.16.1.7/24\n",
                           "[RoutingPolicyRule]\nFrom=172.16.1.7\nTable=101\nPriority=1000\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << text;
  }
}

TEST(RailnetPersistCliTest, RollbackRemovesTheFilesItWrote) {
  ExpectRollbackRemovesFiles(
      "NetworkManager",
      "/etc/NetworkManager/system-connections/provisioner-enp94s0np0.nmconnection");
  ExpectRollbackRemovesFiles("systemd-networkd",
                             "/etc/systemd/network/10-provisioner-enp94s0np0.network");
}

// A networkd file as networkd reads what matters here: the interface, its
// addresses (in [Network] or [Address]), its routes and rules, each as the
// sorted keys we and netplan write.
struct NetworkdView {
  std::string name;
  std::set<std::string> addresses, routes, rules;
};

NetworkdView ReadNetworkd(const std::string& text) {
  NetworkdView v;
  std::istringstream in(text);
  std::string line, section;
  std::map<std::string, std::string> keys;
  auto flush = [&] {
    std::string joined;
    for (const auto& [k, val] : keys) joined += k + "=" + val + " ";
    if (section == "Route") v.routes.insert(joined);
    if (section == "RoutingPolicyRule") v.rules.insert(joined);
    keys.clear();
  };
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      flush();
      section = line.substr(1, line.size() - 2);
      continue;
    }
    const std::string k = line.substr(0, line.find('=')), val = line.substr(line.find('=') + 1);
    if (section == "Match" && k == "Name") v.name = val;
    if (k == "Address" && (section == "Network" || section == "Address")) v.addresses.insert(val);
    if (section == "Route" || section == "RoutingPolicyRule") keys[k] = val;
  }
  flush();
  return v;
}

std::string RunCommand(const std::string& command, int* status) {
  std::string out;
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  *status = ::pclose(p);
  return out;
}

TEST(RailnetPersistCliTest, NetplanTreeGetsOneYamlThatNetplanGeneratesLikeOurNetworkd) {
  const std::string root = StackTree("netplan");
  const std::string yaml = WriteTempFile("rails.yaml", RailsYaml());
  const std::map<std::string, json> files = PlanApplyConverge(root, yaml);
  ASSERT_EQ(files.size(), 1u);
  ASSERT_TRUE(files.count("/etc/netplan/90-provisioner-rails.yaml"));
  EXPECT_EQ(ModeOf(root + "/etc/netplan/90-provisioner-rails.yaml"), 0600);

  // Our own networkd rendering of the same rails, from a networkd tree.
  const std::map<std::string, json> ours =
      FileChanges(PlanJson(yaml, StackTree("systemd-networkd")));
  ASSERT_EQ(ours.size(), 8u);

  const char* netplan = "/usr/sbin/netplan";
  if (!Exists(netplan)) {
    GTEST_SKIP() << "netplan is not installed (scripts/setup.sh installs netplan.io): "
                    "netplan generate not run";
  }
  int status = 0;
  const std::string out =
      RunCommand(std::string(netplan) + " generate --root-dir " + root, &status);
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(out.find("too open"), std::string::npos) << out;  // our file is 0600
  int compared = 0;
  for (const auto& [path, c] : ours) {
    const NetworkdView want = ReadNetworkd(c["after"].get<std::string>());
    const std::string generated =
        root + "/run/systemd/network/10-netplan-" + want.name + ".network";
    ASSERT_TRUE(Exists(generated)) << generated;
    const NetworkdView got = ReadNetworkd(ReadFile(generated));
    EXPECT_EQ(got.name, want.name);
    EXPECT_EQ(got.addresses, want.addresses) << want.name;
    EXPECT_EQ(got.routes, want.routes) << want.name;
    EXPECT_EQ(got.rules, want.rules) << want.name;
    EXPECT_EQ(want.routes.size(), 3u);
    ++compared;
  }
  EXPECT_EQ(compared, 8);
  // The management NIC stays netplan's (its own file, dhcp).
  EXPECT_TRUE(Exists(root + "/run/systemd/network/10-netplan-" + std::string(kMgmt) + ".network"));
}

TEST(RailnetPersistCliTest, ARailAnotherFileConfiguresIsAPlanErrorUnlessOwnerProvisioner) {
  const std::string root = StackTree("netplan");
  Write(root + "/etc/netplan/60-rail.yaml",
        "network:\n  version: 2\n  ethernets:\n    enp26s0np0:\n      dhcp4: true\n", 0600);
  const std::string yaml = WriteTempFile("rails.yaml", RailsYaml());
  RunResult p = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(p.exit_code, 1) << p.out << p.err;
  EXPECT_NE(p.err.find("enp26s0np0 is configured by netplan in /etc/netplan/60-rail.yaml"),
            std::string::npos)
      << p.err;
  EXPECT_NE(p.err.find("set spec.network.owner: provisioner"), std::string::npos) << p.err;

  const std::string owned =
      WriteTempFile("owned.yaml", RailsYaml() + "  network: { owner: provisioner }\n");
  const std::map<std::string, json> files = PlanApplyConverge(root, owned);
  ASSERT_EQ(files.size(), 1u) << json(files).dump(2);
  const std::string unmanaged =
      ReadFile(root + "/etc/systemd/network/05-provisioner-rails-unmanaged.network");
  EXPECT_NE(unmanaged.find("Name=enp156s0np0 enp188s0np0 enp204s0np0 enp220s0np0 enp26s0np0 "
                           "enp60s0np0 enp77s0np0 enp94s0np0\n"),
            std::string::npos)
      << unmanaged;
  EXPECT_NE(unmanaged.find("[Link]\nUnmanaged=yes\n"), std::string::npos);
  EXPECT_FALSE(Exists(root + "/etc/netplan/90-provisioner-rails.yaml"));
}

}  // namespace
}  // namespace provisioner::testing
