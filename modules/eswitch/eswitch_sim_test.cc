// eswitchMode through the engine (pci, sriov, eswitch) against the in-process
// kernel simulator (test/sim/eswitch_sim.h: the devlink capture write is the
// request, refused as mlx5/ice refuse it; switchdev brings the VF
// representors): plan order, apply, verify, convergence, rollback, the ice
// order, doctor.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/core/engine.h"
#include "engine/host/forwarding_host_fs.h"
#include "gtest/gtest.h"
#include "modules/eswitch/eswitch_backend.h"
#include "modules/eswitch/eswitch_module.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/sriov_module.h"
#include "test/sim/engine_on_sim.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/host_yaml.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using testing::ChangeIds;
using testing::LoadSpec;

// Logs every write (path and value) on its way to the simulator.
class WriteLog final : public ForwardingHostFs {
 public:
  explicit WriteLog(HostFs* inner) : ForwardingHostFs(inner) {}
  Status WriteAttr(std::string_view p, std::string_view v) override {
    log.push_back(std::string(p) + " " + std::string(v));
    return ForwardingHostFs::WriteAttr(p, v);
  }
  Status WriteFileAtomic(std::string_view p, std::string_view c, int mode) override {
    log.push_back(std::string(p) + " " + std::string(c));
    return ForwardingHostFs::WriteFileAtomic(p, c, mode);
  }
  std::vector<std::string> log;
};

constexpr char kPf0[] = "0000:af:00.0";

class EswitchSimTest : public testing::EngineOnSimTest {
 protected:
  void Build(const std::string& pf_driver) {
    testing::HostSpec spec = testing::Cx5RoceHost();
    for (auto& f : spec.pci) {
      if (f.bdf == "0000:af:00.0" || f.bdf == "0000:af:00.1") {
        if (!pf_driver.empty()) f.driver = pf_driver;
      }
    }
    // What `snapshot` captures from devlink on a ConnectX (mlx5's default
    // flow steering is dmfs) or an E810 (no such param).
    for (const char* bdf : {"0000:af:00.0", "0000:af:00.1"}) {
      DevlinkState s;
      if (pf_driver.empty()) s.flow_steering_mode = "dmfs";
      spec.files.push_back({DevlinkCapturePath(bdf), RenderDevlinkCapture(s)});
    }
    testing::SimOptions o;
    o.settle_reads = 0;
    BuildSim(spec, "eswitch", o);
    log_ = std::make_unique<WriteLog>(fs_.get());
    ctx_.fs = log_.get();
    modules_.clear();
    modules_.push_back(std::make_unique<PciModule>());
    modules_.push_back(std::make_unique<SriovModule>());
    modules_.push_back(std::make_unique<EswitchModule>());
  }

  // Build(pf_driver), then `spec` (into *d) planned: no diagnostics, the
  // changes `ids` in this order.
  PlanResult BuildAndPlan(const std::string& pf_driver, const std::string& spec, DesiredState* d,
                          const std::vector<std::string>& ids) {
    Build(pf_driver);
    *d = LoadSpec(spec);
    PlanResult p = PlanNow(*d);
    EXPECT_TRUE(p.diagnostics.empty());
    EXPECT_EQ(ChangeIds(p.plan), ids);
    return p;
  }

  DevlinkState Capture(const std::string& bdf) {
    auto text = sim_->ReadFile(DevlinkCapturePath(bdf));
    EXPECT_TRUE(text.ok());
    auto s = ParseDevlinkCapture(text.value_or(""));
    EXPECT_TRUE(s.ok()) << s.status().message();
    return s.value_or(DevlinkState());
  }

  std::string Attr(const std::string& path) { return sim_->ReadFile(path).value_or("(none)"); }

  // Index in the write log of the first entry containing `needle`; -1 if none.
  int LogIndex(const std::string& needle) {
    for (size_t i = 0; i < log_->log.size(); ++i) {
      if (log_->log[i].find(needle) != std::string::npos) return static_cast<int>(i);
    }
    return -1;
  }

  std::unique_ptr<WriteLog> log_;
};

constexpr char kSwitchdev[] = R"(  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
      eswitchMode: switchdev
)";

// mlx5: numVfs, then (smfs, hw-tc-offload, VFs unbound) switchdev, VFs bound
// again; one representor per VF; the next plan is empty.
TEST_F(EswitchSimTest, Mlx5VfsThenSwitchdevWithRepresentors) {
  DesiredState d;
  PlanResult p = BuildAndPlan("", kSwitchdev, &d,
                              {"sriov/0000:af:00.0/numVfs", "eswitch/0000:af:00.0/eswitchMode"});
  ASSERT_EQ(p.plan.changes.size(), 2u);
  const Change& c = p.plan.changes[1];
  EXPECT_EQ(c.before, "legacy");
  EXPECT_EQ(c.after, "switchdev");
  EXPECT_EQ(c.field_path, "spec.nics[0].eswitchMode");
  EXPECT_EQ(c.resource, "pf:0000:af:00.0");
  EXPECT_EQ(c.detail["flowSteeringMode"], "smfs");
  EXPECT_EQ(c.detail["hwTcOffload"], true);
  EXPECT_EQ(c.detail["pfNetdev"], "ens6f0np0");
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);  // verifies, checks convergence
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  DevlinkState s = Capture(kPf0);
  EXPECT_EQ(s.mode, "switchdev");
  EXPECT_EQ(s.flow_steering_mode, "smfs");
  EXPECT_EQ(s.hw_tc_offload, true);
  for (int i = 0; i < 4; ++i) {
    const std::string rep = "/sys/class/net/ens6f0npf0vf" + std::to_string(i);
    EXPECT_EQ(Attr(rep + "/phys_port_name"), "pf0vf" + std::to_string(i) + "\n");
    EXPECT_EQ(Attr(rep + "/phys_switch_id"), Attr("/sys/class/net/ens6f0np0/phys_switch_id"));
    // The VFs are bound again (mlx5_core) after the mode change.
    const std::string vf = "0000:af:00." + std::to_string(2 + i);
    EXPECT_TRUE(sim_->Exists("/sys/bus/pci/devices/" + vf + "/driver")) << vf;
  }
  // The driver's order: smfs before switchdev, VFs unbound before it and
  // bound after it.
  const int smfs = LogIndex("\"flowSteeringMode\":\"smfs\"");
  const int mode = LogIndex("\"mode\":\"switchdev\"");
  const int unbind = LogIndex("mlx5_core/unbind 0000:af:00.2");
  const int bind = LogIndex("mlx5_core/bind 0000:af:00.2");
  ASSERT_GE(smfs, 0);
  ASSERT_GE(unbind, 0);
  EXPECT_LT(smfs, mode);
  EXPECT_LT(unbind, mode);
  EXPECT_GT(bind, mode);
  EXPECT_TRUE(PlanNow(d).plan.changes.empty());
  // The other port: untouched.
  EXPECT_EQ(Capture("0000:af:00.1").mode, "legacy");
  EXPECT_FALSE(sim_->Exists("/sys/class/net/ens6f1np1/phys_switch_id"));
}

// Back to legacy: the representors go, the VFs stay bound.
TEST_F(EswitchSimTest, BackToLegacyRemovesRepresentors) {
  Build("");
  DesiredState d = LoadSpec(kSwitchdev);
  ASSERT_TRUE(ApplyPlan(modules_, PlanNow(d).plan, d, ctx_).status.ok());
  DesiredState legacy = LoadSpec(
      "  nics:\n" + testing::PfNic("pf0", "0000:af:00.0", 4, "      eswitchMode: legacy\n"));
  PlanResult p = PlanNow(legacy);
  ASSERT_EQ(ChangeIds(p.plan), (std::vector<std::string>{"eswitch/0000:af:00.0/eswitchMode"}));
  EXPECT_FALSE(p.plan.changes[0].detail.contains("flowSteeringMode"));
  ApplyReport r = ApplyPlan(modules_, p.plan, legacy, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  EXPECT_EQ(Capture(kPf0).mode, "legacy");
  for (int i = 0; i < 4; ++i) {
    EXPECT_FALSE(sim_->Exists("/sys/class/net/ens6f0npf0vf" + std::to_string(i))) << i;
    EXPECT_TRUE(
        sim_->Exists("/sys/bus/pci/devices/0000:af:00." + std::to_string(2 + i) + "/driver"));
  }
  EXPECT_TRUE(PlanNow(legacy).plan.changes.empty());
}

// Two PFs into switchdev; the second one's devlink set fails (EBUSY, as
// mlx5 answers with TC rules offloaded): the first goes back to legacy (its
// representors gone), the VFs of both go back to none, nothing half-done.
TEST_F(EswitchSimTest, AFailedSetRollsBackEveryPf) {
  Build("");
  const std::string switchdev = "      eswitchMode: switchdev\n";
  DesiredState d = LoadSpec("  nics:\n" + testing::PfNic("pf0", "0000:af:00.0", 2, switchdev) +
                            testing::PfNic("pf1", "0000:af:00.1", 2, switchdev));
  PlanResult p = PlanNow(d);
  ASSERT_EQ(p.plan.changes.size(), 4u);
  sim_->AddFault({0, "devlink/0000:af:00.1", EBUSY, -1});
  ApplyReport r = ApplyFailingRollsBack(p.plan, d, "EBUSY");
  EXPECT_NE(r.status.message().find("eswitch/0000:af:00.1/eswitchMode"), std::string::npos)
      << r.status.message();
  EXPECT_EQ(Capture(kPf0).mode, "legacy");
  EXPECT_EQ(Capture("0000:af:00.1").mode, "legacy");
  EXPECT_FALSE(sim_->Exists("/sys/class/net/ens6f0npf0vf0"));
  EXPECT_EQ(Attr("/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs"), "0\n");
  EXPECT_EQ(Attr("/sys/bus/pci/devices/0000:af:00.1/sriov_numvfs"), "0\n");
}

// ice: switchdev before the VFs exist (phase before numVfs); the VFs then
// get their representors as they are created. With VFs already there the
// driver refuses (EOPNOTSUPP), and the plan says so at the field.
TEST_F(EswitchSimTest, IceSwitchdevFirstThenVfs) {
  DesiredState d;
  PlanResult p = BuildAndPlan("ice", kSwitchdev, &d,
                              {"eswitch/0000:af:00.0/eswitchMode", "sriov/0000:af:00.0/numVfs"});
  ASSERT_EQ(p.plan.changes.size(), 2u);
  EXPECT_FALSE(p.plan.changes[0].detail.contains("flowSteeringMode"));
  EXPECT_FALSE(p.plan.changes[0].detail.contains("rebindVfs"));
  ApplyReport r = ApplyPlan(modules_, p.plan, d, ctx_);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(Attr("/sys/class/net/ens6f0npf0vf" + std::to_string(i) + "/phys_port_name"),
              "pf0vf" + std::to_string(i) + "\n");
  }
  // The kernel's refusal with VFs present, and the plan's.
  DevlinkState legacy;
  Status s = sim_->WriteFileAtomic(DevlinkCapturePath(kPf0), RenderDevlinkCapture(legacy), 0644);
  EXPECT_EQ(s.err(), EOPNOTSUPP) << s.message();
  PlanResult back = PlanNow(LoadSpec(R"(  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      eswitchMode: legacy
)"));
  ASSERT_EQ(back.diagnostics.size(), 1u);
  EXPECT_EQ(back.diagnostics[0].path, "spec.nics[0].eswitchMode");
  EXPECT_NE(back.diagnostics[0].message.find("only while the PF has no VFs"), std::string::npos)
      << back.diagnostics[0].message;
}

// Doctor: a switchdev PF missing a representor fails, naming the VF.
TEST_F(EswitchSimTest, DoctorNamesTheVfWithoutRepresentor) {
  Build("");
  DesiredState d = LoadSpec(kSwitchdev);
  ASSERT_TRUE(ApplyPlan(modules_, PlanNow(d).plan, d, ctx_).status.ok());
  CheckSink ok;
  HostFacts facts = Facts();
  modules_[2]->Check(&d, facts, ok);
  ASSERT_FALSE(ok.results().empty());
  for (const auto& r : ok.results()) EXPECT_EQ(r.verdict, Verdict::kOk) << r.summary;
  // A representor gone (a driver error at probe, say).
  testing::TreeWriter w(root_);
  auto dir = w.RealPath("/sys/class/net/ens6f0npf0vf2");
  ASSERT_TRUE(dir.ok());
  ASSERT_TRUE(w.RemoveAll(*dir).ok());
  ASSERT_TRUE(w.RemoveAll("/sys/class/net/ens6f0npf0vf2").ok());
  CheckSink bad;
  modules_[2]->Check(&d, Facts(), bad);
  bool found = false;
  for (const auto& r : bad.results()) {
    if (r.id != "eswitch.representors") continue;
    found = true;
    EXPECT_EQ(r.verdict, Verdict::kFail);
    EXPECT_EQ(r.target, kPf0);
    EXPECT_NE(r.summary.find("VF 2 of 4"), std::string::npos) << r.summary;
  }
  EXPECT_TRUE(found);
}

// The capture format: what snapshot writes, read back; anything else refused.
TEST(DevlinkCaptureTest, RoundTripAndRefusals) {
  DevlinkState s;
  s.mode = "switchdev";
  s.flow_steering_mode = "smfs";
  s.hw_tc_offload = true;
  EXPECT_EQ(RenderDevlinkCapture(s),
            "{\"flowSteeringMode\":\"smfs\",\"hwTcOffload\":true,\"mode\":\"switchdev\"}\n");
  auto back = ParseDevlinkCapture(RenderDevlinkCapture(s));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->mode, "switchdev");
  EXPECT_EQ(back->flow_steering_mode, "smfs");
  EXPECT_EQ(back->hw_tc_offload, true);
  EXPECT_EQ(RenderDevlinkCapture(DevlinkState()), "{\"mode\":\"legacy\"}\n");
  for (const char* bad : {"", "[]", "{\"mode\":\"offloads\"}", "{\"mode\":\"legacy\",\"x\":1}",
                          "{\"mode\":\"legacy\",\"flowSteeringMode\":\"fast\"}",
                          "{\"mode\":\"legacy\",\"hwTcOffload\":1}", "{}"}) {
    EXPECT_FALSE(ParseDevlinkCapture(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace provisioner
