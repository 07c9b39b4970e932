// Fault injection at every write of a multi-module apply. A clean apply of a
// host.yaml that touches every module is run once to count its writes W;
// then for k = 1..W a fresh copy of the host tree is applied with write k
// failing (EBUSY, ENOMEM, EIO, EPERM in turn). Each time apply must fail
// with a message naming the failing path and errno, and the tree must be
// byte-identical to before (rollback is exact, nothing half-applied).
// In process: the engine and every registered module over the simulated
// kernel (test/sim), so that the n-th write can fail.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/core/journal.h"
#include "engine/host/host_lock.h"
#include "engine/module/registry.h"
#include "gtest/gtest.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/files.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/host_yaml.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

// Everything this provisioner can change on the RoCE host, at once.
const std::string kHostYaml = HostYaml(R"(  rdma:
    netnsMode: exclusive
  kernelModules:
    - mlx5_ib
    - name: vfio_pci
      required: false
  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      linkType: eth
      numVfs: 4
      mtu: 9000
      deviceType: vfio-pci
      vfTrust: true
      vfSpoofChk: false
)");

struct Outcome {
  Status status;
  int writes = 0;
  std::set<std::string> modules;  // of the planned changes
};

// Each test at parallelism 1 (plan order, one change at a time) and 4
// (independent PFs and functions at once; then the n-th write is whichever
// comes n-th, and a failure lets the running changes finish before all is
// rolled back).
class FaultMatrixTest : public ::testing::TestWithParam<size_t> {
 protected:
  // `dir` as every apply finds a tree after its first one: with the apply
  // lock file (run/provisioner/lock) that apply creates and keeps.
  static std::string Locked(std::string dir) {
    auto fs = NewLocalHostFs(dir);
    EXPECT_TRUE(AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0)).ok());
    return dir;
  }

  // The bundled tree `name` in a new directory, locked.
  static std::string Extracted(const std::string& name) {
    std::string dir = MakeTempDir("fault-" + name);
    Status s = ExtractTtar(HostTreePath(name), dir);
    EXPECT_TRUE(s.ok()) << s.message();
    return Locked(dir);
  }

  // The cx5-roce tree with vfio_pci loaded already (the tree has no module
  // files to load it from).
  std::string FreshTree() {
    std::string dir = Extracted("cx5-roce");
    Status reg = SriovSim(dir).RegisterDriver("vfio-pci");
    EXPECT_TRUE(reg.ok()) << reg.message();
    return dir;
  }

  // The generated HGX H100 tree with PCIe config files (ACS on, MaxReadReq 512).
  std::string FreshPcieTree() {
    HostSpec spec;
    EXPECT_TRUE(PresetByName("hgx-h100-pcie", &spec));
    std::string dir = MakeTempDir("fault-pcie");
    Status s = BuildHostTree(spec, dir);
    EXPECT_TRUE(s.ok()) << s.message();
    return Locked(dir);
  }

  // The cx5-ib tree (IPoIB netdev ibs5f0, datagram, mtu 2044).
  std::string FreshIbTree() { return Extracted("cx5-ib"); }

  // The bundled cx5-roce-qos tree: mlx5 ECN sysfs, DCB captures.
  std::string FreshRoceTree() { return Extracted("cx5-roce-qos"); }

  // The matrix: the clean apply of `host_yaml` on a `fresh` tree must work,
  // make at least `min_writes` writes and change the tree (else the test
  // proves nothing); then, for each of its writes, an apply on a fresh tree
  // where that write fails once (EBUSY, ENOMEM, EIO, EPERM in turn) must
  // fail naming the errno (as strerror says it) and a host path, and leave
  // the tree as it was, exactly. *clean gets the clean run's outcome.
  void EachWriteFailingRollsBack(const std::function<std::string()>& fresh,
                                 const std::string& host_yaml, int min_writes, Outcome* clean) {
    const std::string pristine = fresh();
    const std::string changed = fresh();
    *clean = Apply(changed, {}, host_yaml);
    ASSERT_TRUE(clean->status.ok()) << clean->status.message();
    ASSERT_GE(clean->writes, min_writes);
    ASSERT_FALSE(DiffTrees(pristine, changed).empty());
    const int errs[] = {EBUSY, ENOMEM, EIO, EPERM};
    for (int k = 1; k <= clean->writes; ++k) {
      SCOPED_TRACE("write " + std::to_string(k) + " of " + std::to_string(clean->writes));
      const int err = errs[k % 4];
      std::string root = fresh();
      Outcome failed =
          Apply(root, {WriteFault{.nth_write = k, .path_substring = "", .err = err, .times = 1}},
                host_yaml);
      ASSERT_FALSE(failed.status.ok()) << "write " << k << " failed but apply succeeded";
      const std::string& msg = failed.status.message();
      EXPECT_NE(msg.find(std::strerror(err)), std::string::npos) << msg;
      EXPECT_NE(msg.find('/'), std::string::npos) << msg;
      EXPECT_EQ(DiffTreesText(pristine, root), "") << msg;
    }
  }

  // Plans against `root` and applies with `faults`, as `provisioner apply` does.
  Outcome Apply(const std::string& root, std::vector<WriteFault> faults,
                const std::string& host_yaml = kHostYaml) {
    LoadResult loaded = LoadDesiredStateFromString(host_yaml, "host.yaml");
    EXPECT_TRUE(loaded.state.has_value());
    SimOptions options;
    options.settle_reads = 1;
    options.faults = std::move(faults);
    auto fs = NewSimulatedHostFs(root, options);
    auto* sim = static_cast<SimulatedHostFs*>(fs.get());
    auto lock = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
    EXPECT_TRUE(lock.ok()) << lock.status().message();
    auto modules = ModuleRegistry::CreateAll();
    HostContext ctx;
    ctx.fs = fs.get();
    ctx.clock = &RealClock();
    ctx.settle_timeout = std::chrono::seconds(10);
    auto facts = Discover(modules, ctx);
    EXPECT_TRUE(facts.ok()) << facts.status().message();
    if (!facts.ok()) return {facts.status(), sim->writes(), {}};
    PlanResult planned = BuildPlan(modules, *loaded.state, *facts);
    for (const auto& d : planned.diagnostics) {
      EXPECT_NE(d.severity, Severity::kError) << d.path << ": " << d.message;
    }
    std::set<std::string> planned_modules;
    for (const auto& c : planned.plan.changes) planned_modules.insert(c.module);
    JournalWriter journal(fs.get());
    ApplyOptions apply_options;
    apply_options.journal = &journal;
    apply_options.parallelism = GetParam();
    ApplyReport report = ApplyPlan(modules, planned.plan, *loaded.state, ctx, apply_options);
    return {report.status, sim->writes(), planned_modules};
  }
};

TEST_P(FaultMatrixTest, EveryWriteFailingLeavesTheTreeAsItWas) {
  Outcome ok;
  EachWriteFailingRollsBack([this] { return FreshTree(); }, kHostYaml, 10, &ok);
  // Every module that changes this host is in the matrix.
  for (const char* m : {"kmod", "rdma", "sriov", "vf", "link"}) {
    EXPECT_EQ(ok.modules.count(m), 1u) << m;
  }
  std::printf("fault matrix: %d writes across %zu modules\n", ok.writes, ok.modules.size());
}

// Issue 36 item 1: the rollback of a count change between two non-zero
// counts (4 -> 8) re-created the 4 VFs with driver defaults (MTU 1500, no
// VLAN, no rate, link state auto, trust off, spoof check on, another MAC)
// and said "rolled back". Every write of the 4 -> 8 apply failing in turn:
// the VFs' settings come back, the capture files under run/provisioner/vf
// byte for byte, and the VF netdevs' MTU.
std::string VfSettingsYaml(int num_vfs) {
  return HostYaml(R"(  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: )") +
         std::to_string(num_vfs) +
         R"(
      mtu: 9000
      vfMtu: 9000
      vfTrust: true
      vfSpoofChk: false
      vfLinkState: enable
      vfRate: { max: 1000 }
      vfVlan: { id: 100, qos: 3 }
      vfMac: derived
)";
}

std::string CopyOf(const std::string& tree) {
  std::string dir = MakeTempDir("fault-copy");
  std::error_code ec;
  std::filesystem::copy(tree, dir,
                        std::filesystem::copy_options::recursive |
                            std::filesystem::copy_options::copy_symlinks |
                            std::filesystem::copy_options::overwrite_existing,
                        ec);
  EXPECT_FALSE(ec) << ec.message();
  return dir;
}

// The VF netdevs' MTU files of PF 0000:af:00.0, by VF index ("0: 9000\n ...").
std::string VfMtus(const std::string& root) {
  std::string out;
  const std::string pf = root + "/sys/bus/pci/devices/0000:af:00.0";
  for (int i = 0; i < 64; ++i) {
    const std::string net = pf + "/virtfn" + std::to_string(i) + "/net";
    std::error_code ec;
    if (!std::filesystem::exists(net, ec)) break;
    for (const auto& e : std::filesystem::directory_iterator(net, ec)) {
      out += std::to_string(i) + ": " + ReadFile(e.path().string() + "/mtu");
    }
  }
  return out;
}

TEST_P(FaultMatrixTest, EveryWriteOfACountChangeFailingRestoresTheVfSettings) {
  if (GetParam() != 1) GTEST_SKIP() << "plan order is enough here: the VFs of one PF";
  const std::string pristine = FreshTree();
  Outcome four = Apply(pristine, {}, VfSettingsYaml(4).c_str());
  ASSERT_TRUE(four.status.ok()) << four.status.message();
  const std::string captures = "/run/provisioner/vf/0000:af:00.0";
  ASSERT_EQ(ReadFile(pristine + captures + "/3/trust"), "1\n");
  ASSERT_EQ(ReadFile(pristine + captures + "/3/vlan"), "100 3 802.1Q\n");
  const std::string mtus = VfMtus(pristine);
  ASSERT_EQ(mtus, "0: 9000\n1: 9000\n2: 9000\n3: 9000\n");

  std::string clean = CopyOf(pristine);
  Outcome ok = Apply(clean, {}, VfSettingsYaml(8).c_str());
  ASSERT_TRUE(ok.status.ok()) << ok.status.message();
  ASSERT_EQ(ReadFile(clean + "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs"), "8\n");
  std::printf("fault matrix, 4 -> 8 VFs with settings: %d writes\n", ok.writes);

  // About 90 writes, each apply a few seconds with its rollback: every
  // write of the count change (the first 5: journal, 0, 8, journal), then
  // one in 8 of the settings' (each setting's writes look alike) and the last.
  std::vector<int> writes = {1, 2, 3, 4, 5};
  for (int k = 6; k < ok.writes; k += 8) writes.push_back(k);
  writes.push_back(ok.writes);
  const int errs[] = {EBUSY, ENOMEM, EIO, EPERM};
  for (size_t w = 0; w < writes.size(); ++w) {
    const int k = writes[w];
    SCOPED_TRACE("write " + std::to_string(k) + " of " + std::to_string(ok.writes));
    const auto started = std::chrono::steady_clock::now();
    std::string root = CopyOf(pristine);
    Outcome failed = Apply(
        root, {WriteFault{.nth_write = k, .path_substring = "", .err = errs[w % 4], .times = 1}},
        VfSettingsYaml(8).c_str());
    ASSERT_FALSE(failed.status.ok()) << "write " << k << " failed but apply succeeded";
    EXPECT_EQ(ReadFile(root + "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs"), "4\n");
    EXPECT_EQ(DiffTreesText(pristine + captures, root + captures), "") << failed.status.message();
    EXPECT_EQ(VfMtus(root), mtus) << failed.status.message();
    std::printf("write %d: %lld ms: %s\n", k,
                static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                           std::chrono::steady_clock::now() - started)
                                           .count()),
                failed.status.message().substr(0, 160).c_str());
  }
}

// ACS Control of the 16 downstream ports between each GPU and its rail NIC
// and MaxReadReq of the 8 rail NICs: 24 config-space writes, each failing once.
const std::string kPcieHostYaml = HgxPcieYaml();

TEST_P(FaultMatrixTest, EveryPcieConfigWriteFailingLeavesTheTreeAsItWas) {
  Outcome ok;
  // At least 24 writes (and the journal's).
  EachWriteFailingRollsBack([this] { return FreshPcieTree(); }, kPcieHostYaml, 24, &ok);
  EXPECT_EQ(ok.modules, std::set<std::string>{"pcie"});
}

// An IPoIB child for a P_Key (create_child, made by the simulated ib_ipoib),
// mtu of the PF's netdev and the child, an address and the child up.
const std::string kIpoibHostYaml = HostYaml(R"(  nics:
    - name: ib-nic
      nicSelector: { pfNames: [ibs5f0] }
      ipoib:
        mode: datagram
        mtu: 4092
        addresses: ["172.31.0.10/16", "fd00:31::10/64"]
        pkeys: ["0x8001"]
)");

TEST_P(FaultMatrixTest, EveryIpoibWriteFailingLeavesTheTreeAsItWas) {
  Outcome ok;
  // At least 5 writes: create_child, 2 mtus, addresses, flags (and the journal's).
  EachWriteFailingRollsBack([this] { return FreshIbTree(); }, kIpoibHostYaml, 5, &ok);
  EXPECT_EQ(ok.modules, std::set<std::string>{"ipoib"});
}

// Trust and PFC of both ports (their DCB capture files under a tree root) and
// ECN (roce_np, roce_rp) of priority 3 on port 0: each write failing once.
const std::string kRoceHostYaml = HostYaml(R"(  nics:
    - name: rail0
      nicSelector: { pfNames: ["ens6f0np0"] }
      roce: { trust: dscp, pfc: [3], ecn: [3] }
    - name: rail1
      nicSelector: { pfNames: ["ens6f1np1"] }
      roce: { trust: dscp, pfc: [3], ecn: [3] }
)");

TEST_P(FaultMatrixTest, EveryRoceWriteFailingLeavesTheTreeAsItWas) {
  Outcome ok;
  // At least 6 writes (and the journal's).
  EachWriteFailingRollsBack([this] { return FreshRoceTree(); }, kRoceHostYaml, 6, &ok);
  EXPECT_EQ(ok.modules, std::set<std::string>{"roce"});
}

// The last ECN write (roce_rp of priority 3) refused: the trust, PFC and
// roce_np changes before it are undone, byte for byte.
TEST_P(FaultMatrixTest, AFailingEcnWriteRollsBackByteIdentically) {
  const std::string pristine = FreshRoceTree();
  std::string root = FreshRoceTree();
  Outcome failed = Apply(
      root, {WriteFault{.nth_write = 0, .path_substring = "ecn/roce_rp/enable/3", .err = EIO, .times = 1}},
      kRoceHostYaml);
  ASSERT_FALSE(failed.status.ok());
  EXPECT_NE(failed.status.message().find("roce/ens6f0np0/ecn.roce_rp.3"), std::string::npos)
      << failed.status.message();
  EXPECT_NE(failed.status.message().find("ecn/roce_rp/enable/3"), std::string::npos)
      << failed.status.message();
  EXPECT_NE(failed.status.message().find(std::strerror(EIO)), std::string::npos);
  EXPECT_EQ(DiffTreesText(pristine, root), "");
}

// Issue 39 items 1-3: the rails of module railnet (addresses over the tree's
// capture, the ARP/reverse-path sysctls under /proc/sys/net/ipv4/conf, a
// table's routes and the rules looking it up, rt_tables.d and sysctl.d), the
// PF's and those of a host-network VF group, over a host that has rails
// already (applied from kRailsBefore): each write of the apply failing once
// puts back every address, route, rule, sysctl and file as it was.
const std::string kRailsBefore = HostYaml(R"(  nics:
    - name: rail1
      nicSelector: { pfNames: ["ens6f0np0"] }
      addresses: ["10.9.9.1/24"]
      routing: { table: 200, gateway: "10.9.9.254" }
      sysctl: { rp_filter: 0 }
)");
const std::string kRailsAfter = HostYaml(R"(  nics:
    - name: rail1
      nicSelector: { pfNames: ["ens6f0np0"] }
      numVfs: 2
      addresses: ["172.16.1.7/24"]
      routing: { table: 200, gateway: "172.16.1.254", routes: ["172.16.0.0/16"] }
      vfGroups:
        - range: "0-1"
          deviceType: netdevice
          addresses: ["172.16.1.71/24", "172.16.1.72/24"]
    - name: rail2
      nicSelector: { pfNames: ["ens6f1np1"] }
      addresses: ["172.16.2.7/24"]
      routing: { table: 102 }
)");
// No rail any more: the module's two files go (issue 39 item 2).
const std::string kNoRails = HostYaml(R"(  nics:
    - name: rail1
      nicSelector: { pfNames: ["ens6f0np0"] }
      linkType: eth
)");

// The cx5-roce tree with the IPv4 conf files of its netdevs (and conf/default,
// which the simulator copies for a new VF netdev) and kRailsBefore applied.
std::string RailsTree(std::string dir) {
  for (const char* n : {"default", "ens6f0np0", "ens6f1np1", "eno1"}) {
    const std::string conf = dir + "/proc/sys/net/ipv4/conf/" + n;
    std::filesystem::create_directories(conf);
    for (const char* k : {"arp_ignore", "arp_announce", "rp_filter", "accept_local"}) {
      std::ofstream(conf + "/" + k) << (std::string(k) == "rp_filter" ? "1\n" : "0\n");
    }
  }
  return dir;
}

std::string Snapshot(const std::string& root) {
  std::string out;
  for (const char* f :
       {"/run/provisioner/rail-addresses", "/run/provisioner/routes", "/run/provisioner/rules",
        "/etc/iproute2/rt_tables.d/provisioner-rails.conf",
        "/etc/sysctl.d/90-provisioner-rails.conf", "/proc/sys/net/ipv4/conf/ens6f0np0/rp_filter",
        "/proc/sys/net/ipv4/conf/ens6f1np1/arp_ignore"}) {
    std::error_code ec;
    out += std::string(f) + ":\n" +
           (std::filesystem::exists(root + f, ec) ? ReadFile(root + f) : std::string("(none)\n"));
  }
  return out;
}

TEST_P(FaultMatrixTest, EveryRailsWriteFailingRestoresAddressesRoutesRulesSysctlsFiles) {
  const std::string pristine = RailsTree(FreshTree());
  Outcome before = Apply(pristine, {}, kRailsBefore);
  ASSERT_TRUE(before.status.ok()) << before.status.message();
  const std::string snapshot = Snapshot(pristine);
  ASSERT_NE(snapshot.find("ens6f0np0 10.9.9.1/24"), std::string::npos) << snapshot;
  ASSERT_NE(snapshot.find("200\trail1"), std::string::npos) << snapshot;

  std::string clean = CopyOf(pristine);
  Outcome ok = Apply(clean, {}, kRailsAfter);
  ASSERT_TRUE(ok.status.ok()) << ok.status.message();
  EXPECT_EQ(ok.modules.count("railnet"), 1u);
  const std::string applied = Snapshot(clean);
  // The VF netdevs got theirs (the simulator's ens6f0v0, v1).
  EXPECT_NE(applied.find("ens6f0v1 172.16.1.72/24"), std::string::npos) << applied;
  EXPECT_NE(applied.find("table 200001 172.16.0.0/16 via 172.16.1.254 dev ens6f0v1"),
            std::string::npos)
      << applied;
  EXPECT_NE(applied.find("pref 1000 from 172.16.1.71 lookup 200000"), std::string::npos);
  EXPECT_NE(applied.find("net.ipv4.conf.ens6f0v0.arp_ignore = 1"), std::string::npos);
  EXPECT_EQ(ReadFile(clean + "/proc/sys/net/ipv4/conf/ens6f0v1/arp_announce"), "2\n");
  std::printf("fault matrix, rails: %d writes\n", ok.writes);
  ASSERT_GE(ok.writes, 20);

  // Every write in plan order; at parallelism 4 (where the order of the
  // PFs' writes varies) every third and the last, to keep the test short.
  const int errs[] = {EBUSY, ENOMEM, EIO, EPERM};
  for (int k = 1; k <= ok.writes; ++k) {
    if (GetParam() != 1 && k % 3 != 1 && k != ok.writes) continue;
    SCOPED_TRACE("write " + std::to_string(k) + " of " + std::to_string(ok.writes));
    std::string root = CopyOf(pristine);
    Outcome failed = Apply(
        root, {WriteFault{.nth_write = k, .path_substring = "", .err = errs[k % 4], .times = 1}},
        kRailsAfter);
    // At parallelism 4 the journal's writes follow the order changes finish
    // in: a run may have fewer writes than the clean one, and no k-th.
    if (GetParam() != 1 && failed.status.ok() && failed.writes < k) continue;
    ASSERT_FALSE(failed.status.ok()) << "write " << k << " failed but apply succeeded";
    const std::string& msg = failed.status.message();
    EXPECT_NE(msg.find(std::strerror(errs[k % 4])), std::string::npos) << msg;
    EXPECT_EQ(Snapshot(root), snapshot) << msg;
    EXPECT_EQ(DiffTreesText(pristine, root), "") << msg;
  }

  // Issue 39 item 2: no rail left, the files go; a failure puts them back.
  std::string removed = CopyOf(pristine);
  Outcome gone = Apply(removed, {}, kNoRails);
  ASSERT_TRUE(gone.status.ok()) << gone.status.message();
  EXPECT_FALSE(std::filesystem::exists(removed + "/etc/sysctl.d/90-provisioner-rails.conf"));
  EXPECT_FALSE(
      std::filesystem::exists(removed + "/etc/iproute2/rt_tables.d/provisioner-rails.conf"));
  for (int k = 1; k <= gone.writes; ++k) {
    SCOPED_TRACE("removal, write " + std::to_string(k) + " of " + std::to_string(gone.writes));
    std::string root = CopyOf(pristine);
    Outcome failed = Apply(
        root, {WriteFault{.nth_write = k, .path_substring = "", .err = EIO, .times = 1}}, kNoRails);
    ASSERT_FALSE(failed.status.ok()) << "write " << k << " failed but apply succeeded";
    EXPECT_EQ(DiffTreesText(pristine, root), "") << failed.status.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Parallelism, FaultMatrixTest, ::testing::Values(size_t{1}, size_t{4}),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           return "parallelism" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace provisioner::testing
