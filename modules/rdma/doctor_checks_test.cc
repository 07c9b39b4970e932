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
using ::testing::HasSubstr;

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

// The checks with the given id.
std::vector<CheckResult> Results(const CheckSink& sink, const std::string& id) {
  std::vector<CheckResult> out;
  for (const auto& r : sink.results()) {
    if (r.id == id) out.push_back(r);
  }
  return out;
}

// Points into the sink (which outlives the pointer in each test).
const CheckResult* Find(const CheckSink& sink, const std::string& id, const std::string& target) {
  for (const auto& r : sink.results()) {
    if (r.id == id && r.target == target) return &r;
  }
  return nullptr;
}

// The one check with the given id (a test failure unless there is exactly one).
CheckResult Only(const CheckSink& sink, const std::string& id) {
  std::vector<CheckResult> r = Results(sink, id);
  EXPECT_EQ(r.size(), 1u) << id;
  return r.empty() ? CheckResult{} : r[0];
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
  CheckSink healthy;
  CheckPortNetdevs(Facts(root), healthy);
  auto ok = Results(healthy, "rdma.port-netdev");
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[0].verdict, Verdict::kOk);

  Sh("rm -rf '" + root + "/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/net' '" + root +
     "/sys/class/net/ens6f0np0'");
  CheckSink sink;
  CheckPortNetdevs(Facts(root), sink);
  const CheckResult* r = Find(sink, "rdma.port-netdev", "mlx5_0 port 1");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->verdict, Verdict::kFail);
  EXPECT_THAT(r->summary, HasSubstr("no netdev in this network namespace"));
  EXPECT_THAT(r->summary, HasSubstr("ibv_modify_qp failed: No such device"));
  EXPECT_FALSE(r->fix.empty());
  EXPECT_EQ(Find(sink, "rdma.port-netdev", "mlx5_1 port 1")->verdict, Verdict::kOk);
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
  // Without address facts, the GID table's own IPv4 entries are used.
  CheckSink plain;
  CheckRoceV2Gids(Facts(root), plain);
  const CheckResult* ok = Find(plain, "rdma.roce-v2-gid", "mlx5_0 port 1 172.81.0.119");
  ASSERT_NE(ok, nullptr);
  EXPECT_EQ(ok->verdict, Verdict::kOk);
  EXPECT_THAT(ok->summary, HasSubstr("NCCL_IB_GID_INDEX=3"));

  WriteAddress(root, "172.81.0.119");
  CheckSink same;
  CheckRoceV2Gids(Facts(root), same);
  EXPECT_EQ(Find(same, "rdma.roce-v2-gid", "mlx5_0 port 1 172.81.0.119")->verdict, Verdict::kOk);
  // ens6f1np1 has no address at all now.
  const CheckResult* none = Find(same, "rdma.roce-v2-gid", "mlx5_1 port 1 ens6f1np1");
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->verdict, Verdict::kWarn);

  // The netdev's address is not in the GID table (e.g. RoCE v1 only, or the
  // address sits on a VLAN on top).
  WriteAddress(root, "172.81.0.120");
  CheckSink missing;
  CheckRoceV2Gids(Facts(root), missing);
  const CheckResult* r = Find(missing, "rdma.roce-v2-gid", "mlx5_0 port 1 172.81.0.120");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->verdict, Verdict::kFail);
  EXPECT_THAT(r->summary, HasSubstr("has no RoCE v2 GID"));
  EXPECT_THAT(r->evidence.back().second, HasSubstr("3=172.81.0.119"));
}

TEST(DoctorChecks, NetnsModeAgainstHostYamlAndPersistentSetting) {
  std::string root = ExtractedHostTree("cx5-roce");
  DesiredState d;
  d.rdma = RdmaSpec{"exclusive", true};
  CheckSink sink;
  CheckNetnsMode(&d, Facts(root), sink);
  auto live = Results(sink, "rdma.netns-mode");
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].verdict, Verdict::kFail);
  EXPECT_THAT(live[0].summary, HasSubstr("is shared, host.yaml wants exclusive"));
  ASSERT_EQ(Results(sink, "rdma.netns-mode-persistent").size(), 1u);

  // No host.yaml: live shared but exclusive after a reboot.
  Write(root + "/etc/modprobe.d/ib_core.conf", "options ib_core netns_mode=0\n");
  CheckSink drift;
  CheckNetnsMode(nullptr, Facts(root), drift);
  auto p = Results(drift, "rdma.netns-mode-persistent");
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].verdict, Verdict::kWarn);
  EXPECT_THAT(p[0].summary, HasSubstr("shared now but exclusive after a reboot"));
  EXPECT_EQ(p[0].evidence.back().first, "/etc/modprobe.d/ib_core.conf");
}

TEST(DoctorChecks, DevFiles) {
  std::string root = ExtractedHostTree("cx5-roce");
  CheckSink no_dev;
  CheckDevFiles(Facts(root), no_dev);
  EXPECT_EQ(Only(no_dev, "rdma.dev-files").verdict, Verdict::kWarn);  // tree without /dev

  Sh("mkdir -p '" + root + "/dev/infiniband' && touch '" + root + "/dev/infiniband/uverbs0'");
  CheckSink partial;
  CheckDevFiles(Facts(root), partial);
  const CheckResult* uv = Find(partial, "rdma.dev-files", "/dev/infiniband/uverbs*");
  ASSERT_NE(uv, nullptr);
  EXPECT_EQ(uv->verdict, Verdict::kFail);
  EXPECT_THAT(uv->summary, HasSubstr("1 uverbs device files for 2 RDMA devices"));
  EXPECT_NE(Find(partial, "rdma.dev-files", "/dev/infiniband/umad*,issm*"), nullptr);
  EXPECT_NE(Find(partial, "rdma.dev-files", "/dev/infiniband/rdma_cm"), nullptr);

  Sh("cd '" + root + "/dev/infiniband' && touch uverbs1 umad0 umad1 issm0 issm1 rdma_cm");
  CheckSink full;
  CheckDevFiles(Facts(root), full);
  auto all = Results(full, "rdma.dev-files");
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].verdict, Verdict::kOk);

  // A /dev with only other entries (hwloc's captures: dev/cpuset) is not a
  // capture of the device files: "not captured", a warning.
  Sh("rm -rf '" + root + "/dev/infiniband' && mkdir -p '" + root + "/dev/cpuset'");
  CheckSink cpuset_only;
  CheckDevFiles(Facts(root), cpuset_only);
  EXPECT_EQ(Results(cpuset_only, "rdma.dev-files")[0].verdict, Verdict::kWarn);
  EXPECT_THAT(Results(cpuset_only, "rdma.dev-files")[0].summary, HasSubstr("not captured"));
  // The device nodes every host has, without /dev/infiniband: a failure.
  Sh("touch '" + root + "/dev/null'");
  CheckSink gone;
  CheckDevFiles(Facts(root), gone);
  EXPECT_EQ(Results(gone, "rdma.dev-files")[0].verdict, Verdict::kFail);
}

TEST(DoctorChecks, InfinibandPortWithoutSubnetManager) {
  std::string root = ExtractedHostTree("cx5-ib");
  CheckSink healthy;
  CheckIbPorts(Facts(root), healthy);
  EXPECT_EQ(Only(healthy, "rdma.ib-port").verdict, Verdict::kOk);

  const std::string port = root + "/sys/class/infiniband/mlx5_0/ports/1";
  Write(port + "/sm_lid", "0x0\n");
  Write(port + "/state", "2: INIT\n");
  CheckSink sink;
  CheckIbPorts(Facts(root), sink);
  auto r = Results(sink, "rdma.ib-port");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, Verdict::kFail);
  EXPECT_THAT(r[0].summary, HasSubstr("no subnet manager (sm_lid 0)"));
  EXPECT_THAT(r[0].fix, HasSubstr("opensm"));

  Write(port + "/sm_lid", "0x1\n");
  Write(port + "/state", "1: DOWN\n");
  Write(port + "/phys_state", "3: Disabled\n");
  CheckSink down;
  CheckIbPorts(Facts(root), down);
  EXPECT_THAT(Results(down, "rdma.ib-port")[0].summary,
              HasSubstr("is DOWN (Disabled), not ACTIVE"));

  // A capture without sm_lid: nothing to say about the SM, the state decides.
  Write(port + "/state", "4: ACTIVE\n");
  Sh("rm '" + port + "/sm_lid'");
  CheckSink partial;
  CheckIbPorts(Facts(root), partial);
  EXPECT_EQ(Results(partial, "rdma.ib-port")[0].verdict, Verdict::kOk);
  EXPECT_THAT(Results(partial, "rdma.ib-port")[0].summary, HasSubstr("sm_lid not readable"));
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
  CheckSink sink;
  CheckDevicePluginSelectors(d, Facts(ExtractedHostTree("cx5-roce")), sink);
  auto r = Results(sink, "rdma.device-plugin");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].verdict, Verdict::kFail);
  EXPECT_THAT(r[0].summary, HasSubstr("resource count is 0"));
  EXPECT_THAT(r[0].fix, HasSubstr("numVfs 4"));
  EXPECT_EQ(r[1].verdict, Verdict::kFail);
  EXPECT_THAT(r[1].fix, HasSubstr("fix the nicSelector"));

  CheckSink with_vfs;
  CheckDevicePluginSelectors(d, Facts(ExtractedHostTree("cx5-roce-vfs")), with_vfs);
  EXPECT_EQ(Results(with_vfs, "rdma.device-plugin")[0].verdict, Verdict::kOk);
  EXPECT_THAT(Results(with_vfs, "rdma.device-plugin")[0].summary, HasSubstr("4 VFs"));
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
  CheckSink sink;
  CheckMultusPkeys(d, facts, sink);
  auto r = Results(sink, "rdma.multus-pkey");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].verdict, Verdict::kFail);
  EXPECT_THAT(r[0].summary, HasSubstr("partition 0x8001 of multusConfig ib-tenant is not in the "
                                      "P_Key table of mlx4_0 port 1"));
  EXPECT_THAT(r[0].fix, HasSubstr("subnet manager"));
  EXPECT_EQ(r[1].verdict, Verdict::kOk);
  // Without the table (not captured): a warning, not a failure.
  facts.rdma.devices[0].ports[0].pkeys.reset();
  CheckSink none;
  CheckMultusPkeys(d, facts, none);
  EXPECT_EQ(Results(none, "rdma.multus-pkey")[0].verdict, Verdict::kWarn);
}

TEST(DoctorChecks, LinkLayerAgainstLinkType) {
  DesiredState d;
  NicSpec n = Nic("n");
  n.link_type = "ib";
  d.nics = {n};
  CheckSink sink;
  CheckLinkLayer(d, Facts(ExtractedHostTree("cx5-roce")), sink);
  auto r = Results(sink, "rdma.link-layer");
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].verdict, Verdict::kFail);
  EXPECT_THAT(r[0].summary, HasSubstr("link layer is Ethernet, nics[n].linkType wants ib"));
  EXPECT_THAT(r[0].fix, HasSubstr("LINK_TYPE_P1=1"));
  CheckSink ib;
  CheckLinkLayer(d, Facts(ExtractedHostTree("cx5-ib")), ib);
  EXPECT_EQ(Results(ib, "rdma.link-layer")[0].verdict, Verdict::kOk);
}

TEST(DoctorChecks, VfsWithoutRdmaDevices) {
  std::string root = ExtractedHostTree("cx5-roce-vfs");
  DesiredState d;
  d.nics = {RdmaVfsNic()};
  CheckSink ok;
  CheckVfRdma(d, Facts(root), ok);
  EXPECT_EQ(Only(ok, "rdma.vf-rdma").verdict, Verdict::kOk);

  // mlx5_ib not bound to the VF at 0000:af:00.3: no RDMA device.
  ASSERT_NO_FATAL_FAILURE(RemoveVfRdmaDevice(root, "0000:af:00.3"));
  CheckSink sink;
  CheckVfRdma(d, Facts(root), sink);
  auto r = Results(sink, "rdma.vf-rdma");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].verdict, Verdict::kFail);
  EXPECT_THAT(r[0].summary, HasSubstr("1 of 4 VFs of 0000:af:00.0 have no RDMA device"));
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
  CheckSink ok;
  CheckVfRdma(d, facts, ok);
  EXPECT_EQ(Only(ok, "rdma.vf-rdma").verdict, Verdict::kOk);
  d.nics[0].vf_groups[0].is_rdma = true;
  CheckSink bad;
  CheckVfRdma(d, facts, bad);
  const CheckResult r = Only(bad, "rdma.vf-rdma");
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.summary, HasSubstr("1 of 4 VFs of 0000:af:00.0 have no RDMA device"));
}

TEST(DoctorChecks, GpuDirectModulesWhenNvidiaGpusPresent) {
  HostFacts f = Facts(ExtractedHostTree("cx5-roce"));  // H100 at 0000:18:00.0
  f.loaded_modules = {"mlx5_core", "mlx5_ib", "ib_core", "nvidia"};
  CheckSink sink;
  CheckGpuDirect(f, sink);
  auto r = Results(sink, "rdma.gpudirect");
  // GDRCopy only: GPUDirect RDMA (nvidia_peermem or dma-buf) is
  // health.gpudirect-rdma's gate, which knows the dma-buf path.
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].target, "gdrdrv");
  EXPECT_EQ(r[0].verdict, Verdict::kWarn);
  EXPECT_THAT(r[0].summary, HasSubstr("no GDRCopy"));
  EXPECT_THAT(r[0].evidence[0].second, HasSubstr("0000:18:00.0"));
  f.loaded_modules.push_back("gdrdrv");
  CheckSink ok;
  CheckGpuDirect(f, ok);
  for (const auto& c : Results(ok, "rdma.gpudirect"))
    EXPECT_EQ(c.verdict, Verdict::kOk) << c.target;
  // No GPU: nothing to say.
  CheckSink none;
  CheckGpuDirect(Facts(ExtractedHostTree("cx5-ib")), none);
  EXPECT_TRUE(none.results().empty());
}

}  // namespace
}  // namespace provisioner::rdma
