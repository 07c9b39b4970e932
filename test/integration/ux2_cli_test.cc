// Issue 38, the rest of item 12 (and item 7's knock-on order), end to end
// with the real binary: doctor's GPUDirect checks agree on a tree without
// /proc/modules; manifests that need --root say so at the field's
// file:line:col; subcommand help lists the global options and its own
// examples; apply --rollback needs no FILE; a failed apply names the next
// step.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Example(const std::string& name) { return RunfilePath("examples/" + name); }

const json* CheckNamed(const json& doctor, const std::string& id) {
  for (const json& c : doctor["checks"]) {
    if (c["id"] == id) return &c;
  }
  return nullptr;
}

// A tree without /proc/modules: the loaded list is inferred (bound drivers,
// /sys/module), so neither gdrdrv nor nvidia_peermem missing from it means
// "not loaded". Both checks say the same: not checked, not captured.
TEST(Ux2CliTest, GpuDirectChecksAgreeWithoutProcModules) {
  const std::string root = ExtractHost("cx5-roce");  // an NVIDIA GPU, ConnectX-5
  ASSERT_EQ(std::remove((root + "/proc/modules").c_str()), 0);
  RunResult r = Provisioner({"doctor", "--root", root, "-o", "json"});
  ASSERT_FALSE(r.out.empty()) << r.err;
  const json doc = json::parse(r.out);
  const json* gdrdrv = CheckNamed(doc, "rdma.gpudirect");
  const json* gpudirect = CheckNamed(doc, "health.gpudirect-rdma");
  ASSERT_NE(gdrdrv, nullptr) << r.out;
  ASSERT_NE(gpudirect, nullptr) << r.out;
  for (const json* c : {gdrdrv, gpudirect}) {
    EXPECT_EQ((*c)["verdict"], "warn") << c->dump();
    EXPECT_THAT((*c)["summary"].get<std::string>(), HasSubstr("/proc/modules not captured"));
    for (const json& e : (*c)["evidence"]) {
      if (e["source"] == "/proc/modules") {
        EXPECT_EQ(e["value"], "(not captured)") << c->dump();
      }
    }
  }
  EXPECT_THAT((*gdrdrv)["summary"].get<std::string>(), Not(HasSubstr("is not loaded")));
  EXPECT_THAT((*gpudirect)["summary"].get<std::string>(), Not(HasSubstr("is not loaded")));
}

// manifests without --root where a field needs discovery: the error is at
// that field's file:line:col, as validate's diagnostics are; its help shows
// no default root ("=/": manifests reads no host unless told).
TEST(Ux2CliTest, ManifestsWithoutRootSaysWhichFieldNeedsIt) {
  const std::string near = WriteTempFile("near.yaml", R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: worker1
spec:
  nics:
    - name: gpu0-nic
      nicSelector: { vendor: "15b3", deviceID: "1021", nearGpu: 0 }
      numVfs: 4
      resourceName: gpu0sriov
)");
  RunResult n = Provisioner({"manifests", near});
  EXPECT_EQ(n.exit_code, 1);
  EXPECT_THAT(n.err, HasSubstr(near + ":8:"));
  EXPECT_THAT(n.err, HasSubstr(": spec.nics[0].nicSelector.nearGpu"));
  EXPECT_THAT(n.err, HasSubstr("give --root DIR"));

  const std::string rails = WriteTempFile("rails.yaml", R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: worker1
spec:
  rails:
    count: allGpus
    nic:
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      numVfs: 4
      resourceName: "gpu{n}sriov"
)");
  RunResult a = Provisioner({"manifests", rails});
  EXPECT_EQ(a.exit_code, 1);
  EXPECT_THAT(a.err, HasSubstr(rails + ":7:12: spec.rails.count is allGpus: give --root DIR"));

  RunResult help = Provisioner({"manifests", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--root DIR"));
  EXPECT_THAT(help.out, Not(HasSubstr("=/")));
}

// `plan --help`: its options, then the global ones (they work after the
// subcommand), then its own examples; not the main page's examples.
TEST(Ux2CliTest, SubcommandHelpListsGlobalOptionsAndItsExamples) {
  RunResult plan = Provisioner({"plan", "--help"});
  EXPECT_EQ(plan.exit_code, 0);
  const size_t global = plan.out.find("\nGlobal options:\n");
  const size_t examples = plan.out.find("\nEXAMPLES:\n");
  ASSERT_NE(global, std::string::npos) << plan.out;
  ASSERT_NE(examples, std::string::npos) << plan.out;
  EXPECT_LT(plan.out.find("--detailed-exitcode"), global);
  EXPECT_LT(global, examples);
  for (const char* flag : {"--log-level LEVEL", "--no-color", "-q,--quiet", "-v,--verbose"}) {
    EXPECT_NE(plan.out.find(flag, global), std::string::npos) << flag << "\n" << plan.out;
  }
  EXPECT_THAT(plan.out, HasSubstr("provisioner plan host.yaml --out plan.json"));
  EXPECT_THAT(plan.out, HasSubstr("EXIT STATUS:"));
  EXPECT_THAT(plan.out, Not(HasSubstr("provisioner doctor host.yaml --only fail")));
  RunResult apply = Provisioner({"help", "apply"});
  EXPECT_THAT(apply.out, HasSubstr("provisioner apply --rollback  "));
  // The main page keeps its own.
  RunResult main = Provisioner({"--help"});
  EXPECT_THAT(main.out, HasSubstr("provisioner doctor host.yaml --only fail"));
  EXPECT_THAT(main.out, Not(HasSubstr("Global options:")));
}

// kill -9 in the middle of an apply leaves the journal; `apply --rollback`
// then needs only the root: the journal names the host.yaml.
TEST(Ux2CliTest, RollbackNeedsNoFile) {
  const std::string root = ExtractHost("cx5-roce");
  RunResult none = Provisioner({"apply", "--rollback", "--root", root});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_THAT(none.out, HasSubstr("Nothing to roll back: no interrupted apply under " + root));
  RunResult no_file = Provisioner({"apply", "--root", root});
  EXPECT_EQ(no_file.exit_code, 1);
  EXPECT_THAT(no_file.err, HasSubstr("FILE is required"));

  KernelSimDaemon sim(root, /*netdev_delay_ms=*/20000);  // VFs come, netdevs do not
  ASSERT_TRUE(sim.ready());
  const std::string yaml = Example("roce-sriov.yaml");
  pid_t pid = Spawn({ProvisionerBinary(), "apply", yaml, "--root", root, "--settle-timeout", "60"});
  ASSERT_GT(pid, 0);
  const std::string journal = root + "/run/provisioner/journal.json";
  EXPECT_TRUE(
      WaitUntil([&] { return ReadFile(journal).find("\"applying\"") != std::string::npos; }));
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_THAT(ReadFile(journal), HasSubstr("\"hostYaml\": \"" + yaml + "\""));

  RunResult r = Provisioner({"apply", "--rollback", "--root", root});
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.err, HasSubstr("journal names " + yaml));
  EXPECT_THAT(r.out, HasSubstr("Rollback complete"));
  EXPECT_FALSE(WaitUntil([&] { return ::access(journal.c_str(), F_OK) == 0; }, 0));
}

// A wait that timed out: the next step is dmesg and a longer --settle-timeout.
TEST(Ux2CliTest, FailedApplyNamesTheNextStep) {
  const std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/20000);  // VFs come, netdevs do not
  ASSERT_TRUE(sim.ready());
  RunResult r =
      Provisioner({"apply", Example("roce-sriov.yaml"), "--root", root, "--settle-timeout", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("provisioner: next: `dmesg`"));
  EXPECT_THAT(r.err, HasSubstr("a longer --settle-timeout (it was 1 s)"));
}

// Item 7: plan's diagnostics in file order, not in the order the modules
// happened to plan (the kmod module's line 17 before the sriov module's line
// 14), and the note on a selector that matches nothing under its own error,
// before the errors further down (not after all of them).
TEST(Ux2CliTest, PlanDiagnosticsInFileOrderWithTheNoteUnderItsError) {
  const std::string yaml = WriteTempFile("order.yaml", R"(apiVersion: provisioner/v1alpha1
kind: HostConfig
metadata:
  name: worker1
spec:
  nics:
    - name: pf0
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      numVfs: 4
      resourceName: a
    - name: pf1
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 500
  kernelModules:
    - mlx5_nope
)");
  RunResult r = Provisioner({"plan", yaml, "--root", ExtractHost("cx5-roce")});
  EXPECT_EQ(r.exit_code, 1);
  const std::vector<std::string> in_order = {
      yaml + ":8:20: spec.nics[0].nicSelector: selects no PCI function",
      yaml + ":8:20: note: spec.nics[0].nicSelector: no function has deviceID 1021",
      yaml + ":13:15: spec.nics[1].numVfs: 500 exceeds sriov_totalvfs",
      yaml + ":15:7: spec.kernelModules[0]: kernel module mlx5_nope",
  };
  size_t at = 0;
  for (const std::string& line : in_order) {
    const size_t found = r.err.find(line);
    ASSERT_NE(found, std::string::npos) << line << "\n" << r.err;
    EXPECT_GE(found, at) << line << " is out of order:\n" << r.err;
    at = found;
  }
}

}  // namespace
}  // namespace provisioner::testing
