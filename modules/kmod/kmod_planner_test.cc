#include "modules/kmod/kmod_planner.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

HostFacts Facts() {
  HostFacts f;
  f.kmod.discovered = true;
  f.kmod.modules_dir = "/lib/modules/6.1.0";
  f.kmod.modules_dep_found = true;
  f.kmod.modules_dir_found = true;
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

// An unknown name gets a did-you-mean from what the root has (loaded,
// modules.dep, built in); a root without the modules of its kernel is told
// apart, naming the path looked for.
TEST(KmodPlanner, UnknownModuleSaysWhyAndDidYouMean) {
  HostFacts f = Facts();
  f.kmod.builtin = {"virtio_net"};
  PlanSink sink;
  PlanKernelModules(
      Want({{"rdma_ucn", true}, {"mlx5-cor", true}, {"virtio_nat", true}, {"gdrdrv", true}}), f,
      sink);
  ASSERT_EQ(sink.diagnostics().size(), 4u);
  EXPECT_EQ(sink.diagnostics()[0].message,
            "kernel module rdma_ucn is not loaded and is unknown: not built in and not in "
            "/lib/modules/6.1.0/modules.dep; did you mean rdma_ucm?");
  EXPECT_THAT(sink.diagnostics()[1].message, HasSubstr("; did you mean mlx5_core?"));
  EXPECT_THAT(sink.diagnostics()[2].message, HasSubstr("; did you mean virtio_net?"));
  EXPECT_THAT(sink.diagnostics()[3].message, Not(HasSubstr("did you mean")));

  f.kmod.name_aliases = {{"nvidia_peermem_alias", "nvidia_peermem"}};
  PlanSink alias;
  PlanKernelModules(Want({{"nvidia-peermem-alias", true}}), f, alias);
  ASSERT_EQ(alias.diagnostics().size(), 1u);
  EXPECT_THAT(alias.diagnostics()[0].message,
              HasSubstr("; nvidia-peermem-alias is an alias of nvidia_peermem "
                        "(/lib/modules/6.1.0/modules.alias): did you mean nvidia_peermem?"));

  f.kmod.modules_dep_found = false;
  f.kmod.available.clear();
  PlanSink nodep;
  PlanKernelModules(Want({{"mlx5_cor", true}}), f, nodep);
  ASSERT_EQ(nodep.diagnostics().size(), 1u);
  EXPECT_EQ(nodep.diagnostics()[0].message,
            "kernel module mlx5_cor is not loaded and cannot be looked up: /lib/modules/6.1.0 has "
            "no modules.dep (depmod has not run); did you mean mlx5_core?");

  f.kmod.modules_dir_found = false;
  PlanSink nodir;
  PlanKernelModules(Want({{"gdrdrv", true}}), f, nodir);
  ASSERT_EQ(nodir.diagnostics().size(), 1u);
  EXPECT_EQ(nodir.diagnostics()[0].message,
            "kernel module gdrdrv is not loaded and cannot be looked up: this root has no "
            "/lib/modules/6.1.0 (no modules installed for its kernel)");

  f.kmod.modules_dir.clear();
  PlanSink norelease;
  PlanKernelModules(Want({{"gdrdrv", true}}), f, norelease);
  ASSERT_EQ(norelease.diagnostics().size(), 1u);
  EXPECT_THAT(norelease.diagnostics()[0].message,
              HasSubstr("the kernel release is unknown (no /proc/sys/kernel/osrelease)"));
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
