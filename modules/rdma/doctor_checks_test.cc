// Doctor checks on host trees edited into the broken state each check is
// about, discovered by the real modules (pci, sriov, rdma).
#include "modules/rdma/doctor_checks.h"

#include <cstdlib>
#include <fstream>

#include "engine/core/engine.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/support/discover_every_module.h"
#include "test/support/files.h"

namespace provisioner::rdma {
namespace {

using ::provisioner::testing::ExtractedHostTree;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

void Sh(const std::string& cmd) { ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd; }

void Write(const std::string& path, const std::string& text) {
  Sh("mkdir -p '" + path.substr(0, path.rfind('/')) + "'");
  std::ofstream out(path);
  out << text;
  ASSERT_TRUE(out.good()) << path;
}

HostFacts Facts(const std::string& root) {
  return provisioner::testing::DiscoverWithEveryModule(*NewLocalHostFs(root));
}

// The results with the given id that `check` (one of doctor_checks.h's)
// gives on `args`.
template <typename Check, typename... Args>
std::vector<CheckResult> Checks(const std::string& id, Check check, const Args&... args) {
  CheckSink sink;
  check(args..., sink);
  std::vector<CheckResult> out;
  for (const auto& r : sink.results()) {
    if (r.id == id) out.push_back(r);
  }
  return out;
}

// A result for `target` ("" any) with verdict `v`, whose summary and fix
// hold the given texts ("" anything).
::testing::Matcher<CheckResult> Is(Verdict v, const std::string& summary = "",
                                   const std::string& fix = "", const std::string& target = "") {
  return AllOf(Field(&CheckResult::verdict, v), Field(&CheckResult::summary, HasSubstr(summary)),
               Field(&CheckResult::fix, HasSubstr(fix)),
               Field(&CheckResult::target,
                     target.empty() ? ::testing::Matcher<std::string>(::testing::_) : Eq(target)));
}

// One of the results is `target`'s with verdict `v` (and that summary).
::testing::Matcher<std::vector<CheckResult>> Has(const std::string& target, Verdict v,
                                                 const std::string& summary = "") {
  return Contains(Is(v, summary, "", target));
}

NicSpec Nic(const std::string& name) {
  NicSpec n;
  n.name = name;
  n.selector.vendor = "15b3";
  n.selector.device_id = "1017";
  return n;
}

// Nic n: the 4 RDMA VFs of 0000:af:00.0 (the cx5-roce-vfs tree's).
NicSpec RdmaVfsNic() {
  NicSpec n = Nic("n");
  n.selector.root_devices = {"0000:af:00.0"};
  n.num_vfs = 4;
  n.is_rdma = true;
  return n;
}

// Unbinds mlx5_ib from the VF at `vf_address` in the tree at `root`: the VF
// keeps its netdev, loses its RDMA device.
void RemoveVfRdmaDevice(const std::string& root, const std::string& vf_address) {
  auto fs = NewLocalHostFs(root);
  auto vf = fs->Resolve("/sys/bus/pci/devices/" + vf_address);
  ASSERT_TRUE(vf.ok());
  auto ib = fs->ListDir(*vf + "/infiniband");
  ASSERT_TRUE(ib.ok() && ib->size() == 1);
  Sh("rm -rf '" + root + *vf + "/infiniband' '" + root + "/sys/class/infiniband/" + (*ib)[0] + "'");
}

TEST(DoctorChecks, PortWithoutNetdevFailsNamingDeviceAndPort) {
  std::string root = ExtractedHostTree("cx5-roce");
  EXPECT_THAT(Checks("rdma.port-netdev", CheckPortNetdevs, Facts(root)),
              ElementsAre(Is(Verdict::kOk), ::testing::_));

  Sh("rm -rf '" + root + "/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/net' '" + root +
     "/sys/class/net/ens6f0np0'");
  auto r = Checks("rdma.port-netdev", CheckPortNetdevs, Facts(root));
  EXPECT_THAT(
      r, Contains(
             AllOf(Is(Verdict::kFail, "no netdev in this network namespace", "", "mlx5_0 port 1"),
                   Field(&CheckResult::summary, HasSubstr("ibv_modify_qp failed: No such device")),
                   Field(&CheckResult::fix, Not(IsEmpty())))));
  EXPECT_THAT(r, Has("mlx5_1 port 1", Verdict::kOk));
}

void WriteAddress(const std::string& root, const std::string& ip) {
  Write(root + "/proc/net/route",
        "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
        "ens6f0np0\t000051AC\t00000000\t0001\t0\t0\t0\t0000FFFF\t0\t0\t0\n");
  Write(root + "/proc/net/fib_trie",
        "Local:\n  +-- 0.0.0.0/0 3 0 5\n     |-- " + ip + "\n        /32 host LOCAL\n");
}

TEST(DoctorChecks, RoceV2GidForEachIpv4Address) {
  std::string root = ExtractedHostTree("cx5-roce");
  const std::string id = "rdma.roce-v2-gid";
  // Without address facts, the GID table's own IPv4 entries are used.
  EXPECT_THAT(Checks(id, CheckRoceV2Gids, Facts(root)),
              Has("mlx5_0 port 1 172.81.0.119", Verdict::kOk, "NCCL_IB_GID_INDEX=3"));

  WriteAddress(root, "172.81.0.119");
  auto same = Checks(id, CheckRoceV2Gids, Facts(root));
  EXPECT_THAT(same, Has("mlx5_0 port 1 172.81.0.119", Verdict::kOk));
  // ens6f1np1 has no address at all now.
  EXPECT_THAT(same, Has("mlx5_1 port 1 ens6f1np1", Verdict::kWarn));

  // The netdev's address is not in the GID table (e.g. RoCE v1 only, or the
  // address sits on a VLAN on top).
  WriteAddress(root, "172.81.0.120");
  auto missing = Checks(id, CheckRoceV2Gids, Facts(root));
  EXPECT_THAT(missing, Has("mlx5_0 port 1 172.81.0.120", Verdict::kFail, "has no RoCE v2 GID"));
  for (const CheckResult& r : missing) {
    if (r.target == "mlx5_0 port 1 172.81.0.120") {
      ASSERT_FALSE(r.evidence.empty());
      EXPECT_THAT(r.evidence.back().second, HasSubstr("3=172.81.0.119"));
    }
  }
}

TEST(DoctorChecks, NetnsModeAgainstHostYamlAndPersistentSetting) {
  std::string root = ExtractedHostTree("cx5-roce");
  DesiredState d;
  d.rdma = RdmaSpec{"exclusive", true};
  EXPECT_THAT(Checks("rdma.netns-mode", CheckNetnsMode, &d, Facts(root)),
              ElementsAre(Is(Verdict::kFail, "is shared, host.yaml wants exclusive")));
  EXPECT_EQ(Checks("rdma.netns-mode-persistent", CheckNetnsMode, &d, Facts(root)).size(), 1u);

  // No host.yaml: live shared but exclusive after a reboot.
  Write(root + "/etc/modprobe.d/ib_core.conf", "options ib_core netns_mode=0\n");
  const DesiredState* none = nullptr;
  auto p = Checks("rdma.netns-mode-persistent", CheckNetnsMode, none, Facts(root));
  ASSERT_THAT(p, ElementsAre(Is(Verdict::kWarn, "shared now but exclusive after a reboot")));
  EXPECT_EQ(p[0].evidence.back().first, "/etc/modprobe.d/ib_core.conf");
}

TEST(DoctorChecks, DevFiles) {
  std::string root = ExtractedHostTree("cx5-roce");
  const std::string id = "rdma.dev-files";
  // A tree without /dev.
  EXPECT_THAT(Checks(id, CheckDevFiles, Facts(root)), ElementsAre(Is(Verdict::kWarn)));

  Sh("mkdir -p '" + root + "/dev/infiniband' && touch '" + root + "/dev/infiniband/uverbs0'");
  auto partial = Checks(id, CheckDevFiles, Facts(root));
  EXPECT_THAT(partial, Has("/dev/infiniband/uverbs*", Verdict::kFail,
                           "1 uverbs device files for 2 RDMA devices"));
  EXPECT_THAT(partial, Contains(Field(&CheckResult::target, "/dev/infiniband/umad*,issm*")));
  EXPECT_THAT(partial, Contains(Field(&CheckResult::target, "/dev/infiniband/rdma_cm")));

  Sh("cd '" + root + "/dev/infiniband' && touch uverbs1 umad0 umad1 issm0 issm1 rdma_cm");
  EXPECT_THAT(Checks(id, CheckDevFiles, Facts(root)), ElementsAre(Is(Verdict::kOk)));

  // A /dev with only other entries (hwloc's captures: dev/cpuset) is not a
  // capture of the device files: "not captured", a warning.
  Sh("rm -rf '" + root + "/dev/infiniband' && mkdir -p '" + root + "/dev/cpuset'");
  EXPECT_THAT(Checks(id, CheckDevFiles, Facts(root)),
              ElementsAre(Is(Verdict::kWarn, "not captured")));
  // The device nodes every host has, without /dev/infiniband: a failure.
  Sh("touch '" + root + "/dev/null'");
  EXPECT_THAT(Checks(id, CheckDevFiles, Facts(root)), ElementsAre(Is(Verdict::kFail)));
}

TEST(DoctorChecks, InfinibandPortWithoutSubnetManager) {
  std::string root = ExtractedHostTree("cx5-ib");
  const std::string id = "rdma.ib-port";
  EXPECT_THAT(Checks(id, CheckIbPorts, Facts(root)), ElementsAre(Is(Verdict::kOk)));

  const std::string port = root + "/sys/class/infiniband/mlx5_0/ports/1";
  Write(port + "/sm_lid", "0x0\n");
  Write(port + "/state", "2: INIT\n");
  EXPECT_THAT(Checks(id, CheckIbPorts, Facts(root)),
              ElementsAre(Is(Verdict::kFail, "no subnet manager (sm_lid 0)", "opensm")));

  Write(port + "/sm_lid", "0x1\n");
  Write(port + "/state", "1: DOWN\n");
  Write(port + "/phys_state", "3: Disabled\n");
  EXPECT_THAT(Checks(id, CheckIbPorts, Facts(root)),
              ElementsAre(Is(Verdict::kFail, "is DOWN (Disabled), not ACTIVE")));

  // A capture without sm_lid: nothing to say about the SM, the state decides.
  Write(port + "/state", "4: ACTIVE\n");
  Sh("rm '" + port + "/sm_lid'");
  EXPECT_THAT(Checks(id, CheckIbPorts, Facts(root)),
              ElementsAre(Is(Verdict::kOk, "sm_lid not readable")));
}

TEST(DoctorChecks, DevicePluginSelectorsMatchingNothing) {
  DesiredState d;
  NicSpec vfs = Nic("gpu1-nic");
  vfs.selector.root_devices = {"0000:af:00.0"};
  vfs.num_vfs = 4;
  vfs.resource_name = "gpu1sriov";
  NicSpec wrong = Nic("typo");
  wrong.selector.device_id = "101b";
  wrong.resource_name = "typo";
  d.nics = {vfs, wrong};
  const std::string id = "rdma.device-plugin";
  EXPECT_THAT(Checks(id, CheckDevicePluginSelectors, d, Facts(ExtractedHostTree("cx5-roce"))),
              ElementsAre(Is(Verdict::kFail, "resource count is 0", "numVfs 4"),
                          Is(Verdict::kFail, "", "fix the nicSelector")));
  EXPECT_THAT(Checks(id, CheckDevicePluginSelectors, d, Facts(ExtractedHostTree("cx5-roce-vfs"))),
              ElementsAre(Is(Verdict::kOk, "4 VFs"), ::testing::_));
}

// On the real ConnectX-3 capture (hwloc): the port's P_Key table is 0xffff
// only. A multusConfig in partition 0x8001 fails with the SM fix; the
// default partition (0x7fff, limited membership) is in the table.
TEST(DoctorChecks, MultusPkeyAgainstThePortsPkeyTable) {
  HostFacts facts = Facts(ExtractedHostTree("mlx4-ib-hwloc"));
  ASSERT_EQ(facts.rdma.devices.size(), 1u);
  ASSERT_TRUE(facts.rdma.devices[0].ports[0].pkeys.has_value());
  EXPECT_EQ(*facts.rdma.devices[0].ports[0].pkeys, std::vector<std::string>{"0xffff"});
  DesiredState d;
  NicSpec ib = Nic("ib");
  ib.selector.device_id = "1003";
  ib.selector.root_devices = {"0000:82:00.0"};
  d.nics = {ib};
  MultusConfigSpec mc;
  mc.name = "ib-tenant";
  mc.cni_type = "ib-sriov";
  mc.nic = "ib";
  mc.pkey = "0x8001";
  MultusConfigSpec def = mc;
  def.name = "ib-default";
  def.pkey = "0x7fff";
  d.multus_configs = {mc, def};
  EXPECT_THAT(Checks("rdma.multus-pkey", CheckMultusPkeys, d, facts),
              ElementsAre(Is(Verdict::kFail,
                             "partition 0x8001 of multusConfig ib-tenant is not in the P_Key "
                             "table of mlx4_0 port 1",
                             "subnet manager"),
                          Is(Verdict::kOk)));
  // Without the table (not captured): a warning, not a failure.
  facts.rdma.devices[0].ports[0].pkeys.reset();
  EXPECT_THAT(Checks("rdma.multus-pkey", CheckMultusPkeys, d, facts),
              ElementsAre(Is(Verdict::kWarn), ::testing::_));
}

TEST(DoctorChecks, LinkLayerAgainstLinkType) {
  DesiredState d;
  NicSpec n = Nic("n");
  n.link_type = "ib";
  d.nics = {n};
  EXPECT_THAT(Checks("rdma.link-layer", CheckLinkLayer, d, Facts(ExtractedHostTree("cx5-roce"))),
              ElementsAre(Is(Verdict::kFail, "link layer is Ethernet, nics[n].linkType wants ib",
                             "LINK_TYPE_P1=1"),
                          ::testing::_));
  EXPECT_THAT(Checks("rdma.link-layer", CheckLinkLayer, d, Facts(ExtractedHostTree("cx5-ib"))),
              ElementsAre(Is(Verdict::kOk)));
}

TEST(DoctorChecks, VfsWithoutRdmaDevices) {
  std::string root = ExtractedHostTree("cx5-roce-vfs");
  DesiredState d;
  d.nics = {RdmaVfsNic()};
  EXPECT_THAT(Checks("rdma.vf-rdma", CheckVfRdma, d, Facts(root)), ElementsAre(Is(Verdict::kOk)));

  // mlx5_ib not bound to the VF at 0000:af:00.3: no RDMA device.
  ASSERT_NO_FATAL_FAILURE(RemoveVfRdmaDevice(root, "0000:af:00.3"));
  auto r = Checks("rdma.vf-rdma", CheckVfRdma, d, Facts(root));
  ASSERT_THAT(r, ElementsAre(Is(Verdict::kFail, "1 of 4 VFs of 0000:af:00.0 have no RDMA device")));
  ASSERT_FALSE(r[0].evidence.empty());
  EXPECT_THAT(r[0].evidence[0].second, HasSubstr("0000:af:00.3"));
}

// Issue 28 item 3: with vfGroups, isRdma is per group: a VF without an RDMA
// device in a group that does not want one (a vfio-pci group) is no failure,
// one in a group that wants it is.
TEST(DoctorChecks, VfRdmaFollowsEachVfGroup) {
  std::string root = ExtractedHostTree("cx5-roce-vfs");
  ASSERT_NO_FATAL_FAILURE(RemoveVfRdmaDevice(root, "0000:af:00.3"));
  HostFacts facts = Facts(root);
  const PciFunction* pf = facts.FindPci("0000:af:00.0");
  ASSERT_NE(pf, nullptr);
  ASSERT_TRUE(pf->sriov);
  int index = -1;  // the VF without an RDMA device
  for (const auto& v : pf->sriov->vfs) {
    if (v.pci_address == "0000:af:00.3") index = v.vf_index;
  }
  ASSERT_GE(index, 0);
  DesiredState d;
  NicSpec n = RdmaVfsNic();
  VfGroupSpec g;
  g.range = std::to_string(index);
  g.first = g.last = index;
  g.is_rdma = false;
  n.vf_groups = {g};
  d.nics = {n};
  EXPECT_THAT(Checks("rdma.vf-rdma", CheckVfRdma, d, facts), ElementsAre(Is(Verdict::kOk)));
  d.nics[0].vf_groups[0].is_rdma = true;
  EXPECT_THAT(Checks("rdma.vf-rdma", CheckVfRdma, d, facts),
              ElementsAre(Is(Verdict::kFail, "1 of 4 VFs of 0000:af:00.0 have no RDMA device")));
}

TEST(DoctorChecks, GpuDirectModulesWhenNvidiaGpusPresent) {
  HostFacts f = Facts(ExtractedHostTree("cx5-roce"));  // H100 at 0000:18:00.0
  f.loaded_modules = {"mlx5_core", "mlx5_ib", "ib_core", "nvidia"};
  // GDRCopy only: GPUDirect RDMA (nvidia_peermem or dma-buf) is
  // health.gpudirect-rdma's gate, which knows the dma-buf path.
  auto r = Checks("rdma.gpudirect", CheckGpuDirect, f);
  ASSERT_THAT(r, ElementsAre(Is(Verdict::kWarn, "no GDRCopy", "", "gdrdrv")));
  EXPECT_THAT(r[0].evidence[0].second, HasSubstr("0000:18:00.0"));
  f.loaded_modules.push_back("gdrdrv");
  EXPECT_THAT(Checks("rdma.gpudirect", CheckGpuDirect, f), ::testing::Each(Is(Verdict::kOk)));
  // No GPU: nothing to say.
  CheckSink none;
  CheckGpuDirect(Facts(ExtractedHostTree("cx5-ib")), none);
  EXPECT_TRUE(none.results().empty());
}

}  // namespace
}  // namespace provisioner::rdma
