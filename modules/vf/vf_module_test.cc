// The vf module with pci and sriov through the engine, against the in-process
// kernel simulator: plan order, apply, verify, convergence, rollback; and the
// live-root (netlink) path with a fake VfNetlink.
#include "modules/vf/vf_module.h"

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "gtest/gtest.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/sriov_module.h"
#include "modules/vf/vf_host.h"
#include "modules/vf/vf_planner.h"
#include "test/sim/engine_on_sim.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/host_yaml.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using testing::ChangeIds;
using testing::LoadSpec;

// What the kernel does with VF netlink settings: keeps them per VF; for IB
// GUIDs mlx5 stores them where the VF's next probe finds them (here: the
// simulator's sriov/<vf> files).
class FakeNetlink final : public VfNetlink {
 public:
  explicit FakeNetlink(HostFs* fs, std::string pf) : fs_(fs), pf_(std::move(pf)) {}
  StatusOr<std::vector<VfLinkState>> ReadVfs(const std::string& netdev) override {
    calls.push_back("read " + netdev);
    std::vector<VfLinkState> out;
    for (auto& [vf, s] : state) out.push_back(s);
    return out;
  }
  Status SetNodeGuid(const std::string& netdev, int vf, uint64_t guid) override {
    calls.push_back("node " + netdev + " " + std::to_string(vf) + " " + FormatGuid(guid));
    state[vf].vf = vf;
    state[vf].node_guid = guid;
    return fs_->WriteAttr(OfedGuidPath(pf_, vf, "node"), FormatGuidBytes(guid));
  }
  Status SetPortGuid(const std::string& netdev, int vf, uint64_t guid) override {
    calls.push_back("port " + netdev + " " + std::to_string(vf) + " " + FormatGuid(guid));
    state[vf].vf = vf;
    state[vf].port_guid = guid;
    return fs_->WriteAttr(OfedGuidPath(pf_, vf, "port"), FormatGuidBytes(guid));
  }
  Status SetTrust(const std::string& netdev, int vf, bool on) override {
    calls.push_back("trust " + netdev + " " + std::to_string(vf) + (on ? " on" : " off"));
    state[vf].vf = vf;
    state[vf].trust = on;
    return OkStatus();
  }
  Status SetSpoofChk(const std::string& netdev, int vf, bool on) override {
    if (refuse_spoofchk) return ErrnoToStatus(EOPNOTSUPP, "netlink spoofchk");
    state[vf].vf = vf;
    state[vf].spoof_chk = on;
    return OkStatus();
  }
  Status SetLinkState(const std::string& netdev, int vf, int s) override {
    calls.push_back("state " + netdev + " " + std::to_string(vf) + " " + VfLinkStateName(s));
    state[vf].vf = vf;
    state[vf].link_state = s;
    return OkStatus();
  }
  Status SetRate(const std::string& netdev, int vf, uint32_t min, uint32_t max) override {
    calls.push_back("rate " + netdev + " " + std::to_string(vf) + " " + std::to_string(min) + " " +
                    std::to_string(max));
    state[vf].vf = vf;
    state[vf].min_tx_rate = min;
    state[vf].max_tx_rate = max;
    return OkStatus();
  }
  Status SetVlan(const std::string& netdev, int vf, uint32_t id, uint32_t qos,
                 uint16_t proto) override {
    calls.push_back("vlan " + netdev + " " + std::to_string(vf) + " " + std::to_string(id) + " " +
                    std::to_string(qos) + " " + VfVlanProtoName(proto));
    state[vf].vf = vf;
    state[vf].vlan = id;
    state[vf].vlan_qos = qos;
    state[vf].vlan_proto = proto;
    return OkStatus();
  }
  Status SetMac(const std::string& netdev, int vf, const std::string& mac) override {
    calls.push_back("mac " + netdev + " " + std::to_string(vf) + " " + mac);
    state[vf].vf = vf;
    state[vf].mac = mac;
    // The kernel's table, as the simulator reads it when the VF binds.
    if (fs_ == nullptr) return OkStatus();
    return fs_->WriteFileAtomic(VfStateCapturePath(pf_, vf, "mac"), mac + "\n", 0644);
  }
  std::vector<std::string> calls;
  std::map<int, VfLinkState> state;
  bool refuse_spoofchk = false;

 private:
  HostFs* fs_;
  std::string pf_;
};

class VfModuleTest : public testing::EngineOnSimTest {
 protected:
  void Build(const testing::HostSpec& spec, VfModuleOptions vf_options = {}) {
    testing::SimOptions o;
    o.settle_reads = 3;
    BuildSim(spec, "vf", o);
    if (!vf_options.use_netlink) vf_options.use_netlink = false;
    modules_.clear();
    modules_.push_back(std::make_unique<PciModule>());
    modules_.push_back(std::make_unique<SriovModule>());
    modules_.push_back(std::make_unique<VfModule>(std::move(vf_options)));
  }

  std::string Link(const std::string& path) {
    auto b = fs_->LinkBasename(path);
    return b.ok() ? *b : "";
  }

  // Builds the host with the vf module on netlink (the live-root path), the
  // FakeNetlink writing through fs_ when `through_fs` (nl_ once planned).
  void BuildOnNetlink(const testing::HostSpec& spec, const std::string& pf, bool through_fs) {
    VfModuleOptions o;
    o.use_netlink = true;
    o.netlink_factory = [this, pf, through_fs]() {
      auto f = std::make_unique<FakeNetlink>(through_fs ? fs_.get() : nullptr, pf);
      nl_ = f.get();
      return f;
    };
    Build(spec, std::move(o));
  }

  // The netlink calls made so far that start with `prefix`.
  std::vector<std::string> NetlinkCalls(const std::string& prefix) {
    std::vector<std::string> out;
    if (nl_ == nullptr) return out;
    for (const auto& c : nl_->calls) {
      if (c.rfind(prefix, 0) == 0) out.push_back(c);
    }
    return out;
  }

  FakeNetlink* nl_ = nullptr;
};

// The spec of nic pf0 (0000:af:00.0) with `num_vfs` VFs and `extra` lines of
// its own (each "      key: value\n").
std::string Pf0(int num_vfs, const std::string& extra = "") {
  return "  nics:\n" + testing::PfNic("pf0", "0000:af:00.0", num_vfs, extra);
}

const std::string kRoceNic = Pf0(8,
                                 "      deviceType: vfio-pci\n"
                                 "      vfTrust: true\n"
                                 "      vfSpoofChk: false\n");

TEST_F(VfModuleTest, VfioBindingTrustSpoofCheckInOrderThenConverged) {
  Build(testing::Cx5RoceHost());
  ASSERT_TRUE(sim_->sim().RegisterDriver("vfio-pci").ok());  // vfio_pci loaded
  DesiredState d = LoadSpec(kRoceNic);
  PlanResult p = PlanNow(d);
  EXPECT_TRUE(p.diagnostics.empty());
  EXPECT_EQ(ChangeIds(p.plan),
            (std::vector<std::string>{"sriov/0000:af:00.0/numVfs", "vf/0000:af:00.0/trust",
                                      "vf/0000:af:00.0/spoofChk", "vf/0000:af:00.0/driver"}));
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);  // checks convergence too
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto vfs = ResolveVfs(*fs_, "0000:af:00.0");
  ASSERT_TRUE(vfs.ok());
  ASSERT_EQ(vfs->size(), 8u);
  for (size_t i = 0; i < vfs->size(); ++i) {
    const std::string dev = "/sys/bus/pci/devices/" + (*vfs)[i];
    EXPECT_EQ(Link(dev + "/driver"), "vfio-pci") << (*vfs)[i];
    EXPECT_EQ(*fs_->ReadAttr(dev + "/driver_override"), "vfio-pci");
    EXPECT_TRUE(fs_->Exists("/dev/vfio/" + Link(dev + "/iommu_group")));
    EXPECT_FALSE(fs_->Exists(dev + "/net"));
    EXPECT_EQ(*fs_->ReadAttr(VfStateCapturePath("0000:af:00.0", static_cast<int>(i), "trust")),
              "1");
    EXPECT_EQ(*fs_->ReadAttr(VfStateCapturePath("0000:af:00.0", static_cast<int>(i), "spoofchk")),
              "0");
  }
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());

  // netdevice: back to mlx5_core, override cleared, netdevs back.
  d.nics[0].device_type = "netdevice";
  p = PlanNow(d);
  ASSERT_EQ(ChangeIds(p.plan), std::vector<std::string>{"vf/0000:af:00.0/driver"});
  EXPECT_EQ(p.plan.changes[0].after, "mlx5_core");
  EXPECT_EQ(p.plan.changes[0].before.size(), 8u);
  r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  for (const std::string& vf : *vfs) {
    const std::string dev = "/sys/bus/pci/devices/" + vf;
    EXPECT_EQ(Link(dev + "/driver"), "mlx5_core");
    EXPECT_EQ(*fs_->ReadAttr(dev + "/driver_override"), "(null)");
    EXPECT_TRUE(fs_->IsDir(dev + "/net"));
  }
  EXPECT_FALSE(fs_->Exists("/dev/vfio"));
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
}

TEST_F(VfModuleTest, VfioNotRegisteredFailsAndRollsBack) {
  Build(testing::Cx5RoceHost());
  DesiredState d = LoadSpec(Pf0(2, "      deviceType: vfio-pci\n"));
  PlanResult p = PlanNow(d);
  ASSERT_EQ(p.plan.changes.size(), 2u);
  ASSERT_EQ(p.plan.warnings.size(), 1u);  // vfio_pci not loaded nor listed
  ApplyReport r = ApplyFailingRollsBack(p.plan, d, "driver vfio-pci is not registered");
  EXPECT_NE(r.status.message().find("spec.kernelModules"), std::string::npos);
  // Rolled back: the binding undone, then numVfs back to 0.
  EXPECT_EQ(r.rolled_back.size(), 2u);
  EXPECT_EQ(*fs_->ReadAttr("/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs"), "0");
}

TEST_F(VfModuleTest, RollbackRestoresTheDrivers) {
  Build(testing::Cx5RoceHost());
  ASSERT_TRUE(sim_->sim().RegisterDriver("vfio-pci").ok());
  DesiredState d = LoadSpec(Pf0(2));
  ASSERT_TRUE(ApplyPlan(modules_, PlanNow(d).plan, d, ctx_).status.ok());
  d.nics[0].device_type = "vfio-pci";
  d.nics[0].vf_trust = true;
  PlanResult p = PlanNow(d);
  ASSERT_EQ(p.plan.changes.size(), 2u);
  // The second VF fails half-way (after its unbind): both changes are undone,
  // VF 0 comes back from vfio-pci, VF 1 is bound again.
  sim_->AddFault({0, "0000:af:00.3/driver_override", EIO, -1});
  ApplyFailingRollsBack(p.plan, d, "EIO");
  auto vfs = ResolveVfs(*fs_, "0000:af:00.0");
  ASSERT_TRUE(vfs.ok());
  for (const std::string& vf : *vfs) {
    EXPECT_EQ(Link("/sys/bus/pci/devices/" + vf + "/driver"), "mlx5_core");
    EXPECT_EQ(*fs_->ReadAttr("/sys/bus/pci/devices/" + vf + "/driver_override"), "(null)");
  }
}

// Issue 28 item 3: vfGroups split one PF's VFs between drivers by index;
// the kernel simulator reacts to driver_override/unbind/bind as the kernel
// does. VFs in no group (and no nic deviceType) are left where they are, by
// apply, verify and rollback alike.
TEST_F(VfModuleTest, VfGroupsBindEachRangeAndLeaveTheRest) {
  Build(testing::Cx5RoceHost());
  ASSERT_TRUE(sim_->sim().RegisterDriver("vfio-pci").ok());
  DesiredState d =
      LoadSpec(Pf0(8,
                   "      vfGroups:\n"
                   "        - { range: \"0-3\", deviceType: netdevice, resourceName: pods }\n"
                   "        - { range: \"4-7\", deviceType: vfio-pci, resourceName: vms }\n"));
  PlanResult p = PlanNow(d);
  EXPECT_TRUE(p.diagnostics.empty());
  ASSERT_EQ(ChangeIds(p.plan),
            (std::vector<std::string>{"sriov/0000:af:00.0/numVfs", "vf/0000:af:00.0/driver"}));
  const Change& bind = p.plan.changes[1];
  EXPECT_EQ(bind.field_path, "spec.nics[0].vfGroups[1].deviceType");  // the VFs that move
  EXPECT_EQ(bind.reason,
            "nic pf0 wants VFs 0-3 on mlx5_core (netdevice), 4-7 on vfio-pci (vfio-pci)");
  EXPECT_EQ(bind.after, nlohmann::json({"mlx5_core", "mlx5_core", "mlx5_core", "mlx5_core",
                                        "vfio-pci", "vfio-pci", "vfio-pci", "vfio-pci"}));
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);  // verifies too
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto vfs = ResolveVfs(*fs_, "0000:af:00.0");
  ASSERT_TRUE(vfs.ok());
  ASSERT_EQ(vfs->size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const std::string dev = "/sys/bus/pci/devices/" + (*vfs)[i];
    const bool vfio = i >= 4;
    EXPECT_EQ(Link(dev + "/driver"), vfio ? "vfio-pci" : "mlx5_core") << i;
    EXPECT_EQ(*fs_->ReadAttr(dev + "/driver_override"), vfio ? "vfio-pci" : "(null)") << i;
    EXPECT_EQ(fs_->IsDir(dev + "/net"), !vfio) << i;
  }
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());

  // Only 4-7 named: VFs 0-3 are no group's and nobody's; nothing to do.
  d.nics[0].vf_groups.erase(d.nics[0].vf_groups.begin());
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());

  // 4-5 back to netdevice, 6-7 stay: one change managing VFs 4 and 5.
  d.nics[0].vf_groups[0].range = "4-5";
  d.nics[0].vf_groups[0].last = 5;
  d.nics[0].vf_groups[0].device_type = "netdevice";
  p = PlanNow(d);
  ASSERT_EQ(ChangeIds(p.plan), std::vector<std::string>{"vf/0000:af:00.0/driver"});
  EXPECT_EQ(p.plan.changes[0].detail["vfIndexes"], nlohmann::json({4, 5}));
  // VF 5 fails after its unbind: VF 4 goes back to vfio-pci, 5 is bound
  // again, 0-3 and 6-7 are untouched.
  sim_->AddFault({0, (*vfs)[5] + "/driver_override", EIO, 1});
  r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_FALSE(r.status.ok());
  ASSERT_EQ(r.rolled_back.size(), 1u);
  EXPECT_TRUE(r.rolled_back[0].status.ok()) << r.rolled_back[0].status.message();
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(Link("/sys/bus/pci/devices/" + (*vfs)[i] + "/driver"),
              i >= 4 ? "vfio-pci" : "mlx5_core")
        << i;
  }
  r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(Link("/sys/bus/pci/devices/" + (*vfs)[i] + "/driver"),
              i >= 6 ? "vfio-pci" : "mlx5_core")
        << i;
  }
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
}

// Every write of a VF apply failing in turn (EBUSY, EIO, ...): apply fails
// naming the errno, and the rollback leaves the tree exactly as it was.
TEST_F(VfModuleTest, EveryFailingWriteIsRolledBackExactly) {
  const std::string yaml = Pf0(2,
                               "      deviceType: vfio-pci\n"
                               "      vfTrust: true\n");
  auto fresh = [&](std::vector<testing::WriteFault> faults) {
    Build(testing::Cx5RoceHost());
    EXPECT_TRUE(sim_->sim().RegisterDriver("vfio-pci").ok());
    for (auto& f : faults) sim_->AddFault(f);
  };
  fresh({});
  const std::string pristine = testing::MakeTempDir("pristine");
  ASSERT_TRUE(testing::BuildHostTree(testing::Cx5RoceHost(), pristine).ok());
  ASSERT_TRUE(testing::SriovSim(pristine).RegisterDriver("vfio-pci").ok());
  DesiredState d = LoadSpec(yaml);
  const int before = sim_->writes();
  ApplyReport clean = ApplyPlan(modules_, PlanNow(d).plan, d, ctx_);
  ASSERT_TRUE(clean.status.ok()) << clean.status.message();
  const int writes = sim_->writes() - before;
  ASSERT_GE(writes, 8);  // numVfs, 2 trust files, 2 x (unbind, override, bind)
  const int errs[] = {EBUSY, ENOMEM, EIO, EPERM};
  for (int k = 1; k <= writes; ++k) {
    SCOPED_TRACE("write " + std::to_string(k) + " of " + std::to_string(writes));
    fresh({testing::WriteFault{k, "", errs[k % 4], 1}});
    ApplyReport r = ApplyFailingRollsBack(PlanNow(d).plan, d, ErrnoName(errs[k % 4]));
    EXPECT_EQ(testing::DiffTreesText(pristine, root_), "") << r.status.message();
  }
}

constexpr char kIbNic[] = R"(  nics:
    - name: ib
      nicSelector: { rootDevices: ["0000:86:00.0"] }
      numVfs: 4
      resourceName: ibsriov
  multusConfigs:
    - name: ib-sriov
      cniType: ib-sriov
      nic: ib
)";

TEST_F(VfModuleTest, IbSriovGuidsThroughTheSriovFilesAndARebind) {
  Build(testing::Cx5IbHost());
  DesiredState d = LoadSpec(kIbNic);
  PlanResult p = PlanNow(d);
  ASSERT_EQ(ChangeIds(p.plan),
            (std::vector<std::string>{"sriov/0000:86:00.0/numVfs", "vf/0000:86:00.0/ibGuids"}));
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  auto vfs = ResolveVfs(*fs_, "0000:86:00.0");
  ASSERT_TRUE(vfs.ok());
  ASSERT_EQ(vfs->size(), 4u);
  const uint64_t pf = *ParseGuid("ec0d:9a03:008a:bcde");
  for (size_t i = 0; i < 4; ++i) {
    const std::string dev = "/sys/bus/pci/devices/" + (*vfs)[i];
    auto ib = fs_->ListDir(dev + "/infiniband");
    ASSERT_TRUE(ib.ok() && ib->size() == 1u);
    const std::string want = FormatGuid(DeriveVfGuid(pf, static_cast<int>(i)));
    EXPECT_EQ(*fs_->ReadAttr(dev + "/infiniband/" + (*ib)[0] + "/node_guid"), want);
    EXPECT_EQ(fs_->ReadAttr(dev + "/infiniband/" + (*ib)[0] + "/ports/1/gids/0")->substr(20), want);
  }
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
}

TEST_F(VfModuleTest, IbGuidsThenVfioBindingConverge) {
  Build(testing::Cx5IbHost());
  ASSERT_TRUE(sim_->sim().RegisterDriver("vfio-pci").ok());
  DesiredState d = LoadSpec(kIbNic);
  d.nics[0].device_type = "vfio-pci";
  PlanResult p = PlanNow(d);
  ASSERT_EQ(ChangeIds(p.plan),
            (std::vector<std::string>{"sriov/0000:86:00.0/numVfs", "vf/0000:86:00.0/ibGuids",
                                      "vf/0000:86:00.0/driver"}));
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  // On vfio-pci there is no RDMA device: the GUIDs read back from sriov/<vf>.
  auto facts = Discover(modules_, ctx_);
  ASSERT_TRUE(facts.ok());
  const PciFunction* pf = facts->FindPci("0000:86:00.0");
  ASSERT_NE(pf, nullptr);
  ASSERT_EQ(pf->sriov->vfs.size(), 4u);
  EXPECT_EQ(pf->sriov->vfs[3].driver, "vfio-pci");
  EXPECT_TRUE(pf->sriov->vfs[3].rdma_devices.empty());
  EXPECT_EQ(pf->sriov->vfs[3].ib_node_guid, "ee0d:9a00:048a:bcde");
  EXPECT_EQ(pf->sriov->vfs[3].driver_override, "vfio-pci");
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
}

TEST_F(VfModuleTest, LiveRootPathUsesNetlinkTwoGuidMessagesThenRebinds) {
  BuildOnNetlink(testing::Cx5IbHost(), "0000:86:00.0", /*through_fs=*/true);
  DesiredState d = LoadSpec(R"(  nics:
    - name: ib
      nicSelector: { rootDevices: ["0000:86:00.0"] }
      numVfs: 2
      vfTrust: true
      resourceName: ibsriov
  multusConfigs:
    - name: ib-sriov
      cniType: ib-sriov
      nic: ib
)");
  PlanResult p = PlanNow(d);
  ASSERT_EQ(ChangeIds(p.plan),
            (std::vector<std::string>{"sriov/0000:86:00.0/numVfs", "vf/0000:86:00.0/ibGuids",
                                      "vf/0000:86:00.0/trust"}));
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_NE(nl_, nullptr);
  std::vector<std::string> sets;
  for (const auto& c : nl_->calls) {
    if (c.rfind("read", 0) != 0) sets.push_back(c);
  }
  EXPECT_EQ(sets, (std::vector<std::string>{
                      "node ibs5f0 0 ee0d:9a00:018a:bcde", "port ibs5f0 0 ee0d:9a00:018a:bcde",
                      "node ibs5f0 1 ee0d:9a00:028a:bcde", "port ibs5f0 1 ee0d:9a00:028a:bcde",
                      "trust ibs5f0 0 on", "trust ibs5f0 1 on"}));
  // The rebind made the driver take them: the RDMA devices show them.
  auto vfs = ResolveVfs(*fs_, "0000:86:00.0");
  ASSERT_TRUE(vfs.ok());
  auto ib = fs_->ListDir("/sys/bus/pci/devices/" + (*vfs)[1] + "/infiniband");
  ASSERT_TRUE(ib.ok() && ib->size() == 1u);
  EXPECT_EQ(*fs_->ReadAttr("/sys/bus/pci/devices/" + (*vfs)[1] + "/infiniband/" + (*ib)[0] +
                           "/node_guid"),
            "ee0d:9a00:028a:bcde");
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());

  // A netlink refusal is the apply's error, with the errno.
  d.nics[0].vf_spoof_chk = true;
  nl_->refuse_spoofchk = true;
  p = PlanNow(d);
  ASSERT_EQ(ChangeIds(p.plan), std::vector<std::string>{"vf/0000:86:00.0/spoofChk"});
  r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("EOPNOTSUPP"), std::string::npos) << r.status.message();
}

// The netdev MAC and the RDMA node GUID of each VF of `pf` (0000:af:00.0).
struct VfSeen {
  std::string netdev_mac;
  std::string node_guid;
};

// vfMac: keep under a tree root with the kernel simulator: each VF's netdev
// MAC goes into the PF's table (capture file `mac`) and the VF is rebound,
// so its RoCE device gets the node GUID mlx5 derives from the admin MAC;
// converged. Then derived: a failed VF 1 puts VF 0's table MAC back and
// rebinds it (its netdev has the kept MAC again); applied whole, every
// netdev has the derived MAC.
TEST_F(VfModuleTest, MacKeepThenDerivedAppliedVerifiedAndRolledBack) {
  Build(testing::Cx5RoceHost());
  DesiredState d = LoadSpec(Pf0(2, "      vfMac: keep\n"));
  auto seen = [&]() {
    std::vector<VfSeen> out;
    auto vfs = ResolveVfs(*fs_, "0000:af:00.0");
    EXPECT_TRUE(vfs.ok());
    for (const std::string& vf : vfs.value_or(std::vector<std::string>())) {
      const std::string dev = "/sys/bus/pci/devices/" + vf;
      VfSeen v;
      for (const std::string& n : fs_->ListDir(dev + "/net").value_or(std::vector<std::string>())) {
        v.netdev_mac = fs_->ReadAttr(dev + "/net/" + n + "/address").value_or("");
      }
      for (const std::string& r :
           fs_->ListDir(dev + "/infiniband").value_or(std::vector<std::string>())) {
        v.node_guid = fs_->ReadAttr(dev + "/infiniband/" + r + "/node_guid").value_or("");
      }
      out.push_back(v);
    }
    return out;
  };
  PlanResult p = PlanNow(d);
  EXPECT_EQ(ChangeIds(p.plan),
            (std::vector<std::string>{"sriov/0000:af:00.0/numVfs", "vf/0000:af:00.0/mac"}));
  ASSERT_TRUE(ApplyPlan(modules_, p.plan, d, ctx_).status.ok());
  std::vector<VfSeen> kept = seen();
  ASSERT_EQ(kept.size(), 2u);
  for (int i = 0; i < 2; ++i) {
    const VfSeen& v = kept[static_cast<size_t>(i)];
    ASSERT_EQ(v.netdev_mac.size(), 17u) << i;
    EXPECT_EQ(*fs_->ReadAttr(VfStateCapturePath("0000:af:00.0", i, "mac")), v.netdev_mac);
    // mlx5: node GUID = MAC[0..2] ff:fe MAC[3..5], as set by the admin MAC.
    const std::string& m = v.netdev_mac;
    EXPECT_EQ(v.node_guid, m.substr(0, 2) + m.substr(3, 2) + ":" + m.substr(6, 2) + "ff:fe" +
                               m.substr(9, 2) + ":" + m.substr(12, 2) + m.substr(15, 2));
  }
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());

  d.nics[0].vf_mac = "derived";
  p = PlanNow(d);
  ASSERT_EQ(p.plan.changes.size(), 1u);
  const Change& c = p.plan.changes[0];
  EXPECT_EQ(c.before, (nlohmann::json{kept[0].netdev_mac, kept[1].netdev_mac}));
  EXPECT_EQ(c.after["mode"], "derived");
  const std::vector<std::string> derived = {DeriveVfMac("0c:42:a1:5b:7c:2e", 0),
                                            DeriveVfMac("0c:42:a1:5b:7c:2e", 1)};
  EXPECT_EQ(c.after["macs"], (nlohmann::json{derived[0], derived[1]}));
  sim_->AddFault({0, "0000:af:00.0/1/mac", EIO, 1});
  EXPECT_EQ(ApplyFailingRollsBack(p.plan, d, "VF 1 (0000:af:00.3)").rolled_back.size(), 1u);
  EXPECT_EQ(*fs_->ReadAttr(VfStateCapturePath("0000:af:00.0", 0, "mac")), kept[0].netdev_mac);
  EXPECT_EQ(seen()[0].netdev_mac, kept[0].netdev_mac);  // rebound to the kept MAC
  EXPECT_EQ(seen()[0].node_guid, kept[0].node_guid);

  p = PlanNow(d);
  ASSERT_TRUE(ApplyPlan(modules_, p.plan, d, ctx_).status.ok());
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(seen()[static_cast<size_t>(i)].netdev_mac, derived[static_cast<size_t>(i)]);
  }
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
}

// The inverse back to a zero table MAC (VFs as mlx5 made them) sets zero and
// does not rebind: the netdev keeps the MAC it had before.
TEST_F(VfModuleTest, MacRollbackToZeroLeavesTheNetdev) {
  Build(testing::Cx5RoceHost());
  DesiredState d = LoadSpec(Pf0(2));
  ASSERT_TRUE(ApplyPlan(modules_, PlanNow(d).plan, d, ctx_).status.ok());
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(fs_->WriteFileAtomic(VfStateCapturePath("0000:af:00.0", i, "mac"),
                                     "00:00:00:00:00:00\n", 0644)
                    .ok());
  }
  d.nics[0].vf_mac = "keep";
  PlanResult p = PlanNow(d);
  ASSERT_EQ(p.plan.changes.size(), 1u);
  EXPECT_EQ(p.plan.changes[0].before, (nlohmann::json{"00:00:00:00:00:00", "00:00:00:00:00:00"}));
  const std::string vf0 = "/sys/bus/pci/devices/" + ResolveVfs(*fs_, "0000:af:00.0")->at(0);
  const std::string netdev0 = fs_->ListDir(vf0 + "/net")->at(0);
  const std::string before = *fs_->ReadAttr(vf0 + "/net/" + netdev0 + "/address");
  ASSERT_TRUE(ApplyPlan(modules_, p.plan, d, ctx_).status.ok());
  Change inverse = InverseChange(p.plan.changes[0]);
  ASSERT_TRUE(modules_[2]->Apply(inverse, ctx_).ok());
  ASSERT_TRUE(modules_[2]->Verify(inverse, ctx_).ok());
  EXPECT_EQ(*fs_->ReadAttr(VfStateCapturePath("0000:af:00.0", 0, "mac")), "00:00:00:00:00:00");
  EXPECT_EQ(*fs_->ReadAttr(vf0 + "/net/" + fs_->ListDir(vf0 + "/net")->at(0) + "/address"), before);
}

// keep on VFs bound to vfio-pci by the same plan: the MAC is copied while the
// VFs are on mlx5_core (settings come before binding, as the operator copies
// it before it binds the DPDK driver), then vfio-pci; converged after.
TEST_F(VfModuleTest, MacKeepBeforeVfioBinding) {
  Build(testing::Cx5RoceHost());
  ASSERT_TRUE(sim_->sim().RegisterDriver("vfio-pci").ok());  // vfio_pci loaded
  DesiredState d = LoadSpec(Pf0(2,
                                "      deviceType: vfio-pci\n"
                                "      vfMac: keep\n"));
  PlanResult p = PlanNow(d);
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  for (int i = 0; i < 2; ++i) {
    auto m = fs_->ReadAttr(VfStateCapturePath("0000:af:00.0", i, "mac"));
    ASSERT_TRUE(m.ok());
    EXPECT_NE(*m, "00:00:00:00:00:00");
  }
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
}

// A per-VF setting under a tree root: the capture file (as `snapshot` writes
// it from the live netlink answer) after numVfs; converged; then changed,
// and a failure on VF 1 puts VF 0's value back.
struct TreeSettingCase {
  std::string name;
  std::string nic_line;  // the setting in pf0's spec
  std::string change;    // vf/0000:af:00.0/<change>
  std::string capture;   // the capture file under <pf>/<vf>/
  std::string applied;   // its content once applied
  std::function<void(NicSpec&)> set_next;
  nlohmann::json next_before;  // the next change's before and after
  nlohmann::json next_after;   // (null: not checked)
};

void PrintTo(const TreeSettingCase& c, std::ostream* os) { *os << c.name; }

class VfTreeSettingTest : public VfModuleTest,
                          public ::testing::WithParamInterface<TreeSettingCase> {};

TEST_P(VfTreeSettingTest, AppliedVerifiedAndRolledBack) {
  const TreeSettingCase& tc = GetParam();
  Build(testing::Cx5RoceHost());
  DesiredState d = LoadSpec(Pf0(2, "      " + tc.nic_line + "\n"));
  PlanResult p = PlanNow(d);
  EXPECT_EQ(ChangeIds(p.plan), (std::vector<std::string>{"sriov/0000:af:00.0/numVfs",
                                                         "vf/0000:af:00.0/" + tc.change}));
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);  // checks convergence too
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(*fs_->ReadAttr(VfStateCapturePath("0000:af:00.0", i, tc.capture)), tc.applied);
  }
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());

  tc.set_next(d.nics[0]);
  p = PlanNow(d);
  ASSERT_EQ(p.plan.changes.size(), 1u);
  EXPECT_EQ(p.plan.changes[0].before, tc.next_before);
  if (!tc.next_after.is_null()) {
    EXPECT_EQ(p.plan.changes[0].after, tc.next_after);
  }
  sim_->AddFault({0, "0000:af:00.0/1/" + tc.capture, EIO, -1});
  EXPECT_EQ(ApplyFailingRollsBack(p.plan, d, "VF 1 (0000:af:00.3)").rolled_back.size(), 1u);
  EXPECT_EQ(*fs_->ReadAttr(VfStateCapturePath("0000:af:00.0", 0, tc.capture)), tc.applied);
}

// vfVlan: capture "<id> <qos> <proto>"; the inverse sets the VLAN the VFs had.
// vfRate: capture "<min> <max>".
const nlohmann::json kVlan100{{"id", 100}, {"qos", 3}, {"proto", "802.1Q"}};
const nlohmann::json kRate10000{{"max", 10000}, {"min", 0}};
INSTANTIATE_TEST_SUITE_P(
    Settings, VfTreeSettingTest,
    ::testing::Values(TreeSettingCase{"LinkState", "vfLinkState: enable", "linkState", "link_state",
                                      "enable", [](NicSpec& n) { n.vf_link_state = "disable"; },
                                      nlohmann::json{"enable", "enable"}, nullptr},
                      TreeSettingCase{"Vlan", "vfVlan: { id: 100, qos: 3 }", "vlan", "vlan",
                                      "100 3 802.1Q",
                                      [](NicSpec& n) {
                                        n.vf_vlan = VfVlanSpec{200, 0, "802.1Q"};
                                      },
                                      nlohmann::json{kVlan100, kVlan100},
                                      nlohmann::json{{"id", 200}, {"qos", 0}, {"proto", "802.1Q"}}},
                      TreeSettingCase{"Rate", "vfRate: { max: 10000 }", "rate", "rate", "0 10000",
                                      [](NicSpec& n) {
                                        n.vf_rate = VfRateSpec{1000, 25000};
                                      },
                                      nlohmann::json{kRate10000, kRate10000},
                                      nlohmann::json{{"max", 25000}, {"min", 1000}}}),
    [](const ::testing::TestParamInfo<TreeSettingCase>& i) { return i.param.name; });

// The live-root path: one netlink message per VF on the PF netdev.
struct NetlinkSettingCase {
  std::string name;
  std::string nic_line;  // the setting in pf0's spec
  bool through_fs;       // the fake writes the kernel's table (vfMac)
  std::string call;      // the FakeNetlink calls' prefix
  std::vector<std::string> want;
};

void PrintTo(const NetlinkSettingCase& c, std::ostream* os) { *os << c.name; }

class VfNetlinkSettingTest : public VfModuleTest,
                             public ::testing::WithParamInterface<NetlinkSettingCase> {};

TEST_P(VfNetlinkSettingTest, OneMessagePerVfOnThePfNetdev) {
  const NetlinkSettingCase& tc = GetParam();
  BuildOnNetlink(testing::Cx5RoceHost(), "0000:af:00.0", tc.through_fs);
  DesiredState d = LoadSpec(Pf0(2, "      " + tc.nic_line + "\n"));
  ApplyReport r = ApplyPlan(modules_, PlanNow(d).plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_NE(nl_, nullptr);
  EXPECT_EQ(NetlinkCalls(tc.call), tc.want);
}

// IFLA_VF_LINK_STATE; the VLAN with the protocol asked (802.1Q: mlx5 refuses
// 802.1ad, and so does the plan); IFLA_VF_MAC, the MAC its netdev has.
INSTANTIATE_TEST_SUITE_P(
    Settings, VfNetlinkSettingTest,
    ::testing::Values(NetlinkSettingCase{"LinkState",
                                         "vfLinkState: auto",
                                         false,
                                         "state ",
                                         {"state ens6f0np0 0 auto", "state ens6f0np0 1 auto"}},
                      NetlinkSettingCase{
                          "Vlan",
                          "vfVlan: { id: 42, qos: 5, proto: 802.1Q }",
                          false,
                          "vlan ",
                          {"vlan ens6f0np0 0 42 5 802.1Q", "vlan ens6f0np0 1 42 5 802.1Q"}},
                      NetlinkSettingCase{"Mac",
                                         "vfMac: derived",
                                         true,
                                         "mac ",
                                         {"mac ens6f0np0 0 0a:1d:87:23:60:8d",
                                          "mac ens6f0np0 1 96:be:3e:76:a4:4b"}}),
    [](const ::testing::TestParamInfo<NetlinkSettingCase>& i) { return i.param.name; });

}  // namespace
}  // namespace provisioner
