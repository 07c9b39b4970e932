#include "modules/roce/roce_planner.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/roce/roce_checks.h"
#include "test/support/fake_pci_module.h"
#include "test/support/planned_changes.h"

namespace provisioner {
namespace {

using ::testing::_;
using testing::Changed;
using testing::ChangedTo;
using testing::Diag;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

// A ConnectX netdev as mlx5 starts: trust pcp, no PFC, ECN on nowhere.
RoceNetdevFacts Fresh() {
  RoceNetdevFacts n;
  n.trust = "pcp";
  n.pfc = std::vector<int>{};
  n.ecn_dir = true;
  for (int p = 0; p < 8; ++p) n.ecn_np[p] = n.ecn_rp[p] = false;
  return n;
}

NicSpec Nic(const std::string& name, const std::string& pf_name) {
  NicSpec n;
  n.name = name;
  n.selector.pf_names = {pf_name};
  n.roce = NicRoceSpec{"dscp", std::vector<int>{3}, std::vector<int>{3}, std::nullopt};
  return n;
}

HostFacts Host() {
  HostFacts f;
  f.pci = {testing::NetworkPf("0000:af:00.0", "ens6f0np0")};
  f.roce.discovered = true;
  f.roce.netdevs["ens6f0np0"] = Fresh();
  return f;
}

// `f` with ens6f0np0 as roce: { trust: dscp, pfc: [p], ecn: [p] } leaves it.
HostFacts Lossless(HostFacts f, int p) {
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  n.trust = "dscp";
  n.pfc = std::vector<int>{p};
  n.ecn_np[p] = n.ecn_rp[p] = true;
  return f;
}

constexpr testing::PlannerOf<PlanRoce> Plan{};

TEST(RocePlanner, OneChangePerAttributeThatDiffers) {
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  std::vector<Diagnostic> diags;
  std::vector<Change> c = Plan(d, Host(), &diags);
  EXPECT_TRUE(diags.empty());
  ASSERT_THAT(c, ElementsAre(Changed("roce/ens6f0np0/trust", "pcp", "dscp"),
                             Changed("roce/ens6f0np0/pfc", nlohmann::json::array(),
                                     nlohmann::json::array({3})),
                             Changed("roce/ens6f0np0/ecn.roce_np.3", false, true),
                             Changed("roce/ens6f0np0/ecn.roce_rp.3")));
  EXPECT_EQ(c[0].field_path, "spec.nics[0].roce.trust");
  for (const Change& x : c) {
    EXPECT_EQ(x.disruption, Disruption::kLive);
    EXPECT_EQ(x.phase, kPhaseRoce);
    EXPECT_THAT(x.reason, HasSubstr("live; re-applied at every boot by the systemd unit"));
    EXPECT_THAT(x.reason, HasSubstr("nic rail0"));
  }
}

TEST(RocePlanner, MatchingHostPlansNothing) {
  HostFacts f = Lossless(Host(), 3);
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  EXPECT_TRUE(Plan(d, f).empty());
}

TEST(RocePlanner, PfcIsTheExactSetEcnOnlyTurnsOn) {
  HostFacts f = Host();
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  n.trust = "dscp";
  n.pfc = std::vector<int>{3, 4};
  for (int p = 0; p < 8; ++p) n.ecn_np[p] = n.ecn_rp[p] = true;  // the driver's default
  n.ecn_rp[3] = false;
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  std::vector<Change> c = Plan(d, f);
  // PFC [3,4] -> [3]; ECN rp on priority 3; ECN elsewhere left on.
  ASSERT_THAT(c, ElementsAre(ChangedTo("roce/ens6f0np0/pfc", nlohmann::json::array({3})),
                             ChangedTo("roce/ens6f0np0/ecn.roce_rp.3", true)));
  // mlx5 toggles the port to set PFC: a link flap, live (no reboot).
  EXPECT_EQ(DisruptionLabel(c[0]), "link-flap");
  EXPECT_EQ(c[0].disruption, Disruption::kLive);
  EXPECT_EQ(DisruptionLabel(c[1]), "live");
  // A priority without its enable file: an error naming the file.
  n.ecn_rp.erase(3);
  std::vector<Diagnostic> diags;
  Plan(d, f, &diags);
  EXPECT_THAT(diags,
              ElementsAre(Field(&Diagnostic::message,
                                HasSubstr("/sys/class/net/ens6f0np0/ecn/roce_rp/enable/3"))));
}

TEST(RocePlanner, UnspecifiedFieldsAreUnmanaged) {
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  d.nics[0].roce = NicRoceSpec{std::nullopt, std::vector<int>{3}, std::nullopt, std::nullopt};
  std::vector<Change> c = Plan(d, Host());
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].attribute, "pfc");
  d.nics[0].roce.reset();
  EXPECT_TRUE(Plan(d, Host()).empty());
  EXPECT_FALSE(WantsRoce(d));
}

TEST(RocePlanner, UnreadableStateIsAnErrorNamingTheField) {
  HostFacts f = Host();
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  n.trust.reset();
  n.pfc.reset();
  n.dcb_error = "dcbnl DCB_CMD_IEEE_GET ens6f0np0: EOPNOTSUPP";
  n.ecn_dir = false;
  n.ecn_np.clear();
  n.ecn_rp.clear();
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  std::vector<Diagnostic> diags;
  EXPECT_TRUE(Plan(d, f, &diags).empty());
  // No ecn/ directory is not an error here: the firmware planner sets
  // ROCE_CC_PRIO_MASK_P<n> (firmware_planner_test, firmware_cli_test).
  ASSERT_THAT(diags, ElementsAre(Diag("spec.nics[0].roce.trust", HasSubstr("EOPNOTSUPP")),
                                 Diag("spec.nics[0].roce.pfc")));
  // An ECN file that does not read is.
  n.ecn_dir = true;
  n.ecn_error = "/sys/class/net/ens6f0np0/ecn/roce_np/enable/3: \"x\" is not 0 or 1";
  Plan(d, f, &diags);
  EXPECT_THAT(
      diags,
      ElementsAre(_, _, Diag("spec.nics[0].roce.ecn", HasSubstr("/sys/class/net/ens6f0np0/ecn"))));
}

// roce.cnp: live in ecn/roce_np/cnp_dscp and cnp_802p_prio where NVIDIA's
// driver has them; without them nothing here (the firmware planner's).
TEST(RocePlanner, CnpIsLiveWhereTheDriverHasTheFiles) {
  HostFacts f = Lossless(Host(), 3);
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  n.cnp_dscp = 48;
  n.cnp_802p_prio = 6;
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  d.nics[0].roce->cnp = RoceCnpSpec{26, 3};
  EXPECT_TRUE(WantsRoce(d));
  std::vector<Diagnostic> diags;
  std::vector<Change> c = Plan(d, f, &diags);
  EXPECT_TRUE(diags.empty());
  ASSERT_THAT(c, ElementsAre(Changed("roce/ens6f0np0/cnp.dscp", 48, 26),
                             ChangedTo("roce/ens6f0np0/cnp.priority", 3)));
  EXPECT_EQ(c[0].field_path, "spec.nics[0].roce.cnp.dscp");
  EXPECT_EQ(DisruptionLabel(c[1]), "live");
  n.cnp_dscp.reset();
  n.cnp_802p_prio.reset();
  n.ecn_dir = false;
  EXPECT_TRUE(Plan(d, f, &diags).empty());
  EXPECT_TRUE(diags.empty());
}

TEST(RocePlanner, SelectorMatchingNothingOrNoNetdev) {
  DesiredState d;
  d.nics = {Nic("rail0", "nope0")};
  std::vector<Diagnostic> diags;
  Plan(d, Host(), &diags);
  // Reported once for every nic by the pci module (CheckUnmatchedSelectors).
  EXPECT_TRUE(diags.empty());
  HostFacts f = Host();
  f.pci = {testing::NetworkPf("0000:af:00.0", "")};
  d.nics[0].selector.pf_names.clear();
  d.nics[0].selector.root_devices = {"0000:af:00.0"};
  Plan(d, f, &diags);
  EXPECT_THAT(diags, ElementsAre(Diag("spec.nics[0].roce", HasSubstr("no network interface"))));
}

TEST(RocePlanner, TwoNicsAskingOneNetdevDifferentValuesIsAnError) {
  DesiredState d;
  d.nics = {Nic("a", "ens6f0np0"), Nic("b", "ens6f0np0")};
  d.nics[1].roce->pfc = std::vector<int>{4};
  std::vector<Diagnostic> diags;
  std::vector<Change> c = Plan(d, Host(), &diags);
  EXPECT_THAT(diags, ElementsAre(Diag("spec.nics[1].roce.pfc", HasSubstr("nic a wants [3]"))));
  EXPECT_EQ(c.size(), 4u);  // each id once
}

TEST(RocePlanner, EcnAttributeRoundTrip) {
  EXPECT_EQ(EcnAttribute("roce_rp", 5), "ecn.roce_rp.5");
  auto t = ParseEcnAttribute("ecn.roce_rp.5");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->point, "roce_rp");
  EXPECT_EQ(t->prio, 5);
  EXPECT_FALSE(ParseEcnAttribute("ecn.roce_rp.8"));
  EXPECT_FALSE(ParseEcnAttribute("ecn.roce_xp.1"));
  EXPECT_FALSE(ParseEcnAttribute("ecn.roce_np.12"));
}

// Doctor: the priority of NCCL_IB_TC.
std::vector<CheckResult> Doctor(const HostFacts& f) {
  CheckSink sink;
  CheckRoce(nullptr, f, sink);
  return sink.results();
}

// RDMA device `name` with one port of `link_layer` on `netdev`.
RdmaDevice Device(const std::string& name, const std::string& link_layer,
                  const std::string& netdev) {
  RdmaDevice d;
  d.name = name;
  RdmaPort p;
  p.link_layer = link_layer;
  p.netdev = netdev;
  d.ports = {p};
  return d;
}

HostFacts RoceHost() {
  HostFacts f = Host();
  f.rdma.devices = {Device("mlx5_0", "Ethernet", "ens6f0np0")};
  return f;
}

TEST(RoceChecks, PriorityOfTrafficClass) {
  EXPECT_EQ(PriorityOfTrafficClass(106), 3);  // DSCP 26
  EXPECT_EQ(PriorityOfTrafficClass(0), 0);
  EXPECT_EQ(PriorityOfTrafficClass(160), 5);  // DSCP 40
}

TEST(RoceChecks, FailsWithoutPfcAndEcnOnTheGuidePriority) {
  std::vector<CheckResult> r = Doctor(RoceHost());
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].id, "roce.nccl-priority");
  EXPECT_EQ(r[0].verdict, Verdict::kFail);
  EXPECT_THAT(r[0].summary, HasSubstr("PFC, ECN roce_np, ECN roce_rp not enabled on priority 3"));
  EXPECT_THAT(r[0].evidence[0].second, HasSubstr("assumed"));
  EXPECT_THAT(r[0].fix, HasSubstr("roce: { trust: dscp, pfc: [3], ecn: [3] }"));
  EXPECT_THAT(r[0].fix, HasSubstr("--pfc 0,0,0,1,0,0,0,0"));
}

TEST(RoceChecks, OkOnTheConfiguredPriorityOfNcclIbTc) {
  HostFacts f = Lossless(RoceHost(), 5);
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  f.roce.nccl_ib_tc = 160;
  f.roce.nccl_ib_tc_source = "/etc/nccl.conf";
  std::vector<CheckResult> r = Doctor(f);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, Verdict::kOk) << r[0].summary;
  EXPECT_EQ(r[0].evidence[0].second, "160 (/etc/nccl.conf)");
  // The same host with the guides' traffic class: priority 3 is not lossless.
  f.roce.nccl_ib_tc = 106;
  EXPECT_EQ(Doctor(f)[0].verdict, Verdict::kFail);
  // PCP trust: warn even with PFC and ECN on the priority.
  f.roce.nccl_ib_tc = 160;
  n.trust = "pcp";
  EXPECT_EQ(Doctor(f)[0].verdict, Verdict::kWarn);
}

TEST(RoceChecks, OnlyRoceNetdevsAreChecked) {
  HostFacts f = RoceHost();
  f.pci.push_back(testing::NetworkPf("0000:86:00.0", "ibs5f0"));
  RoceNetdevFacts ib;
  ib.dcb_error = "dcbnl DCB_CMD_IEEE_GET ibs5f0: EOPNOTSUPP";
  f.roce.netdevs["ibs5f0"] = ib;
  f.rdma.devices.push_back(Device("mlx5_1", "InfiniBand", "ibs5f0"));
  std::vector<CheckResult> r = Doctor(f);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].target, "ens6f0np0");
  // host.yaml selecting only the IB NIC: nothing RoCE to check there.
  DesiredState desired;
  NicSpec nic;
  nic.name = "ib";
  nic.selector.pf_names = {"ibs5f0"};
  desired.nics = {nic};
  CheckSink sink;
  CheckRoce(&desired, f, sink);
  ASSERT_EQ(sink.results().size(), 1u);  // no selected RoCE netdev: every RoCE netdev
  EXPECT_EQ(sink.results()[0].target, "ens6f0np0");
}

// tos, pause, dscpMap and dcbx: one change each, in the order apply needs
// them (DCBX before the DCB settings, pause off before PFC on, the ToS last).
TEST(RocePlanner, LosslessRestInApplyOrder) {
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  d.nics[0].roce->ecn.reset();
  d.nics[0].roce->dcbx = "host";
  d.nics[0].roce->dscp_map = std::map<int, int>{{26, 3}, {48, 6}};
  d.nics[0].roce->pause = false;
  d.nics[0].roce->tos = 106;
  HostFacts f = Host();
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  n.dcbx = "firmware";
  n.pause_rx = true;
  n.pause_tx = true;
  n.tos_file = "/sys/class/infiniband/mlx5_0/tc/1/traffic_class";
  std::vector<Diagnostic> diags;
  std::vector<Change> c = Plan(d, f, &diags);
  EXPECT_TRUE(diags.empty()) << diags.front().message;
  ASSERT_THAT(
      c, ElementsAre(
             Changed("roce/ens6f0np0/dcbx", "firmware", "host"), Changed("roce/ens6f0np0/trust"),
             Changed("roce/ens6f0np0/dscpMap", nlohmann::json::parse(R"({"26":null,"48":null})"),
                     nlohmann::json::parse(R"({"26":3,"48":6})")),
             Changed("roce/ens6f0np0/pause", nlohmann::json::parse(R"({"rx":true,"tx":true})"),
                     nlohmann::json::parse(R"({"rx":false,"tx":false})")),
             Changed("roce/ens6f0np0/pfc"), Changed("roce/ens6f0np0/tos", nullptr, 106)));
  EXPECT_EQ(c[2].field_path, "spec.nics[0].roce.dscpMap");
  EXPECT_FALSE(c[3].link_flap);
  EXPECT_EQ(c[5].detail["file"], "/sys/class/infiniband/mlx5_0/tc/1/traffic_class");
  EXPECT_THAT(c[5].reason, HasSubstr("DSCP 26, priority 3"));

  // Converged: nothing.
  n.dcbx = "host";
  n.trust = "dscp";
  for (int dscp = 0; dscp < 64; ++dscp) n.dscp_map[dscp] = dscp >> 3;
  n.dscp_map[48] = 6;
  n.pause_rx = n.pause_tx = false;
  n.pfc = std::vector<int>{3};
  n.tos = 106;
  EXPECT_TRUE(Plan(d, f).empty());
  // One entry off: only it is shown.
  n.dscp_map[26] = 5;
  c = Plan(d, f);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].before, nlohmann::json::parse(R"({"26":5,"48":6})"));
}

TEST(RocePlanner, DscpMapNeedsDscpTrust) {
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  d.nics[0].roce->trust.reset();  // the host is in trust pcp
  d.nics[0].roce->dscp_map = std::map<int, int>{{26, 3}};
  std::vector<Diagnostic> diags;
  Plan(d, Host(), &diags);
  EXPECT_THAT(diags, ElementsAre(Diag("spec.nics[0].roce.dscpMap", HasSubstr("trust pcp"))));
  d.nics[0].roce->trust = "pcp";
  Plan(d, Host(), &diags);
  ASSERT_EQ(diags.size(), 1u);
}

// The ToS must land on a PFC priority through the map this plan leaves.
TEST(RocePlanner, TosOffThePfcPriorityIsAnError) {
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  d.nics[0].roce->tos = 106;                               // DSCP 26
  d.nics[0].roce->dscp_map = std::map<int, int>{{26, 5}};  // -> priority 5
  HostFacts f = Host();
  f.roce.netdevs["ens6f0np0"].tos_file = "/sys/class/infiniband/mlx5_0/tc/1/traffic_class";
  std::vector<Diagnostic> diags;
  Plan(d, f, &diags);
  EXPECT_THAT(diags, ElementsAre(Diag("spec.nics[0].roce.tos", HasSubstr("lands on priority 5"))));
  d.nics[0].roce->pfc = std::vector<int>{5};
  Plan(d, f, &diags);
  EXPECT_TRUE(diags.empty());
}

TEST(RocePlanner, UnreadableOrMissingStateIsAnErrorNamingTheField) {
  DesiredState d;
  d.nics = {Nic("rail0", "ens6f0np0")};
  d.nics[0].roce = NicRoceSpec{};
  d.nics[0].roce->tos = 106;
  d.nics[0].roce->pause = false;
  d.nics[0].roce->dcbx = "host";
  HostFacts f = Host();
  f.roce.netdevs["ens6f0np0"].pause_error = "ETHTOOL_MSG_PAUSE_GET: EOPNOTSUPP";
  std::vector<Diagnostic> diags;
  EXPECT_TRUE(Plan(d, f, &diags).empty());
  EXPECT_THAT(diags, ElementsAre(Diag("spec.nics[0].roce.dcbx", HasSubstr("getdcbx")),
                                 Diag("spec.nics[0].roce.pause", HasSubstr("EOPNOTSUPP")),
                                 Diag("spec.nics[0].roce.tos",
                                      ::testing::AllOf(HasSubstr("traffic_class"),
                                                       HasSubstr("default_roce_tos")))));
}

// mlx5 with port buffers, as a fresh ConnectX-6 Dx reports them: cable 7 m,
// every priority in buffer 0.
HostFacts BufferHost() {
  HostFacts f = Host();
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  n.pfc = std::vector<int>{3};
  n.cable_length = 7;
  n.prio2buffer = std::vector<int>(8, 0);
  n.buffer_sizes = std::vector<long long>{130944, 0, 0, 0, 0, 0, 0, 0};
  n.buffer_total = 524160;
  return f;
}

NicSpec BufferNic(int cable, std::vector<int> p2b, std::vector<long long> sizes) {
  NicSpec n;
  n.name = "rail0";
  n.selector.pf_names = {"ens6f0np0"};
  NicRoceSpec r;
  r.pfc = std::vector<int>{3};
  r.cable_length = cable;
  r.buffers = RoceBufferSpec{std::move(p2b), std::move(sizes)};
  n.roce = r;
  return n;
}

TEST(RocePlanner, CableLengthAndBuffersWithPreviousValues) {
  DesiredState d;
  d.nics = {BufferNic(5, {0, 0, 0, 1, 0, 0, 0, 0}, {130944, 98304})};
  std::vector<Diagnostic> diags;
  std::vector<Change> c = Plan(d, BufferHost(), &diags);
  EXPECT_TRUE(diags.empty());
  // A shorter cable (smaller xoff) before the buffers change; the sizes not
  // listed are 0.
  ASSERT_THAT(
      c, ElementsAre(Changed("roce/ens6f0np0/cableLength", 7, 5),
                     Changed("roce/ens6f0np0/buffers",
                             nlohmann::json::parse(R"({"prio2buffer":[0,0,0,0,0,0,0,0],)"
                                                   R"("sizes":[130944,0,0,0,0,0,0,0]})"),
                             nlohmann::json::parse(R"({"prio2buffer":[0,0,0,1,0,0,0,0],)"
                                                   R"("sizes":[130944,98304,0,0,0,0,0,0]})"))));
  EXPECT_EQ(c[0].field_path, "spec.nics[0].roce.cableLength");
  EXPECT_EQ(c[1].field_path, "spec.nics[0].roce.buffers");
  EXPECT_FALSE(c[1].link_flap);

  // A longer cable after the buffers grow.
  d.nics = {BufferNic(100, {0, 0, 0, 1, 0, 0, 0, 0}, {130944, 98304})};
  c = Plan(d, BufferHost());
  EXPECT_THAT(
      c, ElementsAre(Changed("roce/ens6f0np0/buffers"), Changed("roce/ens6f0np0/cableLength")));

  // prio2buffer alone keeps the sizes; the host as wanted plans nothing.
  NicSpec only = BufferNic(7, {0, 0, 0, 0, 0, 0, 0, 0}, {});
  only.roce->buffers->sizes.reset();
  d.nics = {only};
  EXPECT_TRUE(Plan(d, BufferHost()).empty());
}

TEST(RocePlanner, BuffersTheDriverCannotTakeAreErrorsNamingTheField) {
  DesiredState d;
  d.nics = {BufferNic(30, {0, 0, 0, 1, 0, 0, 0, 0}, {400000, 200000})};
  std::vector<Diagnostic> diags;
  EXPECT_TRUE(Plan(d, BufferHost(), &diags).size() == 1u);  // the cable length
  ASSERT_THAT(
      diags,
      ElementsAre(
          Diag("spec.nics[0].roce.buffers.sizes",
               HasSubstr("600000 bytes; mlx5 takes at most 523648 (its port buffer has 524160"))));

  // No port buffer support (delay 0, no DCB_ATTR_DCB_BUFFER).
  d.nics = {BufferNic(30, {0, 0, 0, 1, 0, 0, 0, 0}, {130944, 98304})};
  diags.clear();
  EXPECT_EQ(Plan(d, Host(), &diags).size(), 1u);  // pfc
  EXPECT_THAT(
      diags,
      ElementsAre(Diag("spec.nics[0].roce.cableLength", HasSubstr("reports no cable length")),
                  Diag("spec.nics[0].roce.buffers", HasSubstr("has no port buffers to set"))));

  // DCB unreadable.
  HostFacts broken = Host();
  broken.roce.netdevs["ens6f0np0"].pfc.reset();
  broken.roce.netdevs["ens6f0np0"].trust.reset();
  broken.roce.netdevs["ens6f0np0"].dcb_error = "dcbnl DCB_CMD_IEEE_GET ens6f0np0: EOPNOTSUPP";
  diags.clear();
  Plan(d, broken, &diags);
  ASSERT_GE(diags.size(), 2u);
  EXPECT_THAT(diags.back().message, HasSubstr("could not be read: dcbnl DCB_CMD_IEEE_GET"));
}

TEST(RoceChecks, NcclPriorityShowsCableLengthAndItsBuffer) {
  HostFacts f = BufferHost();
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  n.trust = "dscp";
  n.ecn_np[3] = n.ecn_rp[3] = true;
  (*n.prio2buffer)[3] = 1;
  (*n.buffer_sizes)[1] = 98304;
  DesiredState d;
  d.nics = {BufferNic(30, {0, 0, 0, 1, 0, 0, 0, 0}, {130944, 98304})};
  CheckSink sink;
  CheckRoce(&d, f, sink);
  bool seen = false;
  for (const CheckResult& r : sink.results()) {
    if (r.id != "roce.nccl-priority") continue;
    seen = true;
    EXPECT_EQ(r.verdict, Verdict::kOk) << r.summary;  // reported, not judged
    std::string all;
    for (const auto& [k, v] : r.evidence) all += k + ": " + v + "\n";
    EXPECT_THAT(all, HasSubstr("dcbnl cable length (ens6f0np0, ieee_pfc.delay): 7 m"));
    EXPECT_THAT(all, HasSubstr("dcbnl receive buffer of priority 3 (ens6f0np0): buffer 1, 98304 "
                               "bytes of 524160"));
  }
  EXPECT_TRUE(seen);
}

// Issue 35 item 6: from PFC to global pause, PFC goes off before pause goes
// on (the link never runs both); pause on over a PFC the host keeps is a
// plan error.
TEST(RocePlanner, PfcOffBeforeGlobalPauseOn) {
  HostFacts f = Host();
  RoceNetdevFacts& n = f.roce.netdevs["ens6f0np0"];
  n.pfc = std::vector<int>{3};
  n.pause_rx = n.pause_tx = false;
  DesiredState d;
  NicSpec nic;
  nic.name = "rail0";
  nic.selector.pf_names = {"ens6f0np0"};
  nic.roce = NicRoceSpec{};
  nic.roce->pfc = std::vector<int>{};
  nic.roce->pause = true;
  d.nics = {nic};
  std::vector<Diagnostic> diags;
  std::vector<Change> c = Plan(d, f, &diags);
  EXPECT_TRUE(diags.empty());
  EXPECT_THAT(c, ElementsAre(ChangedTo("roce/ens6f0np0/pfc", nlohmann::json::array()),
                             ChangedTo("roce/ens6f0np0/pause",
                                       nlohmann::json::parse(R"({"rx":true,"tx":true})"))));

  // pause: true alone while the host has PFC on: refused, nothing planned.
  d.nics[0].roce->pfc.reset();
  diags.clear();
  EXPECT_TRUE(Plan(d, f, &diags).empty());
  EXPECT_THAT(diags,
              ElementsAre(Diag("spec.nics[0].roce.pause", HasSubstr("has PFC on priorities [3]"))));
}

// The kernel's capacity: total - internal buffers, less 4 shared cells.
TEST(RocePlanner, BufferCapacityIsTheKernels) {
  HostFacts f = BufferHost();
  f.roce.netdevs["ens6f0np0"].buffer_internal = 65536;  // 524160 - 65536 = 458624
  DesiredState d;
  // 458624 bytes fit the spare buffer but leave no shared cells.
  d.nics = {BufferNic(7, {0, 0, 0, 1, 0, 0, 0, 0}, {130944, 327680})};
  std::vector<Diagnostic> diags;
  Plan(d, f, &diags);
  EXPECT_THAT(
      diags, ElementsAre(Diag("spec.nics[0].roce.buffers.sizes",
                              ::testing::AllOf(HasSubstr("458624 bytes; mlx5 takes at most 458112"),
                                               HasSubstr("65536 of them internal")))));
  d.nics = {BufferNic(7, {0, 0, 0, 1, 0, 0, 0, 0}, {130944, 327168})};  // 458112
  diags.clear();
  EXPECT_EQ(Plan(d, f, &diags).size(), 1u);
  EXPECT_TRUE(diags.empty());
}

}  // namespace
}  // namespace provisioner
