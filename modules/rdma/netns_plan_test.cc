#include "modules/rdma/netns_plan.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner::rdma {
namespace {

DesiredState Want(const std::string& mode, bool persist = true) {
  DesiredState d;
  d.rdma = RdmaSpec{mode, persist};
  return d;
}

HostFacts Host(std::optional<std::string> live, std::optional<std::string> conf = std::nullopt) {
  HostFacts f;
  f.kernel.release = "6.1.0-18-amd64";
  f.rdma_netns_mode = live;
  f.rdma.discovered = true;
  f.rdma.ib_core_conf_netns_mode = conf;
  if (conf) {
    f.rdma.persistent_netns_mode = conf;
    f.rdma.persistent_netns_source = "/etc/modprobe.d/ib_core.conf";
  }
  return f;
}

std::vector<std::string> Warnings(const PlanSink& s) {
  std::vector<std::string> w;
  for (const auto& d : s.diagnostics()) w.push_back(d.path + ": " + d.message);
  return w;
}

TEST(NetnsPlan, ExclusiveOnSharedHostIsLiveAndPersistent) {
  PlanSink sink;
  PlanNetnsMode(Want("exclusive"), Host("shared"), sink);
  ASSERT_EQ(sink.changes().size(), 2u);
  const Change& live = sink.changes()[0];
  EXPECT_EQ(live.id, "rdma/system/netnsMode");
  EXPECT_EQ(live.before, "shared");
  EXPECT_EQ(live.after, "exclusive");
  EXPECT_EQ(live.disruption, Disruption::kLive);
  EXPECT_EQ(live.phase, kPhaseRdmaNetns);
  EXPECT_EQ(live.field_path, "spec.rdma.netnsMode");
  const Change& file = sink.changes()[1];
  EXPECT_EQ(file.id, "rdma/modprobe.d/netnsMode");
  EXPECT_TRUE(file.before.is_null());
  EXPECT_EQ(file.after, "exclusive");
  // The kernel runs exclusive once the live change is made: no reboot needed.
  EXPECT_EQ(file.disruption, Disruption::kLive);
  EXPECT_TRUE(sink.diagnostics().empty()) << ::testing::PrintToString(Warnings(sink));
}

TEST(NetnsPlan, NamedNamespacesWarnThatTheLiveSwitchWillBeRefused) {
  HostFacts f = Host("shared");
  f.rdma.named_netns = {"blue", "red"};
  PlanSink sink;
  PlanNetnsMode(Want("exclusive"), f, sink);
  EXPECT_EQ(sink.changes().size(), 2u);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_THAT(sink.diagnostics()[0].message,
              ::testing::HasSubstr("network namespaces exist (/run/netns/blue and 1 more)"));
  EXPECT_THAT(sink.diagnostics()[0].message, ::testing::HasSubstr("next reboot"));
  PlanSink converged;
  PlanNetnsMode(Want("shared"), f, converged);  // nothing to switch: nothing to say
  EXPECT_TRUE(converged.diagnostics().empty());
}

TEST(NetnsPlan, ConvergedHostPlansNothing) {
  PlanSink sink;
  PlanNetnsMode(Want("exclusive"), Host("exclusive", "exclusive"), sink);
  EXPECT_TRUE(sink.changes().empty());
  PlanSink shared;
  PlanNetnsMode(Want("shared"), Host("shared"), shared);
  EXPECT_TRUE(shared.changes().empty());
}

TEST(NetnsPlan, UnmanagedWhenNotGiven) {
  PlanSink sink;
  DesiredState d;
  PlanNetnsMode(d, Host("shared"), sink);
  d.rdma = RdmaSpec{};
  PlanNetnsMode(d, Host("shared"), sink);
  EXPECT_TRUE(sink.changes().empty());
  EXPECT_TRUE(sink.diagnostics().empty());
}

TEST(NetnsPlan, PersistFalseOnlyLive) {
  PlanSink sink;
  PlanNetnsMode(Want("exclusive", false), Host("shared"), sink);
  ASSERT_EQ(sink.changes().size(), 1u);
  EXPECT_EQ(sink.changes()[0].detail["persist"], false);
}

TEST(NetnsPlan, SharedRemovesTheOption) {
  PlanSink sink;
  PlanNetnsMode(Want("shared"), Host("exclusive", "exclusive"), sink);
  ASSERT_EQ(sink.changes().size(), 2u);
  EXPECT_EQ(sink.changes()[1].before, "exclusive");
  EXPECT_EQ(sink.changes()[1].after, "shared");
}

TEST(NetnsPlan, UnknownLiveModeMeansReboot) {
  PlanSink sink;
  HostFacts f = Host(std::nullopt);
  f.rdma.netns_mode_source =
      "/sys/module/ib_core/parameters/netns_mode missing: ib_core not loaded";
  PlanNetnsMode(Want("exclusive"), f, sink);
  ASSERT_EQ(sink.changes().size(), 1u);
  EXPECT_EQ(sink.changes()[0].target, "modprobe.d");
  EXPECT_EQ(sink.changes()[0].disruption, Disruption::kReboot);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_THAT(sink.diagnostics()[0].message, ::testing::HasSubstr("ib_core not loaded"));
}

TEST(NetnsPlan, OldKernelWithoutOfedWarns) {
  HostFacts f = Host("shared");
  f.kernel.release = "4.18.0-305.el8.x86_64";
  PlanSink sink;
  PlanNetnsMode(Want("exclusive"), f, sink);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_EQ(sink.diagnostics()[0].severity, Severity::kWarning);
  EXPECT_THAT(sink.diagnostics()[0].message, ::testing::HasSubstr("Linux 5.3 or MLNX_OFED 4.7"));
  EXPECT_THAT(sink.diagnostics()[0].message, ::testing::HasSubstr("without MLNX_OFED"));
  f.rdma.ofed = true;
  f.rdma.ofed_version = "4.6-1.0.1.1";
  PlanSink old_ofed;
  PlanNetnsMode(Want("exclusive"), f, old_ofed);
  EXPECT_EQ(old_ofed.diagnostics().size(), 1u);
  f.rdma.ofed_version = "4.7-3.2.9.0";
  PlanSink ok;
  PlanNetnsMode(Want("exclusive"), f, ok);
  EXPECT_TRUE(ok.diagnostics().empty());
  f.kernel.release = "5.3.0";
  f.rdma.ofed = false;
  PlanSink new_kernel;
  PlanNetnsMode(Want("exclusive"), f, new_kernel);
  EXPECT_TRUE(new_kernel.diagnostics().empty());
}

TEST(NetnsPlan, WarnsWhenALaterFileOverrides) {
  HostFacts f = Host("shared");
  f.rdma.persistent_netns_mode = "shared";
  f.rdma.persistent_netns_source = "/etc/modprobe.d/zz-mlnx.conf";
  PlanSink sink;
  PlanNetnsMode(Want("exclusive"), f, sink);
  ASSERT_EQ(sink.diagnostics().size(), 1u);
  EXPECT_THAT(sink.diagnostics()[0].message, ::testing::HasSubstr("/etc/modprobe.d/zz-mlnx.conf"));
  // An earlier file is overridden by ib_core.conf: nothing to say.
  f.rdma.persistent_netns_source = "/etc/modprobe.d/aa.conf";
  PlanSink quiet;
  PlanNetnsMode(Want("exclusive"), f, quiet);
  EXPECT_TRUE(quiet.diagnostics().empty());
}

}  // namespace
}  // namespace provisioner::rdma
