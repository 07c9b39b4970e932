// The rails persisted with the node's own network stack (issue 39 item 4),
// without a host: which files the plan writes for each stack, what they say
// read back the way networkd and NetworkManager read them (sections of
// key=value lines), the conflicts, spec.network.owner: provisioner, and our
// files removed when no longer wanted. netplan's own reading of our YAML:
// test/integration:railnet_persist_cli_test (netplan generate).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "engine/host/host_fs.h"
#include "engine/module/managed_file.h"
#include "gtest/gtest.h"
#include "modules/railnet/network_stack.h"
#include "modules/railnet/persist_planner.h"
#include "modules/railnet/persist_render.h"
#include "modules/railnet/railnet_planner.h"
#include "modules/railnet/testing/two_rails.h"

namespace provisioner {
namespace {

using railnet_testing::TwoPfs;
using railnet_testing::TwoRails;

struct Planned {
  std::map<std::string, Change> files;  // by path
  std::vector<Diagnostic> diagnostics;
};

Planned Persist(const DesiredState& d, const HostFacts& f) {
  PlanSink sink;
  PlanRailPersistence(d, WantedRails(d, f, nullptr), f.railnet, sink);
  Planned out;
  for (const Change& c : sink.changes()) out.files[c.detail["path"].get<std::string>()] = c;
  out.diagnostics = sink.diagnostics();
  return out;
}

// An INI file as systemd and GKeyFile read it: sections in order (repeated
// ones kept apart), key=value lines, '#' comments.
using Section = std::pair<std::string, std::multimap<std::string, std::string>>;
std::vector<Section> ParseIni(const std::string& text) {
  std::vector<Section> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[' && line.back() == ']') {
      out.push_back({line.substr(1, line.size() - 2), {}});
      continue;
    }
    const size_t eq = line.find('=');
    EXPECT_NE(eq, std::string::npos) << "not key=value: " << line;
    EXPECT_FALSE(out.empty()) << "key outside a section: " << line;
    if (eq == std::string::npos || out.empty()) continue;
    out.back().second.emplace(line.substr(0, eq), line.substr(eq + 1));
  }
  return out;
}

std::vector<std::map<std::string, std::string>> SectionsNamed(const std::vector<Section>& ini,
                                                              const std::string& name) {
  std::vector<std::map<std::string, std::string>> out;
  for (const auto& [n, keys] : ini) {
    if (n == name) out.emplace_back(keys.begin(), keys.end());
  }
  return out;
}

TEST(RailPersistTest, NetworkdFilePerRailReadsBackAsTheLiveState) {
  const Planned p = Persist(TwoRails(), TwoPfs({"systemd-networkd"}));
  EXPECT_TRUE(p.diagnostics.empty());
  ASSERT_EQ(p.files.size(), 2u);
  const Change& c = p.files.at("/etc/systemd/network/10-provisioner-eth0.network");
  EXPECT_EQ(c.id, "railnet/10-provisioner-eth0.network/file");
  EXPECT_EQ(c.resource, "file:/etc/systemd/network/10-provisioner-eth0.network");
  EXPECT_EQ(c.detail["mode"], 0644);
  EXPECT_TRUE(c.before.is_null());
  const std::string text = c.after.get<std::string>();
  EXPECT_TRUE(WrittenByProvisioner(text)) << text;
  const auto ini = ParseIni(text);
  EXPECT_EQ(SectionsNamed(ini, "Match"),
            (std::vector<std::map<std::string, std::string>>{{{"Name", "eth0"}}}));
  EXPECT_EQ(SectionsNamed(ini, "Address"),
            (std::vector<std::map<std::string, std::string>>{{{"Address", "172.16.1.7/24"}}}));
  EXPECT_EQ(SectionsNamed(ini, "Route"),
            (std::vector<std::map<std::string, std::string>>{
                {{"Destination", "172.16.1.0/24"},
                 {"PreferredSource", "172.16.1.7"},
                 {"Scope", "link"},
                 {"Table", "101"}},
                {{"Destination", "0.0.0.0/0"}, {"Gateway", "172.16.1.254"}, {"Table", "101"}},
                {{"Destination", "172.16.0.0/16"}, {"Gateway", "172.16.1.254"}, {"Table", "101"}},
            }));
  EXPECT_EQ(SectionsNamed(ini, "RoutingPolicyRule"),
            (std::vector<std::map<std::string, std::string>>{
                {{"From", "172.16.1.7"}, {"Table", "101"}, {"Priority", "1000"}}}));
  const auto rail2 = ParseIni(
      p.files.at("/etc/systemd/network/10-provisioner-eth1.network").after.get<std::string>());
  EXPECT_EQ(SectionsNamed(rail2, "Route").size(), 1u);  // no gateway: the subnet route only
  EXPECT_EQ(SectionsNamed(rail2, "RoutingPolicyRule").front().at("Table"), "102");
}

TEST(RailPersistTest, NetworkManagerKeyfilePerRailMode0600ReadsBack) {
  const Planned p = Persist(TwoRails(), TwoPfs({"NetworkManager"}));
  EXPECT_TRUE(p.diagnostics.empty());
  ASSERT_EQ(p.files.size(), 2u);
  const Change& c =
      p.files.at("/etc/NetworkManager/system-connections/provisioner-eth0.nmconnection");
  EXPECT_EQ(c.detail["mode"], 0600);
  const auto ini = ParseIni(c.after.get<std::string>());
  const auto con = SectionsNamed(ini, "connection");
  ASSERT_EQ(con.size(), 1u);
  EXPECT_EQ(con[0].at("id"), "provisioner-eth0");
  EXPECT_EQ(con[0].at("type"), "ethernet");
  EXPECT_EQ(con[0].at("interface-name"), "eth0");
  EXPECT_EQ(con[0].at("uuid"), StableUuid("provisioner-eth0"));
  EXPECT_EQ(con[0].at("uuid").size(), 36u);
  EXPECT_NE(StableUuid("provisioner-eth0"), StableUuid("provisioner-eth1"));
  EXPECT_EQ(SectionsNamed(ini, "ipv4"),
            (std::vector<std::map<std::string, std::string>>{{
                {"method", "manual"},
                {"address1", "172.16.1.7/24"},
                {"route1", "172.16.1.0/24"},
                {"route1_options", "src=172.16.1.7,table=101"},
                {"route2", "0.0.0.0/0,172.16.1.254"},
                {"route2_options", "table=101"},
                {"route3", "172.16.0.0/16,172.16.1.254"},
                {"route3_options", "table=101"},
                {"routing-rule1", "priority 1000 from 172.16.1.7/32 table 101"},
            }}));
  EXPECT_EQ(SectionsNamed(ini, "ipv6").front().at("method"), "ignore");
}

TEST(RailPersistTest, NetplanOneFileMode0600AndASecondPlanHasNothingToDo) {
  HostFacts f = TwoPfs({"netplan"});
  const Planned p = Persist(TwoRails(), f);
  ASSERT_EQ(p.files.size(), 1u);
  const Change& c = p.files.at(kNetplanRailsFile);
  EXPECT_EQ(c.detail["mode"], 0600);
  const std::string text = c.after.get<std::string>();
  for (const char* want :
       {"    eth0:\n", "        - \"172.16.1.7/24\"\n", "        - to: default\n",
        "          via: 172.16.1.254\n", "          table: 101\n",
        "      routing-policy:\n        - from: 172.16.2.7\n"
        "          table: 102\n          priority: 1000\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  f.railnet.persist_files[kNetplanRailsFile] = text;
  EXPECT_TRUE(Persist(TwoRails(), f).files.empty());
}

TEST(RailPersistTest, IfupdownStanzasWithPostUpRulesAndNoneWritesNothing) {
  HostFacts f = TwoPfs({"ifupdown"});
  EXPECT_EQ(Persist(TwoRails(), f).diagnostics.size(), 1u);  // interfaces.d not sourced
  f.railnet.ifupdown_sources_dir = true;
  const Planned p = Persist(TwoRails(), f);
  EXPECT_TRUE(p.diagnostics.empty());
  const std::string text = p.files.at(kIfupdownRailsFile).after.get<std::string>();
  for (const char* want : {"auto eth0\niface eth0 inet static\n    address 172.16.1.7/24\n",
                           "    post-up ip route replace default via 172.16.1.254 dev eth0 table "
                           "101\n",
                           "    post-up ip rule add pref 1000 from 172.16.1.7 lookup 101\n",
                           "    pre-down ip rule del pref 1000 from 172.16.1.7 lookup 101\n"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
  EXPECT_TRUE(Persist(TwoRails(), TwoPfs({})).files.empty());
}

TEST(RailPersistTest, AFileThatSaysTheSameIsNoErrorAndWeWriteNoneForThatRail) {
  HostFacts f = TwoPfs({"NetworkManager"});
  f.railnet.foreign_configs["/etc/NetworkManager/system-connections/rail1.nmconnection"] =
      "[connection]\ninterface-name=eth0\n[ipv4]\nmethod=manual\naddress1=172.16.1.7/24\n";
  const Planned p = Persist(TwoRails(), f);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].severity, Severity::kWarning);
  EXPECT_EQ(p.files.size(), 1u);
  EXPECT_TRUE(
      p.files.count("/etc/NetworkManager/system-connections/provisioner-eth1.nmconnection"));
}

TEST(RailPersistTest, OwnerProvisionerMarksTheRailsUnmanagedInsteadOfAnError) {
  HostFacts f = TwoPfs({"systemd-networkd", "NetworkManager"});
  f.railnet.foreign_configs["/etc/systemd/network/50-dhcp.network"] = "[Match]\nName=eth0\n";
  DesiredState d = TwoRails();
  EXPECT_FALSE(Persist(d, f).diagnostics.empty());
  d.network = NetworkSpec{"provisioner"};
  const Planned p = Persist(d, f);
  EXPECT_TRUE(p.diagnostics.empty());
  ASSERT_EQ(p.files.size(), 2u);
  const auto nm = ParseIni(p.files.at(kNmUnmanagedFile).after.get<std::string>());
  EXPECT_EQ(SectionsNamed(nm, "keyfile"),
            (std::vector<std::map<std::string, std::string>>{
                {{"unmanaged-devices+", "interface-name:eth0;interface-name:eth1"}}}));
  const auto nd = ParseIni(p.files.at(kNetworkdUnmanagedFile).after.get<std::string>());
  EXPECT_EQ(SectionsNamed(nd, "Match").front().at("Name"), "eth0 eth1");
  EXPECT_EQ(SectionsNamed(nd, "Link").front().at("Unmanaged"), "yes");
  EXPECT_EQ(p.files.at(kNmUnmanagedFile).field_path, "spec.network.owner");
}

TEST(RailPersistTest, OwnerProvisionerCannotOverrideAnIfupdownStanza) {
  HostFacts f = TwoPfs({"ifupdown"});
  f.railnet.foreign_configs["/etc/network/interfaces"] = "auto eth1\niface eth1 inet dhcp\n";
  DesiredState d = TwoRails();
  d.network = NetworkSpec{"provisioner"};
  const Planned p = Persist(d, f);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].path, "spec.nics[1].addresses");
  EXPECT_NE(
      p.diagnostics[0].message.find("fix: remove the stanza of eth1 from /etc/network/interfaces"),
      std::string::npos)
      << p.diagnostics[0].message;
  EXPECT_TRUE(p.files.empty());
}

TEST(RailPersistTest, OurFilesNoLongerWantedAreRemoved) {
  HostFacts f = TwoPfs({"systemd-networkd"});
  const std::string old = "/etc/systemd/network/10-provisioner-eth9.network";
  f.railnet.persist_files[old] = "# written by provisioner\n[Match]\nName=eth9\n";
  const Planned p = Persist(TwoRails(), f);
  ASSERT_EQ(p.files.size(), 3u);
  EXPECT_TRUE(p.files.at(old).after.is_null());
  EXPECT_EQ(p.files.at(old).before, f.railnet.persist_files[old]);
}

TEST(RailPersistTest, PersistPathsAreOursOnly) {
  EXPECT_TRUE(IsPersistPath(kNetplanRailsFile));
  EXPECT_TRUE(IsPersistPath(kNmUnmanagedFile));
  EXPECT_TRUE(IsPersistPath("/etc/systemd/network/10-provisioner-rail1.network"));
  EXPECT_FALSE(IsPersistPath("/etc/systemd/network/50-dhcp.network"));
  EXPECT_FALSE(IsPersistPath("/etc/systemd/network/x/provisioner.network"));
  EXPECT_FALSE(IsPersistPath("/etc/passwd-provisioner"));
  EXPECT_EQ(StackOfPath("/etc/network/interfaces"), "ifupdown");
}

// Discovery: our files go to persist_files (never a conflict), another
// manager's file that names a rail to foreign_configs.
TEST(RailPersistTest, DetectionSeparatesOurFilesFromAnotherManagers) {
  const std::string root = std::string(getenv("TEST_TMPDIR")) + "/detect";
  std::filesystem::create_directories(root + "/etc/systemd/network");
  std::filesystem::create_directories(root + "/etc/NetworkManager/conf.d");
  std::ofstream(root + "/etc/systemd/network/10-provisioner-eth0.network")
      << "# written by provisioner (module railnet): x\n[Match]\nName=eth0\n";
  std::ofstream(root + "/etc/systemd/network/50-dhcp.network") << "[Match]\nName=eth0 eth1\n";
  std::ofstream(root + "/etc/systemd/network/60-mgmt.network") << "[Match]\nName=eno1\n";
  std::ofstream(root + kNmUnmanagedFile) << RenderNmUnmanaged({"eth0"});
  std::unique_ptr<HostFs> fs = NewLocalHostFs(root);
  RailnetFacts r;
  DetectNetworkStacks(*fs, {"eth0", "eth1"}, r);
  EXPECT_EQ(r.network_stacks, std::vector<std::string>{"systemd-networkd"});
  EXPECT_EQ(r.persist_files.size(), 2u);
  EXPECT_TRUE(r.persist_files.count("/etc/systemd/network/10-provisioner-eth0.network"));
  EXPECT_TRUE(r.persist_files.count(kNmUnmanagedFile));
  ASSERT_EQ(r.foreign_configs.size(), 1u);
  EXPECT_TRUE(r.foreign_configs.count("/etc/systemd/network/50-dhcp.network"));
  EXPECT_FALSE(r.ifupdown_sources_dir);
  std::filesystem::create_directories(root + "/etc/network");
  std::ofstream(root + "/etc/network/interfaces")
      << "auto lo\niface lo inet loopback\n  source /etc/network/interfaces.d/*\n";
  RailnetFacts with_ifupdown;
  DetectNetworkStacks(*fs, {"eth0"}, with_ifupdown);
  EXPECT_TRUE(with_ifupdown.ifupdown_sources_dir);
  EXPECT_EQ(r.configured_by.at("eth0"), "systemd-networkd (/etc/systemd/network/50-dhcp.network)");
}

}  // namespace
}  // namespace provisioner
