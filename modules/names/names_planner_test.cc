// The names planner from YAML and hand-made facts: the rules, the renames,
// their order and resources, and the refusals (a name in use, one nic on two
// PFs); and the loader's checks of nics[].names.
#include "modules/names/names_planner.h"

#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "gtest/gtest.h"
#include "test/support/fake_pci_module.h"

namespace provisioner {
namespace {

DesiredState Load(const std::string& nics, std::vector<Diagnostic>* diags = nullptr) {
  std::string yaml =
      "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n  name: w\nspec:\n" + nics;
  LoadResult r = LoadDesiredStateFromString(yaml, "host.yaml");
  if (diags != nullptr) {
    *diags = r.diagnostics;
  } else {
    for (const auto& d : r.diagnostics) ADD_FAILURE() << d.path << ": " << d.message;
  }
  return r.state.value_or(DesiredState());
}

PciFunction Pf(const std::string& bdf, const std::string& netdev, const std::string& rdma) {
  PciFunction f = testing::NetworkPf(bdf, netdev, "15b3", "1021");
  f.driver = "mlx5_core";
  f.rdma_devices = {rdma};
  return f;
}

HostFacts TwoPfs() {
  HostFacts facts;
  facts.pci = {Pf("0000:1a:00.0", "enp26s0np0", "mlx5_0"),
               Pf("0000:3c:00.0", "enp60s0np0", "mlx5_1")};
  facts.names.phys_port_names = {{"enp26s0np0", "p0"}, {"enp60s0np0", "p0"}};
  return facts;
}

constexpr char kTwoNics[] = R"(  nics:
    - name: a
      nicSelector: { rootDevices: ["0000:1a:00.0"] }
      names: { netdev: rail1, rdma: mlx5_rail1 }
    - name: b
      nicSelector: { rootDevices: ["0000:3c:00.0"] }
      names: { netdev: rail2 }
)";

TEST(NamesPlanner, RulesThenRenamesEachWithItsPf) {
  PlanSink sink;
  PlanNames(Load(kTwoNics), TwoPfs(), sink);
  EXPECT_TRUE(sink.diagnostics().empty());
  std::vector<std::string> ids;
  for (const Change& c : sink.changes()) ids.push_back(c.id);
  EXPECT_EQ(ids,
            (std::vector<std::string>{"names//etc/udev/rules.d/10-provisioner-names.rules/rules",
                                      "names/0000:1a:00.0/netdev", "names/0000:1a:00.0/rdma",
                                      "names/0000:3c:00.0/netdev"}));
  const Change& rules = sink.changes()[0];
  EXPECT_TRUE(rules.before.is_null());
  EXPECT_EQ(rules.after,
            nlohmann::json::array(
                {"SUBSYSTEM==\"net\", ACTION==\"add\", KERNELS==\"0000:1a:00.0\", "
                 "ATTR{phys_port_name}==\"p0\", TEST!=\"parent\", NAME=\"rail1\"",
                 "ACTION==\"add\", SUBSYSTEM==\"infiniband\", KERNELS==\"0000:1a:00.0\", "
                 "PROGRAM=\"rdma_rename %k NAME_FIXED mlx5_rail1\"",
                 "ACTION==\"add\", SUBSYSTEM==\"infiniband\", KERNELS==\"0000:1a:00.0\", "
                 "PROGRAM=\"/usr/sbin/rdma dev set %k name mlx5_rail1\"",
                 "SUBSYSTEM==\"net\", ACTION==\"add\", KERNELS==\"0000:3c:00.0\", "
                 "ATTR{phys_port_name}==\"p0\", TEST!=\"parent\", NAME=\"rail2\""}));
  EXPECT_EQ(rules.resource, "file:/etc/udev/rules.d/10-provisioner-names.rules");
  const Change& netdev = sink.changes()[1];
  EXPECT_EQ(netdev.before, "enp26s0np0");
  EXPECT_EQ(netdev.after, "rail1");
  EXPECT_TRUE(netdev.link_flap);
  EXPECT_EQ(netdev.phase, kPhaseNames);
  EXPECT_EQ(netdev.resource, "pf:0000:1a:00.0");
  EXPECT_EQ(netdev.depends_on, std::vector<std::string>{rules.resource});
  EXPECT_EQ(netdev.field_path, "spec.nics[0].names.netdev");
  EXPECT_FALSE(sink.changes()[2].link_flap);  // an RDMA rename leaves the link alone
}

TEST(NamesPlanner, ConvergedIsEmptyAndTheFileParsesBack) {
  HostFacts facts = TwoPfs();
  facts.pci[0].netdevs = {"rail1"};
  facts.pci[0].rdma_devices = {"mlx5_rail1"};
  facts.pci[1].netdevs = {"rail2"};
  facts.names.phys_port_names = {{"rail1", "p0"}, {"rail2", "p0"}};
  facts.names.rules = NameRulesFileText(RenderNameRules(
      {{"0000:3c:00.0", "rail2", "", "p0"}, {"0000:1a:00.0", "rail1", "mlx5_rail1", "p0"}}));
  PlanSink sink;
  PlanNames(Load(kTwoNics), facts, sink);
  EXPECT_TRUE(sink.diagnostics().empty());
  EXPECT_TRUE(sink.changes().empty());
}

TEST(NamesPlanner, NoNamesRemovesTheModulesFile) {
  HostFacts facts = TwoPfs();
  facts.names.rules = "# old, written by provisioner\nSUBSYSTEM==\"net\", NAME=\"x\"\n";
  PlanSink sink;
  const DesiredState none =
      Load("  nics:\n    - name: a\n      nicSelector: { rootDevices: [\"0000:1a:00.0\"] }\n");
  PlanNames(none, facts, sink);
  ASSERT_EQ(sink.changes().size(), 1u);
  EXPECT_EQ(sink.changes()[0].before, nlohmann::json::array({"SUBSYSTEM==\"net\", NAME=\"x\""}));
  EXPECT_TRUE(sink.changes()[0].after.is_null());
  // Issue 36 item 4: a file at our path without our header is not ours to
  // delete; planned over, it is taken over with a warning.
  facts.names.rules = "# old\nSUBSYSTEM==\"net\", NAME=\"x\"\n";
  PlanSink foreign;
  PlanNames(none, facts, foreign);
  EXPECT_TRUE(foreign.changes().empty());
  PlanSink takeover;
  PlanNames(Load(kTwoNics), facts, takeover);
  bool warned = false;
  for (const auto& d : takeover.diagnostics()) {
    warned = warned || d.message.find("taken over") != std::string::npos;
  }
  EXPECT_TRUE(warned);
}

TEST(NamesPlanner, RepresentorIsNotThePfsNetdevAndNoPortNameNoAttrMatch) {
  HostFacts facts = TwoPfs();
  // switchdev: the representors sit in the PF's net/ too.
  facts.pci[0].netdevs = {"eth5", "enp26s0np0"};
  facts.names.phys_port_names = {{"eth5", "pf0vf0"}, {"enp26s0np0", "p0"}};
  facts.names.phys_port_names.erase("enp60s0np0");  // EOPNOTSUPP: no devlink port
  PlanSink sink;
  PlanNames(Load(kTwoNics), facts, sink);
  ASSERT_EQ(sink.changes().size(), 4u);
  EXPECT_EQ(sink.changes()[1].before, "enp26s0np0");
  EXPECT_EQ(sink.changes()[0].after[3],
            "SUBSYSTEM==\"net\", ACTION==\"add\", KERNELS==\"0000:3c:00.0\", TEST!=\"parent\", "
            "NAME=\"rail2\"");
}

TEST(NamesPlanner, NameInUseAndTwoPfsAreErrors) {
  HostFacts facts = TwoPfs();
  facts.pci[1].netdevs = {"rail1"};
  PlanSink sink;
  PlanNames(Load(kTwoNics), facts, sink);
  ASSERT_FALSE(sink.diagnostics().empty());
  EXPECT_EQ(sink.diagnostics()[0].path, "spec.nics[0].names.netdev");
  EXPECT_NE(sink.diagnostics()[0].message.find("in use (0000:3c:00.0)"), std::string::npos)
      << sink.diagnostics()[0].message;

  PlanSink two;
  PlanNames(Load("  nics:\n    - name: a\n      nicSelector: { vendor: \"15b3\" }\n"
                 "      names: { netdev: rail1 }\n"),
            TwoPfs(), two);
  ASSERT_EQ(two.diagnostics().size(), 1u);
  EXPECT_NE(two.diagnostics()[0].message.find("selects 2 PFs"), std::string::npos);
}

TEST(NamesLoader, BadNamesAreRefusedWithTheirPath) {
  std::vector<Diagnostic> diags;
  Load(R"(  nics:
    - name: a
      nicSelector: { rootDevices: ["0000:1a:00.0"] }
      names: { netdev: "a:b", rdma: "x%d" }
    - name: b
      nicSelector: { pfNames: [ens1] }
      names: { netdev: "a$b" }
    - name: c
      nicSelector: { rootDevices: ["0000:3c:00.0"] }
      names: { netdev: rail1, rdma: dup }
    - name: d
      nicSelector: { rootDevices: ["0000:5e:00.0"] }
      names: { netdev: rail1, rdma: dup }
)",
       &diags);
  std::vector<std::string> paths;
  for (const auto& d : diags) paths.push_back(d.path);
  EXPECT_EQ(paths,
            (std::vector<std::string>{"spec.nics[0].names.netdev", "spec.nics[0].names.rdma",
                                      "spec.nics[1].names.netdev", "spec.nics[1].names.netdev",
                                      "spec.nics[3].names.netdev", "spec.nics[3].names.rdma"}));
  for (const auto& d : diags) EXPECT_EQ(d.severity, Severity::kError) << d.message;
}

// Issue 36.6: a value from the tree is data, never syntax. A phys_port_name
// that would close the quoted value and add a RUN key is refused at the
// field, and no rule carries it.
TEST(NamesPlanner, AHostileTreeValueNeverReachesTheRulesFile) {
  HostFacts facts = TwoPfs();
  facts.names.phys_port_names["enp26s0np0"] = "p0\", RUN+=\"/bin/sh -c reboot";
  PlanSink sink;
  PlanNames(Load(kTwoNics), facts, sink);
  bool refused = false;
  for (const Diagnostic& d : sink.diagnostics()) {
    if (d.severity == Severity::kError && d.path == "spec.nics[0].names.netdev" &&
        d.message.find("phys_port_name of 0000:1a:00.0") != std::string::npos &&
        d.message.find("cannot go into a udev rule") != std::string::npos) {
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
  for (const Change& c : sink.changes()) {
    EXPECT_EQ(c.after.dump().find("/bin/sh"), std::string::npos) << c.after.dump();
  }
}

}  // namespace
}  // namespace provisioner
