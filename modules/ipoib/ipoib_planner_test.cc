// The ipoib planner and doctor checks from hand-made facts (no host).
#include "modules/ipoib/ipoib_planner.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "modules/ipoib/ipoib_checks.h"
#include "test/support/check_results.h"
#include "test/support/fake_pci_module.h"

namespace provisioner {
namespace {

constexpr char kUdAddress[] = "00:00:10:87:fe:80:00:00:00:00:00:00:ec:0d:9a:03:00:8a:bc:de";
constexpr char kRcAddress[] = "80:00:10:87:fe:80:00:00:00:00:00:00:ec:0d:9a:03:00:8a:bc:de";

// An IB PF 0000:86:00.0 with IPoIB netdev ib0: datagram, mtu 2044, up, no addresses.
HostFacts IbHost() {
  HostFacts f;
  PciFunction pf =
      testing::NetworkPf("0000:86:00.0", "ib0", "15b3", "1017", testing::kInfinibandClass);
  pf.rdma_devices = {"mlx5_0"};
  f.pci = {pf};
  IpoibInterface x;
  x.name = "ib0";
  x.mode = "datagram";
  x.pkey = 0xffff;
  x.address = kUdAddress;
  x.mtu = 2044;
  x.admin_up = true;
  x.addresses = std::vector<std::string>{};
  f.ipoib.discovered = true;
  f.ipoib.interfaces["ib0"] = x;
  IpoibPort port;
  port.rdma_device = "mlx5_0";
  port.link_layer = "InfiniBand";
  port.pkeys = {0xffff, 0x8001};
  port.pkeys_read = true;
  f.ipoib.ports["ib0"] = port;
  return f;
}

// The child ib0.8001 as the kernel made it: datagram, mtu 2044, down.
void AddChild(HostFacts& f, int pkey, bool up) {
  IpoibInterface c;
  c.name = IpoibChildName("ib0", pkey);
  c.parent = "ib0";
  c.mode = "datagram";
  c.pkey = pkey;
  c.mtu = 2044;
  c.admin_up = up;
  c.addresses = std::vector<std::string>{};
  f.pci[0].netdevs.push_back(c.name);
  f.ipoib.interfaces["ib0"].children.push_back(c.name);
  f.ipoib.interfaces[c.name] = c;
}

DesiredState Want(IpoibSpec spec) {
  DesiredState d;
  NicSpec n;
  n.name = "ib-nic";
  n.selector.pf_names = {"ib0"};
  n.ipoib = std::move(spec);
  d.nics = {n};
  return d;
}

struct Planned {
  std::vector<Change> changes;
  std::vector<Diagnostic> diagnostics;
  std::vector<std::string> Ids() const {
    std::vector<std::string> ids;
    for (const Change& c : changes) ids.push_back(c.id);
    return ids;
  }
};

Planned Plan(const DesiredState& d, const HostFacts& f) {
  PlanSink sink;
  PlanIpoib(d, f, sink);
  return {sink.changes(), sink.diagnostics()};
}

TEST(IpoibPlanner, OrderModeChildrenMtuAddressesUp) {
  HostFacts f = IbHost();
  f.ipoib.interfaces["ib0"].address = kRcAddress;
  f.ipoib.interfaces["ib0"].cm_supported = true;
  f.ipoib.interfaces["ib0"].admin_up = false;
  IpoibSpec s;
  s.mode = "connected";
  s.mtu = 65520;
  s.addresses = std::vector<std::string>{"172.31.0.10/16"};
  s.pkeys = {"0x8001"};
  Planned p = Plan(Want(s), f);
  ASSERT_TRUE(p.diagnostics.empty()) << p.diagnostics[0].message;
  EXPECT_EQ(p.Ids(),
            (std::vector<std::string>{"ipoib/ib0/mode", "ipoib/ib0.8001/child",
                                      "ipoib/ib0.8001/mode", "ipoib/ib0/mtu", "ipoib/ib0.8001/mtu",
                                      "ipoib/ib0/addresses", "ipoib/ib0/up", "ipoib/ib0.8001/up"}));
  const Change& child = p.changes[1];
  EXPECT_EQ(child.before, false);
  EXPECT_EQ(child.after, true);
  EXPECT_EQ(child.detail["parent"], "ib0");
  EXPECT_EQ(child.detail["pkey"], "0x8001");
  EXPECT_EQ(child.field_path, "spec.nics[0].ipoib.pkeys[0]");
  EXPECT_EQ(p.changes[0].before, "datagram");
  EXPECT_EQ(p.changes[2].before, nullptr);  // the child is made by this plan
  EXPECT_EQ(p.changes[5].after, nlohmann::json::array({"172.31.0.10/16"}));
  for (const Change& c : p.changes) {
    EXPECT_EQ(c.phase, kPhaseLinks);
    EXPECT_EQ(c.disruption, Disruption::kLive);
  }
}

TEST(IpoibPlanner, ConvergedHostPlansNothing) {
  HostFacts f = IbHost();
  AddChild(f, 0x8001, true);
  f.ipoib.interfaces["ib0"].addresses = std::vector<std::string>{"fd00:31::10/64"};
  IpoibSpec s;
  s.mode = "datagram";
  s.mtu = 2044;
  s.addresses = std::vector<std::string>{"fd00:31:0::10/64"};  // same address, other spelling
  s.pkeys = {"0x8001"};
  Planned p = Plan(Want(s), f);
  EXPECT_TRUE(p.diagnostics.empty());
  EXPECT_TRUE(p.changes.empty()) << p.Ids()[0];
}

TEST(IpoibPlanner, ModeChangeReplansAnMtuThatHoldsNow) {
  HostFacts f = IbHost();
  f.ipoib.interfaces["ib0"].address = kRcAddress;
  f.ipoib.interfaces["ib0"].cm_supported = true;
  f.ipoib.interfaces["ib0"].mode = "connected";
  f.ipoib.interfaces["ib0"].mtu = 2044;
  IpoibSpec s;
  s.mode = "datagram";
  s.mtu = 2044;
  Planned p = Plan(Want(s), f);
  ASSERT_EQ(p.Ids(), (std::vector<std::string>{"ipoib/ib0/mode", "ipoib/ib0/mtu"}));
  EXPECT_EQ(p.changes[1].before, 2044);
  EXPECT_NE(p.changes[1].reason.find("mode change resets it"), std::string::npos);
}

TEST(IpoibPlanner, ExistingChildIsOnlyBroughtUp) {
  HostFacts f = IbHost();
  AddChild(f, 0x8001, false);
  IpoibSpec s;
  s.pkeys = {"0x8001"};
  Planned p = Plan(Want(s), f);
  ASSERT_EQ(p.Ids(), std::vector<std::string>{"ipoib/ib0.8001/up"});
  EXPECT_EQ(p.changes[0].before, false);
}

TEST(IpoibPlanner, ConnectedModeWithoutRcFlagIsAnError) {
  IpoibSpec s;
  s.mode = "connected";
  Planned p = Plan(Want(s), IbHost());
  EXPECT_TRUE(p.changes.empty());
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].path, "spec.nics[0].ipoib.mode");
  EXPECT_NE(p.diagnostics[0].message.find("ipoib_enhanced=0"), std::string::npos);
}

TEST(IpoibPlanner, DatagramMtuAbove4092IsAnErrorWhenTheModeIsNotSet) {
  IpoibSpec s;
  s.mtu = 9000;
  Planned p = Plan(Want(s), IbHost());
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].path, "spec.nics[0].ipoib.mtu");
  EXPECT_NE(p.diagnostics[0].message.find("4092"), std::string::npos);
}

TEST(IpoibPlanner, EthernetPortIsAnErrorUnlessLinkTypeIbIsPending) {
  HostFacts f = IbHost();
  f.ipoib.interfaces.clear();
  f.ipoib.not_ipoib["ib0"] = 1;
  IpoibSpec s;
  s.mode = "datagram";
  DesiredState d = Want(s);
  Planned p = Plan(d, f);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].severity, Severity::kError);
  EXPECT_EQ(p.diagnostics[0].path, "spec.nics[0].ipoib");
  EXPECT_NE(p.diagnostics[0].message.find("ib0 (type 1, Ethernet)"), std::string::npos);
  d.nics[0].link_type = "ib";
  p = Plan(d, f);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].severity, Severity::kWarning);
}

TEST(IpoibPlanner, NameTakenByAnotherInterfaceIsAnError) {
  HostFacts f = IbHost();
  AddChild(f, 0x8001, true);
  f.ipoib.interfaces["ib0.8001"].pkey = 0x8002;  // renamed or a foreign child
  IpoibSpec s;
  s.pkeys = {"0x8001"};
  Planned p = Plan(Want(s), f);
  ASSERT_EQ(p.diagnostics.size(), 1u);
  EXPECT_EQ(p.diagnostics[0].path, "spec.nics[0].ipoib.pkeys[0]");
}

TEST(IpoibPlanner, ChildNamesAsTheKernelMakesThem) {
  EXPECT_EQ(IpoibChildName("ib0", 0x8001), "ib0.8001");
  EXPECT_EQ(IpoibChildName("ib0", 0x2), "ib0.0002");
  EXPECT_EQ(IpoibChildName("ibp175s0f0np0", 0x8001), "ibp175s0f0np0.8");  // IFNAMSIZ - 1
  EXPECT_EQ(ParsePkey("0X7FFF"), 0x7fff);
  EXPECT_FALSE(ParsePkey("8001"));
  EXPECT_FALSE(ParsePkey("0x18001"));
  EXPECT_FALSE(IsChildPkey(0x8000));
  EXPECT_FALSE(IsChildPkey(0xffff));
  EXPECT_TRUE(IsChildPkey(0x0001));
  EXPECT_TRUE(IsChildPkey(0x8001));
}

std::map<std::string, CheckResult> Checks(const DesiredState* d, const HostFacts& f) {
  CheckSink sink;
  CheckIpoib(d, f, sink);
  return testing::ResultsByIdAndTarget(sink);
}

TEST(IpoibChecks, PkeyInThePortsTable) {
  HostFacts f = IbHost();
  AddChild(f, 0x8001, true);
  AddChild(f, 0x0002, true);
  auto r = Checks(nullptr, f);
  EXPECT_EQ(r["ipoib.pkey ib0.8001 (P_Key 0x8001)"].verdict, Verdict::kOk);
  const CheckResult& missing = r["ipoib.pkey ib0.0002 (P_Key 0x0002)"];
  EXPECT_EQ(missing.verdict, Verdict::kFail);
  EXPECT_NE(missing.summary.find("subnet manager"), std::string::npos);
  ASSERT_EQ(missing.evidence.size(), 1u);
  EXPECT_EQ(missing.evidence[0].first, "/sys/class/infiniband/mlx5_0/ports/1/pkeys/*");
  EXPECT_EQ(missing.evidence[0].second, "0xffff 0x8001");
  // A pkey host.yaml wants, not created yet, is checked too.
  IpoibSpec s;
  s.pkeys = {"0x8003"};
  DesiredState d = Want(s);
  EXPECT_EQ(Checks(&d, IbHost())["ipoib.pkey ib0.8003 (P_Key 0x8003)"].verdict, Verdict::kFail);
}

TEST(IpoibChecks, ModeAndMtu) {
  HostFacts f = IbHost();
  EXPECT_EQ(Checks(nullptr, f)["ipoib.mode-mtu ib0"].verdict, Verdict::kOk);
  f.ipoib.interfaces["ib0"].mtu = 65520;  // datagram cannot carry it
  EXPECT_EQ(Checks(nullptr, f)["ipoib.mode-mtu ib0"].verdict, Verdict::kFail);
  f.ipoib.interfaces["ib0"].mode = "connected";  // connected can
  f.ipoib.interfaces["ib0"].address = kRcAddress;
  f.ipoib.interfaces["ib0"].cm_supported = true;
  EXPECT_EQ(Checks(nullptr, f)["ipoib.mode-mtu ib0"].verdict, Verdict::kOk);
  IpoibSpec s;
  s.mode = "connected";
  DesiredState d = Want(s);
  f.ipoib.interfaces["ib0"].address = kUdAddress;  // enhanced IPoIB: no connected mode
  f.ipoib.interfaces["ib0"].cm_supported = false;
  auto checks = Checks(&d, f);
  const CheckResult& r = checks["ipoib.mode-mtu ib0"];
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_NE(r.fix.find("ipoib_enhanced=0"), std::string::npos);
}

}  // namespace
}  // namespace provisioner
