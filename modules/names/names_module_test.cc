// The names module through the engine, with every registered module, on
// examples/rails.yaml (spec.rails with names: { netdev: "rail{n}", rdma:
// "mlx5_rail{n}" }) against the HGX H100 tree under the in-process kernel
// simulator (renames answered as the kernel does, test/sim/rename_sim.h):
// plan order, apply, verify, convergence, and rollback when a rename fails.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/module/registry.h"
#include "gtest/gtest.h"
#include "modules/names/names_backend.h"
#include "modules/names/names_planner.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using testing::NewSimulatedHostFs;
using testing::SimOptions;
using testing::WriteFault;

class NamesModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("names");
    ASSERT_TRUE(
        testing::ExtractTtar(testing::RunfilePath("examples/hosts/hgx-h100.ttar"), root_).ok());
    LoadResult r = LoadDesiredStateFromFile(testing::RunfilePath("examples/rails.yaml"));
    for (const auto& d : r.diagnostics) {
      EXPECT_NE(d.severity, Severity::kError) << d.path << ": " << d.message;
    }
    ASSERT_TRUE(r.state.has_value());
    desired_ = *r.state;
    desired_.file = "host.yaml";
    SimOptions o;
    o.settle_reads = 0;
    fs_ = NewSimulatedHostFs(root_, o);
    sim_ = static_cast<testing::SimulatedHostFs*>(fs_.get());
    modules_ = ModuleRegistry::CreateAll();
    ctx_.fs = fs_.get();
    ctx_.settle_timeout = std::chrono::seconds(30);
  }

  PlanResult PlanNow() {
    auto facts = Discover(modules_, ctx_, desired_);
    EXPECT_TRUE(facts.ok()) << facts.status().message();
    facts_ = facts.value_or(HostFacts());
    return BuildPlan(modules_, desired_, facts_);
  }

  // PF address -> (netdev, RDMA device) of the rails' ConnectX-7 PFs now.
  std::map<std::string, std::pair<std::string, std::string>> RailNames() {
    std::map<std::string, std::pair<std::string, std::string>> out;
    for (const PciFunction& f : facts_.pci) {
      if (f.device_id != "1021" || f.IsVf()) continue;
      out[f.pci_address] = {f.netdevs.empty() ? "" : f.netdevs[0],
                            f.rdma_devices.empty() ? "" : f.rdma_devices[0]};
    }
    return out;
  }

  // doctor's names.persistent verdicts over the facts of the last PlanNow.
  std::vector<Verdict> Doctor() {
    CheckSink sink;
    for (const auto& m : modules_) {
      if (m->name() == "names") m->Check(&desired_, facts_, sink);
    }
    std::vector<Verdict> out;
    for (const CheckResult& r : sink.results()) {
      EXPECT_EQ(r.id, "names.persistent");
      out.push_back(r.verdict);
    }
    return out;
  }

  std::string root_;
  DesiredState desired_;
  std::unique_ptr<HostFs> fs_;
  testing::SimulatedHostFs* sim_ = nullptr;
  std::vector<std::unique_ptr<Module>> modules_;
  HostContext ctx_;
  HostFacts facts_;
};

TEST_F(NamesModuleTest, RailsGetTheirNamesLiveAndAtEveryBoot) {
  for (NicSpec& nic : desired_.nics) nic.num_vfs = 2;  // VFs beside the renamed PFs, quicker
  PlanResult p = PlanNow();
  for (const auto& d : p.diagnostics) {
    EXPECT_NE(d.severity, Severity::kError) << d.path << ": " << d.message;
  }
  const auto before = RailNames();
  ASSERT_EQ(before.size(), 8u);
  EXPECT_EQ(Doctor(), std::vector<Verdict>(8, Verdict::kWarn));
  // The renames come last, after the rules; every other change addressed the
  // netdevs by their names now.
  std::vector<std::string> names_ids;
  size_t first_names = p.plan.changes.size();
  for (size_t i = 0; i < p.plan.changes.size(); ++i) {
    const Change& c = p.plan.changes[i];
    if (c.module != kNamesModule) {
      EXPECT_LT(i, first_names) << c.id << " after a names change";
      continue;
    }
    first_names = std::min(first_names, i);
    names_ids.push_back(c.id);
  }
  ASSERT_EQ(names_ids.size(), 17u);  // the rules, then 8 netdevs and 8 RDMA devices
  EXPECT_EQ(names_ids[0], std::string("names/") + kNamesRulesFile + "/rules");

  // The rail number of each PF: its nic's name (gpu<n>-nic).
  std::map<std::string, int> rail;
  for (const Change& c : p.plan.changes) {
    if (c.module == kNamesModule && c.attribute == kNetdevAttribute) {
      const std::string nic = c.detail["nic"].get<std::string>();
      rail[c.target] = std::stoi(nic.substr(3));
    }
  }
  ASSERT_EQ(rail.size(), 8u);

  ApplyReport r = ApplyPlan(modules_, p.plan, desired_, ctx_);  // checks convergence too
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_TRUE(PlanNow().plan.changes.empty());
  EXPECT_EQ(Doctor(), std::vector<Verdict>(8, Verdict::kOk));

  for (const auto& [pf, n] : rail) {
    const std::string netdev = "rail" + std::to_string(n);
    const std::string rdma = "mlx5_rail" + std::to_string(n);
    // As the kernel shows a renamed netdev and RDMA device.
    auto net = fs_->Resolve("/sys/class/net/" + netdev);
    ASSERT_TRUE(net.ok()) << netdev;
    EXPECT_NE(net->find("/" + pf + "/net/" + netdev), std::string::npos) << *net;
    EXPECT_FALSE(fs_->Exists("/sys/class/net/" + before.at(pf).first));
    EXPECT_EQ(*fs_->ReadAttr("/sys/class/net/" + netdev + "/flags"), "0x1003") << netdev;
    auto ib = fs_->Resolve("/sys/class/infiniband/" + rdma);
    ASSERT_TRUE(ib.ok()) << rdma;
    EXPECT_NE(ib->find("/" + pf + "/infiniband/" + rdma), std::string::npos) << *ib;
    EXPECT_FALSE(fs_->Exists("/sys/class/infiniband/" + before.at(pf).second));
    EXPECT_EQ(*fs_->ReadAttr("/sys/class/infiniband/" + rdma + "/uevent"), "NAME=" + rdma);
    // The RoCE GID table names the netdev by its new name.
    auto ndev = fs_->ReadAttr("/sys/class/infiniband/" + rdma + "/ports/1/gid_attrs/ndevs/0");
    if (ndev.ok()) {
      EXPECT_EQ(*ndev, netdev);
    }
  }
  // The rules file: one net and one infiniband rule per PF, by its address.
  auto rules = fs_->ReadFile(kNamesRulesFile);
  ASSERT_TRUE(rules.ok());
  for (const auto& [pf, n] : rail) {
    EXPECT_NE(rules->find("SUBSYSTEM==\"net\", ACTION==\"add\", KERNELS==\"" + pf +
                          "\", ATTR{phys_port_name}==\"p0\", TEST!=\"parent\", NAME=\"rail" +
                          std::to_string(n) + "\"\n"),
              std::string::npos)
        << *rules;
    EXPECT_NE(rules->find("ACTION==\"add\", SUBSYSTEM==\"infiniband\", KERNELS==\"" + pf +
                          "\", PROGRAM=\"rdma_rename %k NAME_FIXED mlx5_rail" + std::to_string(n) +
                          "\"\n"),
              std::string::npos);
  }
  EXPECT_FALSE(fs_->Exists("/run/provisioner/names"));  // requests are answered, not kept

  // The VFs kept their own names (the rules match the PF's address only).
  for (const auto& [pf, n] : rail) {
    auto vfs = fs_->ListDir("/sys/bus/pci/devices/" + pf);
    ASSERT_TRUE(vfs.ok());
    EXPECT_EQ(std::count_if(vfs->begin(), vfs->end(),
                            [](const std::string& e) { return e.rfind("virtfn", 0) == 0; }),
              2);
  }
}

TEST_F(NamesModuleTest, ARefusedRenameRollsEveryNameBack) {
  for (NicSpec& nic : desired_.nics) nic.num_vfs.reset();  // the names alone: quicker
  PlanResult p = PlanNow();
  const auto before = RailNames();
  // The 5th RDMA rename is refused (after 4 of them and all the netdevs).
  sim_->AddFault(WriteFault{0, kRdmaRenameRequests + before.rbegin()->second.second, EEXIST, 1});
  ApplyReport r = ApplyPlan(modules_, p.plan, desired_, ctx_);
  ASSERT_FALSE(r.status.ok());
  EXPECT_NE(r.status.message().find("EEXIST"), std::string::npos) << r.status.message();
  for (const auto& rb : r.rolled_back) EXPECT_TRUE(rb.status.ok()) << rb.status.message();
  PlanNow();
  EXPECT_EQ(RailNames(), before);
  EXPECT_FALSE(fs_->Exists(kNamesRulesFile));
  for (const auto& [pf, names] : before) {
    EXPECT_EQ(*fs_->ReadAttr("/sys/class/net/" + names.first + "/flags"), "0x1003")
        << names.first << " back up";
  }
}

TEST_F(NamesModuleTest, TheSimulatorRefusesWhatTheKernelRefuses) {
  PlanNow();
  const auto names = RailNames();
  const std::string a = names.begin()->second.first, b = std::next(names.begin())->second.first;
  // Up: dev_change_name says EBUSY.
  Status s = fs_->WriteAttr(kNetdevRenameRequests + a, "x\n");
  EXPECT_EQ(s.err(), EBUSY) << s.message();
  ASSERT_TRUE(fs_->WriteAttr("/sys/class/net/" + a + "/flags", "0x1002\n").ok());
  EXPECT_EQ(fs_->WriteAttr(kNetdevRenameRequests + a, b + "\n").err(), EEXIST);
  EXPECT_EQ(fs_->WriteAttr(kNetdevRenameRequests + a, "a:b\n").err(), EINVAL);
  EXPECT_EQ(fs_->WriteAttr(kNetdevRenameRequests + a, "sixteen-chars-xx\n").err(), EINVAL);
  EXPECT_EQ(fs_->WriteAttr(kNetdevRenameRequests + std::string("nope"), "x\n").err(), ENODEV);
  const std::string ra = names.begin()->second.second, rb = std::next(names.begin())->second.second;
  EXPECT_EQ(fs_->WriteAttr(kRdmaRenameRequests + ra, rb + "\n").err(), EEXIST);
  EXPECT_EQ(fs_->WriteAttr(kRdmaRenameRequests + ra, std::string(64, 'x') + "\n").err(), EINVAL);
  EXPECT_TRUE(fs_->WriteAttr(kRdmaRenameRequests + ra, ra + "\n").ok());  // same name: nothing
  EXPECT_TRUE(fs_->Exists("/sys/class/infiniband/" + ra));
}

TEST_F(NamesModuleTest, APlainTreeHasNoKernelToRename) {
  PlanResult p = PlanNow();
  auto plain = NewLocalHostFs(root_);
  HostContext ctx;
  ctx.fs = plain.get();
  std::unique_ptr<NamesBackend> backend = NewNamesBackend(*plain);
  const std::string a = RailNames().begin()->second.first;
  Status s = backend->RenameNetdev(a, "rail9");
  EXPECT_EQ(s.err(), ENOENT);
  EXPECT_NE(s.message().find("only the kernel simulator answers"), std::string::npos)
      << s.message();
  EXPECT_EQ(*plain->ReadAttr("/sys/class/net/" + a + "/flags"), "0x1003");  // back up
}

}  // namespace
}  // namespace provisioner
