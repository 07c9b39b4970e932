// End-to-end: spec.kernelModules with the real binary on the host trees.
// Under a tree root, "loading" a module is the kernel stand-in of the kmod
// module: it is added to <root>/proc/modules (modules/kmod/kmod_backend.h).
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string KmodYaml(const std::string& name, const std::string& modules) {
  return WriteTempFile(name, HostYaml("  kernelModules:\n" + modules));
}

int LinesStartingWith(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.rfind(prefix, 0) == 0;
  return n;
}

const char kConf[] = "/etc/modules-load.d/provisioner.conf";

TEST(KmodCliTest, DiscoverShowsLoadedModulesAndParameters) {
  std::string root = ExtractHost("cx5-roce");
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ParseJson(r);
  const json& km = j["kernelModules"];
  std::vector<std::string> loaded = km["loaded"];
  for (const char* m : {"mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs", "rdma_ucm"}) {
    EXPECT_NE(std::find(loaded.begin(), loaded.end(), m), loaded.end()) << m;
  }
  EXPECT_EQ(std::find(loaded.begin(), loaded.end(), "nvidia_peermem"), loaded.end());
  EXPECT_EQ(km["parameters"]["ib_core"]["netns_mode"], "Y");
  EXPECT_TRUE(km["persisted"].is_null());
}

TEST(KmodCliTest, PersistsLoadedModulesWarnsOnMissingOptionalSecondApplyNoop) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = KmodYaml("kmod.yaml",
                              "    - mlx5_ib\n"
                              "    - rdma_ucm\n"
                              "    - name: nvidia_peermem\n"
                              "      required: false\n");
  json p = PlanJson(yaml, root);
  ASSERT_EQ(p["changes"].size(), 1u) << p.dump(2);
  EXPECT_EQ(p["changes"][0]["id"], "kmod/modules-load.d/provisioner.conf/modules");
  EXPECT_EQ(p["changes"][0]["after"], json({"mlx5_ib", "rdma_ucm"}));
  EXPECT_EQ(p["changes"][0]["disruption"], "live");
  ASSERT_EQ(p["warnings"].size(), 1u) << p.dump(2);
  EXPECT_NE(p["warnings"][0].get<std::string>().find("spec.kernelModules[2]"), std::string::npos);
  EXPECT_NE(p["warnings"][0].get<std::string>().find("nvidia_peermem"), std::string::npos);

  RunResult apply = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  EXPECT_EQ(ReadFile(root + kConf),
            "# Written by provisioner from host.yaml spec.kernelModules; do not edit.\n"
            "mlx5_ib\nrdma_ucm\n");
  struct stat before;
  ASSERT_EQ(::stat((root + kConf).c_str(), &before), 0);

  RunResult again = Provisioner({"apply", yaml, "--root", root, "-o", "json"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  struct stat after;
  ASSERT_EQ(::stat((root + kConf).c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);  // no rename: nothing was written
  ExpectConverged(yaml, root);
}

TEST(KmodCliTest, MissingRequiredModuleIsAPlanError) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = KmodYaml("kmod-req.yaml", "    - mlx5_ib\n    - gdrdrv\n");
  const std::string plan = Refused("plan", yaml, root);
  EXPECT_THAT(plan, HasSubstr("spec.kernelModules[1]"));
  EXPECT_THAT(plan, HasSubstr("gdrdrv"));
}

// Issue 31 item 10: an unknown module name is told from a root without
// the modules of its kernel (naming the path looked for), with the list
// entry's file:line:column and a did-you-mean from the names the root has
// (loaded, modules.dep, modules.alias); validate --root says the same.
TEST(KmodCliTest, UnknownModuleNamesThePathAndSuggests) {
  std::string root = ExtractHost("cx5-roce");
  std::string release = ReadFile(root + "/proc/sys/kernel/osrelease");
  while (!release.empty() && release.back() == '\n') release.pop_back();
  ASSERT_FALSE(release.empty());
  std::string yaml = KmodYaml("kmod-typo.yaml", "    - mlx5_ib\n    - mlx5-cor\n");
  RunResult none = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(none.exit_code, 1) << none.out;
  EXPECT_NE(
      none.err.find(yaml +
                    ":8:7: spec.kernelModules[1]: kernel module mlx5-cor is not "
                    "loaded and cannot be looked up: this root has no /lib/modules/" +
                    release + " (no modules installed for its kernel); did you mean mlx5_core?"),
      std::string::npos)
      << none.err;

  const std::string moddir = root + "/lib/modules/" + release;
  std::filesystem::create_directories(moddir);
  EXPECT_THAT(Refused("plan", yaml, root),
              HasSubstr("cannot be looked up: /lib/modules/" + release +
                        " has no modules.dep (depmod has not run)"));

  std::ofstream(moddir + "/modules.dep")
      << "updates/dkms/nvidia-peermem.ko: updates/dkms/nvidia.ko\n"
         "updates/dkms/nvidia.ko:\n"
         "kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko:\n";
  std::ofstream(moddir + "/modules.alias")
      << "# Aliases extracted from modules themselves.\n"
         "alias pci:v000015B3d00001017sv*sd*bc*sc*i* mlx5_core\n"
         "alias nv-peermem nvidia_peermem\n";
  std::string typos = KmodYaml(
      "kmod-typos.yaml", "    - mlx5_ib\n    - nvidia_peermen\n    - nv-peermem\n    - gdrdrv\n");
  const std::string dep = "/lib/modules/" + release + "/modules.dep";
  const std::string unknown = " is not loaded and is unknown: not built in and not in " + dep;
  EXPECT_THAT(
      Refused("plan", typos, root),
      AllOf(HasSubstr(typos + ":8:7: spec.kernelModules[1]: kernel module nvidia_peermen" +
                      unknown + "; did you mean nvidia_peermem?"),
            HasSubstr(typos + ":9:7: spec.kernelModules[2]: kernel module nv-peermem" + unknown +
                      "; nv-peermem is an alias of nvidia_peermem (/lib/modules/" + release +
                      "/modules.alias): did you mean nvidia_peermem?"),
            HasSubstr(typos + ":10:7: spec.kernelModules[3]: kernel module gdrdrv" + unknown +
                      "\n")));

  EXPECT_THAT(Refused("validate", typos, root), HasSubstr("did you mean nvidia_peermem?"));
}

// A tree with a modules directory: the module and its unloaded dependencies
// are loaded (the tree's proc/modules), then persisted; the second apply is a no-op.
TEST(KmodCliTest, LoadsAvailableModuleWithDependencies) {
  std::string root = ExtractHost("cx5-roce");
  std::string release = ReadFile(root + "/proc/sys/kernel/osrelease");
  while (!release.empty() && release.back() == '\n') release.pop_back();
  ASSERT_FALSE(release.empty());
  const std::string moddir = root + "/lib/modules/" + release;
  std::filesystem::create_directories(moddir);
  // As depmod writes them: dependencies in reverse load order.
  std::ofstream(moddir + "/modules.dep")
      << "updates/dkms/nvidia-peermem.ko: updates/dkms/nvidia.ko "
         "kernel/drivers/infiniband/core/ib_core.ko\n"
         "updates/dkms/nvidia.ko:\n"
         "kernel/drivers/infiniband/ulp/isert/ib_isert.ko: "
         "kernel/drivers/target/iscsi/iscsi_target_mod.ko kernel/drivers/target/target_core_mod.ko "
         "kernel/drivers/infiniband/core/rdma_cm.ko kernel/drivers/infiniband/core/ib_core.ko\n"
         "kernel/drivers/target/iscsi/iscsi_target_mod.ko: "
         "kernel/drivers/target/target_core_mod.ko\n"
         "kernel/drivers/target/target_core_mod.ko:\n"
         "kernel/drivers/infiniband/core/ib_core.ko:\n";
  std::string yaml =
      KmodYaml("kmod-load.yaml", "    - mlx5_ib\n    - nvidia_peermem\n    - ib_isert\n");
  json p = PlanJson(yaml, root);
  ASSERT_EQ(p["changes"].size(), 3u) << p.dump(2);
  EXPECT_EQ(p["changes"][0]["id"], "kmod/nvidia_peermem/loaded");
  EXPECT_EQ(p["changes"][1]["id"], "kmod/ib_isert/loaded");
  EXPECT_EQ(p["changes"][2]["after"], json({"mlx5_ib", "nvidia_peermem", "ib_isert"}));

  RunResult apply = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(apply.exit_code, 0) << apply.out << apply.err;
  std::string mods = ReadFile(root + "/proc/modules");
  // Newest first, dependencies before the module, loaded ones not again.
  EXPECT_EQ(mods.rfind("ib_isert 0 0 - Live 0x0000000000000000\n"
                       "iscsi_target_mod 0 0 - Live 0x0000000000000000\n"
                       "target_core_mod 0 0 - Live 0x0000000000000000\n"
                       "nvidia_peermem 0 0 - Live 0x0000000000000000\n"
                       "rdma_ucm ",
                       0),
            0u)
      << mods;
  EXPECT_EQ(LinesStartingWith(mods, "ib_core "), 1) << mods;
  EXPECT_EQ(LinesStartingWith(mods, "nvidia "), 1) << mods;
  EXPECT_EQ(LinesStartingWith(mods, "rdma_cm "), 1) << mods;

  ExpectConverged(yaml, root);
}

// Issue 26 item 9: the rollback of the modules-load.d change re-rendered
// the file from its module list: the administrator's comments and blank
// lines were lost. Now its bytes come back. (A numVfs change that cannot
// settle without the kernel simulator fails after it and rolls it back.)
TEST(KmodCliTest, RollbackRestoresAPreexistingModulesLoadFileByteForByte) {
  std::string root = ExtractHost("cx5-roce");
  std::filesystem::create_directories(root + "/etc/modules-load.d");
  const std::string original =
      "# Our RDMA stack (ticket OPS-1234)\n\nmlx5_ib   # the HCA\n\n# keep last\n";
  std::ofstream(root + kConf, std::ios::binary) << original;
  std::string yaml = WriteTempFile("kmod-rollback.yaml",
                                   HostYaml("  kernelModules: [mlx5_ib, rdma_ucm]\n  nics:\n" +
                                            PfNic("pf0", "0000:af:00.0", 4)));
  RunResult apply = Provisioner({"apply", yaml, "--root", root, "--settle-timeout", "1"});
  EXPECT_EQ(apply.exit_code, 1) << apply.out << apply.err;
  EXPECT_NE(apply.err.find("rolled back"), std::string::npos) << apply.err;
  EXPECT_EQ(ReadFile(root + kConf), original);
}

// Issue 26, item 14: under --root, the results must not depend on the
// machine that reads the tree. libkmod's kmod_new() adds the running
// kernel's command line (`mod.param=value`, `modprobe.blacklist=`) to what
// modprobe.d says; taking those entries out again lost order (the tree's
// own `options ib_core netns_mode=0` matched the machine's and went
// instead, so the tree's last setting was the machine's). The real binary
// runs in a private mount namespace where /proc/cmdline is a file with
// module options; discover and plan must print the same bytes as outside.
TEST(KmodCliTest, ResultsDoNotDependOnTheMachinesKernelCommandLine) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for unshare -m and mount --bind";
  const std::string cmdline = WriteTempFile(
      "cmdline",
      "BOOT_IMAGE=/vmlinuz ib_core.netns_mode=0 mlx5_core.prof_sel=3 mlx5_ib.dc_cnak_qp_depth=8 "
      "modprobe.blacklist=mlx5_ib,rdma_ucm\n");
  // sh -c: bind the file over /proc/cmdline in the new namespace, then run.
  auto under = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/unshare",
                                     "-m",
                                     "--propagation",
                                     "private",
                                     "/bin/sh",
                                     "-c",
                                     "mount --bind \"$0\" /proc/cmdline && exec \"$@\"",
                                     cmdline};
    argv.insert(argv.end(), args.begin(), args.end());
    return provisioner::testing::Run(argv);
  };
  RunResult probe = under({"/bin/cat", "/proc/cmdline"});
  if (probe.exit_code != 0 || probe.out != ReadFile(cmdline)) {
    GTEST_SKIP() << "no private mount namespace here (unshare -m, mount --bind): "
                 << probe.err.substr(0, 300);
  }
  const std::string root = ExtractHost("cx5-ib");
  std::filesystem::create_directories(root + "/etc/modprobe.d");
  // The tree's last word is netns_mode=1 (exclusive); the machine says 0.
  std::ofstream(root + "/etc/modprobe.d/ib_core.conf")
      << "options ib_core netns_mode=0\noptions ib_core netns_mode=1\n";
  std::ofstream(root + "/etc/modprobe.d/mlx5.conf")
      << "options mlx5_core prof_sel=3\nblacklist rdma_ucm\nblacklist mlx5_ib\n";
  const std::string yaml = WriteTempFile(
      "host.yaml",
      HostYaml(
          "  rdma:\n    netnsMode: exclusive\n    persist: true\n  kernelModules: [mlx5_ib]\n"));
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"discover", "--root", root, "-o", "json"},
        std::vector<std::string>{"plan", yaml, "--root", root, "-o", "json"}}) {
    SCOPED_TRACE(args[0]);
    RunResult here = Provisioner(args);
    std::vector<std::string> argv = {ProvisionerBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult there = under(argv);
    EXPECT_EQ(here.exit_code, there.exit_code) << here.err << "\n---\n" << there.err;
    EXPECT_FALSE(here.out.empty());
    EXPECT_EQ(here.out, there.out) << "the output depends on this machine's /proc/cmdline";
    EXPECT_EQ(here.err, there.err);
  }
}

}  // namespace
}  // namespace provisioner::testing
