// The railnet planner and the route/rule text, without a host.
#include "modules/railnet/railnet_planner.h"

#include "engine/module/managed_file.h"
#include "gtest/gtest.h"
#include "modules/railnet/network_stack.h"
#include "modules/railnet/policy_routing.h"
#include "modules/railnet/railnet_vf.h"
#include "modules/railnet/testing/two_rails.h"

namespace provisioner {
namespace {

using railnet_testing::TwoPfs;

// The shared two rails, rail2 with rp_filter 0 (over the rails' default 2).
DesiredState TwoRails() {
  DesiredState d = railnet_testing::TwoRails();
  d.nics[1].sysctl["rp_filter"] = 0;
  return d;
}

std::vector<std::string> Ids(const PlanSink& s) {
  std::vector<std::string> out;
  for (const Change& c : const_cast<PlanSink&>(s).changes()) out.push_back(c.id);
  return out;
}

TEST(RailnetPlannerTest, TwoRailsPlanAddressesSysctlsTablesRules) {
  PlanSink sink;
  PlanRailnet(TwoRails(), TwoPfs(), sink);
  EXPECT_TRUE(sink.diagnostics().empty());
  EXPECT_EQ(Ids(sink), (std::vector<std::string>{
                           "railnet/eth0/addresses", "railnet/eth1/addresses",
                           "railnet/eth0/sysctl", "railnet/eth1/sysctl", "railnet/rt_tables/file",
                           "railnet/table101/routes", "railnet/table101/rules",
                           "railnet/table102/routes", "railnet/table102/rules",
                           "railnet/sysctl.d/file"}));
  const auto& c = sink.changes();
  EXPECT_EQ(c[5].after, nlohmann::json({"172.16.1.0/24 dev eth0 scope link src 172.16.1.7",
                                        "default via 172.16.1.254 dev eth0",
                                        "172.16.0.0/16 via 172.16.1.254 dev eth0"}));
  EXPECT_EQ(c[6].after, nlohmann::json({"pref 1000 from 172.16.1.7 lookup 101"}));
  EXPECT_EQ(c[3].after, nlohmann::json({{"arp_announce", 2}, {"arp_ignore", 1}, {"rp_filter", 0}}));
  EXPECT_EQ(c[4].after, "# written by provisioner (module railnet): the rails' routing tables.\n"
                        "# iproute2 reads rt_tables.d/*.conf for `ip route show table <name>`.\n"
                        "101\trail1\n102\trail2\n");
  EXPECT_NE(c[9].after.get<std::string>().find("net.ipv4.conf.eth1.rp_filter = 0\n"),
            std::string::npos);
}

TEST(RailnetPlannerTest, OneNicGetsNoSysctlDefaults) {
  DesiredState d = TwoRails();
  d.nics.resize(1);
  PlanSink sink;
  PlanRailnet(d, TwoPfs(), sink);
  for (const Change& c : sink.changes()) EXPECT_NE(c.attribute, "sysctl") << c.id;
}

TEST(RailnetPlannerTest, RouteWithoutGatewayIsAnError) {
  DesiredState d = TwoRails();
  d.nics[1].routing = NicRoutingSpec{202, "r2", std::nullopt, {"10.0.0.0/8"}, 500};
  PlanSink sink;
  PlanRailnet(d, TwoPfs(), sink);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(sink.diagnostics()[0].path, "spec.nics[1].routing.routes[0]");
  EXPECT_EQ(sink.diagnostics()[0].message, "a route needs routing.gateway (the rail's next hop)");
}

// The facts after an apply of `plan`'s changes, as discovery would read them.
void Converge(PlanSink& plan, HostFacts& f) {
  for (const Change& c : plan.changes()) {
    if (c.attribute == "addresses") f.railnet.addresses[c.target] = c.after;
    if (c.attribute == "sysctl") {
      for (const auto& [k, v] : c.after.items()) f.railnet.sysctls[c.target][k] = v;
    }
    if (c.attribute == "routes") {
      std::vector<std::string> r = c.after;
      std::sort(r.begin(), r.end());
      f.railnet.routes[c.detail["table"].get<long long>()] = r;
    }
    if (c.attribute == "rules") {
      for (const auto& r : c.after) f.railnet.rules.push_back(r);
    }
    if (c.id == "railnet/rt_tables/file") f.railnet.rt_tables_file = c.after;
    if (c.id == "railnet/sysctl.d/file") f.railnet.sysctl_file = c.after;
  }
}

TEST(RailnetPlannerTest, ConvergedFactsPlanNothing) {
  HostFacts f = TwoPfs();
  PlanSink first;
  PlanRailnet(TwoRails(), f, first);
  Converge(first, f);
  PlanSink again;
  PlanRailnet(TwoRails(), f, again);
  EXPECT_TRUE(again.changes().empty()) << again.changes().front().id;
}

// Issue 39 item 4: a rail another stack's file configures is a plan error
// that names the file and the fix (it was a warning before).
TEST(RailnetPlannerTest, ARailAnotherStackConfiguresIsAnErrorNamingTheFile) {
  HostFacts f = TwoPfs();
  f.railnet.network_stacks = {"netplan"};
  f.railnet.configured_by["eth1"] = "netplan (/etc/netplan/50-cloud-init.yaml)";
  f.railnet.foreign_configs["/etc/netplan/50-cloud-init.yaml"] =
      "network:\n  ethernets:\n    eth1:\n      dhcp4: true\n";
  PlanSink sink;
  PlanRailnet(TwoRails(), f, sink);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(sink.diagnostics()[0].severity, Severity::kError);
  EXPECT_EQ(sink.diagnostics()[0].path, "spec.nics[1].addresses");
  EXPECT_EQ(sink.diagnostics()[0].message,
            "eth1 is configured by netplan in /etc/netplan/50-cloud-init.yaml, which would "
            "replace the rail's addresses when it reconfigures the interface; fix: set "
            "spec.network.owner: provisioner (the rail interfaces become unmanaged in netplan), "
            "or remove eth1 from /etc/netplan/50-cloud-init.yaml");
}

// Issue 39 item 1: a host-network VF group. Rail 1's PF with numVfs 2 and
// VFs 0-1 on the host network.
DesiredState RailWithHostVfs() {
  DesiredState d = TwoRails();
  d.nics[0].num_vfs = 2;
  VfGroupSpec g;
  g.range = "0-1";
  g.first = 0;
  g.last = 1;
  g.device_type = "netdevice";
  g.addresses = {"172.16.1.71/24", "172.16.1.72/24"};
  d.nics[0].vf_groups = {g};
  return d;
}

HostFacts WithSriov(int vfs) {
  HostFacts f = TwoPfs();
  PciFunction& pf = f.pci[0];
  pf.driver = "mlx5_core";
  pf.sriov = SriovInfo{};
  pf.sriov->total_vfs = 8;
  pf.sriov->num_vfs = vfs;
  for (int n = 0; n < vfs; ++n) {
    VfInfo vf;
    vf.vf_index = n;
    vf.driver = "mlx5_core";
    vf.netdevs = {"eth0v" + std::to_string(n)};
    pf.sriov->vfs.push_back(vf);
  }
  return f;
}

const Change* Find(const PlanSink& s, const std::string& id) {
  for (const Change& c : const_cast<PlanSink&>(s).changes()) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

// Before the VFs exist: each VF by its reference, resolved by apply.
TEST(RailnetVfTest, VfsNotThereYetAreNamedByReference) {
  PlanSink sink;
  PlanRailnet(RailWithHostVfs(), WithSriov(0), sink);
  EXPECT_TRUE(sink.diagnostics().empty()) << sink.diagnostics()[0].message;
  const Change* a = Find(sink, "railnet/0000:10:00.0#vf1/addresses");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->after, nlohmann::json({"172.16.1.72/24"}));
  EXPECT_EQ(a->field_path, "spec.nics[0].vfGroups[0].addresses");
  EXPECT_EQ(a->phase, kPhaseRails);  // after numVfs, binding and links
  const Change* s = Find(sink, "railnet/0000:10:00.0#vf0/sysctl");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->after, nlohmann::json({{"arp_announce", 2}, {"arp_ignore", 1}, {"rp_filter", 2}}));
  const Change* r = Find(sink, "railnet/table101000/routes");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->after,
            nlohmann::json({"172.16.1.0/24 dev 0000:10:00.0#vf0 scope link src 172.16.1.71",
                            "default via 172.16.1.254 dev 0000:10:00.0#vf0",
                            "172.16.0.0/16 via 172.16.1.254 dev 0000:10:00.0#vf0"}));
  const Change* rules = Find(sink, "railnet/table101001/rules");
  ASSERT_NE(rules, nullptr);
  EXPECT_EQ(rules->after, nlohmann::json({"pref 1000 from 172.16.1.72 lookup 101001"}));
  const Change* names = Find(sink, "railnet/rt_tables/file");
  ASSERT_NE(names, nullptr);
  EXPECT_NE(
      names->after.get<std::string>().find("101\trail1\n101000\trail1-vf0\n101001\trail1-vf1\n"),
      std::string::npos);
  const Change* conf = Find(sink, "railnet/sysctl.d/file");
  ASSERT_NE(conf, nullptr);
  EXPECT_NE(conf->after.get<std::string>().find("net.ipv4.conf.0000:10:00.0#vf1.arp_ignore = 1\n"),
            std::string::npos);
  // A barrier: after the VFs exist (a parallel apply).
  EXPECT_EQ(conf->resource, "");
  EXPECT_EQ(names->resource, "file:/etc/iproute2/rt_tables.d/provisioner-rails.conf");
}

// VFs that exist and stay: by their netdevs, as a PF's; converged, nothing.
TEST(RailnetVfTest, VfsThereAreNamedByNetdevAndConverge) {
  HostFacts f = WithSriov(2);
  PlanSink sink;
  PlanRailnet(RailWithHostVfs(), f, sink);
  ASSERT_NE(Find(sink, "railnet/eth0v1/addresses"), nullptr);
  EXPECT_EQ(Find(sink, "railnet/table101001/routes")->after[0],
            "172.16.1.0/24 dev eth0v1 scope link src 172.16.1.72");
  Converge(sink, f);
  PlanSink again;
  PlanRailnet(RailWithHostVfs(), f, again);
  EXPECT_TRUE(again.changes().empty()) << again.changes().front().id;
  // A VF count that changes recreates the VFs: references again.
  DesiredState more = RailWithHostVfs();
  more.nics[0].num_vfs = 4;
  PlanSink recreated;
  PlanRailnet(more, f, recreated);
  EXPECT_NE(Find(recreated, "railnet/0000:10:00.0#vf0/addresses"), nullptr);
}

TEST(RailnetVfTest, VfReferences) {
  EXPECT_EQ(VfRef("0000:1a:00.0", 3), "0000:1a:00.0#vf3");
  EXPECT_EQ(ParseVfRef("0000:1a:00.0#vf3"), std::make_pair(std::string("0000:1a:00.0"), 3));
  EXPECT_FALSE(ParseVfRef("eth0#vf3"));  // an interface name may have '#', never ':'
  EXPECT_FALSE(ParseVfRef("0000:1a:00.0#vf"));
  EXPECT_FALSE(ParseVfRef("enp26s0v0"));
}

// Issue 39 item 2: no rail left: our files go, someone else's stay.
TEST(RailnetPlannerTest, FilesNoRailWantsAreRemoved) {
  HostFacts f = TwoPfs();
  f.railnet.rt_tables_file = "# written by provisioner (module railnet)\n101\trail1\n";
  f.railnet.sysctl_file =
      "# written by provisioner (module railnet)\nnet.ipv4.conf.eth0.arp_ignore = 1\n";
  PlanSink sink;
  PlanRailnet(DesiredState{}, f, sink);
  EXPECT_EQ(Ids(sink),
            (std::vector<std::string>{"railnet/rt_tables/file", "railnet/sysctl.d/file"}));
  for (const Change& c : sink.changes()) {
    EXPECT_TRUE(c.after.is_null()) << c.id;
    EXPECT_EQ(c.detail[kManagedFileKey], c.detail["path"]) << c.detail.dump();
  }
  // Rails without tables (no addresses): the names file goes, the sysctls stay.
  DesiredState d = TwoRails();
  for (NicSpec& n : d.nics) {
    n.addresses.reset();
    n.routing.reset();
    n.sysctl["arp_ignore"] = 1;
  }
  PlanSink partial;
  PlanRailnet(d, f, partial);
  ASSERT_NE(Find(partial, "railnet/rt_tables/file"), nullptr);
  EXPECT_TRUE(Find(partial, "railnet/rt_tables/file")->after.is_null());
  ASSERT_NE(Find(partial, "railnet/sysctl.d/file"), nullptr);
  EXPECT_TRUE(Find(partial, "railnet/sysctl.d/file")->after.is_string());
  // Someone else's file at our path: left alone.
  f.railnet.rt_tables_file = "101\tmine\n";
  f.railnet.sysctl_file.reset();
  PlanSink foreign;
  PlanRailnet(DesiredState{}, f, foreign);
  EXPECT_TRUE(foreign.changes().empty());
}

TEST(NetworkStackTest, NamesWholeWordsOnly) {
  EXPECT_TRUE(NamesWord("    enp26s0np0:\n", "enp26s0np0"));
  EXPECT_TRUE(NamesWord("Name=enp26s0np0\n", "enp26s0np0"));
  EXPECT_TRUE(NamesWord("iface rail1 inet static", "rail1"));
  EXPECT_FALSE(NamesWord("iface rail10 inet static", "rail1"));
  EXPECT_FALSE(NamesWord("enp26s0np0.100:", "enp26s0np0"));
  EXPECT_FALSE(NamesWord("", "rail1"));
}

TEST(PolicyTextTest, RoundTripsAndLookup) {
  const std::string route = "172.16.1.0/24 dev eth0 scope link src 172.16.1.7";
  ASSERT_TRUE(ParseRoute(route));
  EXPECT_EQ(FormatRoute(*ParseRoute(route)), route);
  EXPECT_EQ(FormatRoute(*ParseRoute("0.0.0.0/0 via 1.2.3.4 dev x")), "default via 1.2.3.4 dev x");
  EXPECT_FALSE(ParseRoute("172.16.1.0/24 dev"));
  EXPECT_FALSE(ParseRule("pref 1 from 1.2.3.4 lookup"));
  std::map<long long, std::vector<PolicyRoute>> tables;
  tables[254] = {*ParseRoute("172.16.0.0/16 dev eth0 scope link src 172.16.1.7"),
                 *ParseRoute("172.16.0.0/16 dev eth1 scope link src 172.16.2.7")};
  tables[102] = {*ParseRoute("172.16.0.0/16 dev eth1 scope link src 172.16.2.7")};
  const std::vector<PolicyRule> rules = {*ParseRule("pref 1000 from 172.16.2.7 lookup 102")};
  EXPECT_EQ(ComputeLookup(rules, tables, "172.16.3.9", "172.16.2.7"), "eth1");
  EXPECT_EQ(ComputeLookup({}, tables, "172.16.3.9", "172.16.2.7"), "eth0");  // the wrong rail
  EXPECT_EQ(ComputeLookup(rules, tables, "10.0.0.1", "172.16.2.7"), "");
}

}  // namespace
}  // namespace provisioner
