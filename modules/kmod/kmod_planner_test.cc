#include "modules/kmod/kmod_planner.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

HostFacts Facts() {
  HostFacts f;
  f.kmod.discovered = true;
  f.kmod.modules_dir = "/lib/modules/6.1.0";
  f.kmod.modules_dep_found = true;
  for (const char* n : {"mlx5_core", "mlx5_ib", "ib_core"})
    f.kmod.loaded.push_back({n, 1, 0, {}, "Live"});
  f.kmod.available = {{"mlx5_ib", {"ib_uverbs", "ib_core"}},
                      {"rdma_ucm", {"rdma_cm", "ib_uverbs", "ib_core"}},
                      {"rdma_cm", {"ib_core"}}};
  return f;
}

DesiredState Want(std::vector<KernelModuleSpec> mods) {
  DesiredState d;
  d.kernel_modules = std::move(mods);
  return d;
}

TEST(KmodPlanner, LoadsMissingWithUnloadedDepsAndPersists) {
  PlanSink sink;
  PlanKernelModules(Want({{"mlx5_ib", true}, {"rdma-ucm", true}}), Facts(), sink);
  EXPECT_THAT(sink.diagnostics(), IsEmpty());
  ASSERT_EQ(sink.changes().size(), 2u);
  const Change& load = sink.changes()[0];
  EXPECT_EQ(load.id, "kmod/rdma_ucm/loaded");
  EXPECT_EQ(load.field_path, "spec.kernelModules[1]");
  EXPECT_EQ(load.phase, kPhaseKernelModules);
  EXPECT_EQ(load.detail["dependencies"],
            nlohmann::json({"rdma_cm", "ib_uverbs"}));  // ib_core loaded
  const Change& persist = sink.changes()[1];
  EXPECT_EQ(persist.id, "kmod/modules-load.d/provisioner.conf/modules");
  EXPECT_TRUE(persist.before.is_null());
  EXPECT_EQ(persist.after, nlohmann::json({"mlx5_ib", "rdma-ucm"}));
}

TEST(KmodPlanner, NothingWhenLoadedAndPersisted) {
  HostFacts f = Facts();
  f.kmod.persisted = std::vector<std::string>{"mlx5_ib"};
  PlanSink sink;
  PlanKernelModules(Want({{"mlx5_ib", true}}), f, sink);
  EXPECT_THAT(sink.changes(), IsEmpty());
  EXPECT_THAT(sink.diagnostics(), IsEmpty());
}

TEST(KmodPlanner, MissingRequiredIsAnErrorOptionalAWarning) {
  PlanSink sink;
  PlanKernelModules(Want({{"nvidia_peermem", false}, {"gdrdrv", true}}), Facts(), sink);
  ASSERT_EQ(sink.diagnostics().size(), 2u);
  EXPECT_EQ(sink.diagnostics()[0].severity, Severity::kWarning);
  EXPECT_EQ(sink.diagnostics()[0].path, "spec.kernelModules[0]");
  EXPECT_THAT(sink.diagnostics()[0].message, HasSubstr("/lib/modules/6.1.0/modules.dep"));
  EXPECT_EQ(sink.diagnostics()[1].severity, Severity::kError);
  EXPECT_EQ(sink.diagnostics()[1].path, "spec.kernelModules[1]");
  EXPECT_THAT(sink.changes(), IsEmpty());  // the missing ones are not persisted either
}

// A built-in module is loaded: nothing to load, no modules-load.d line
// (the live root of a VM lists virtio_net under /sys/module, not in
// /proc/modules nor in modules.dep).
TEST(KmodPlanner, BuiltinIsLoadedAndNeedsNoBootLine) {
  HostFacts f = Facts();
  f.kmod.builtin = {"virtio_net"};
  PlanSink sink;
  PlanKernelModules(Want({{"virtio-net", true}}), f, sink);
  EXPECT_THAT(sink.diagnostics(), IsEmpty());
  EXPECT_THAT(sink.changes(), IsEmpty());
  // With a loadable one, only that one is persisted.
  PlanSink both;
  PlanKernelModules(Want({{"virtio_net", true}, {"mlx5_ib", true}}), f, both);
  ASSERT_EQ(both.changes().size(), 1u);
  EXPECT_EQ(both.changes()[0].after, nlohmann::json({"mlx5_ib"}));
}

TEST(KmodPlanner, UnspecifiedIsUnmanaged) {
  HostFacts f = Facts();
  f.kmod.persisted = std::vector<std::string>{"old"};
  PlanSink sink;
  PlanKernelModules(Want({}), f, sink);
  EXPECT_THAT(sink.changes(), IsEmpty());
}

}  // namespace
}  // namespace provisioner
