// End-to-end: the real binary against kernel-shaped host trees.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include <chrono>
#include <cstdio>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"
#include "test/integration/harness.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kPf0 = "/sys/bus/pci/devices/0000:af:00.0";

// cx5-roce already in the RDMA netns mode roce-sriov.yaml asks for
// (exclusive, live and persistent), so that the SR-IOV tests see only
// their own change; the netns mode has its own tests (rdma_cli_test).
std::string ExtractExclusiveRoceHost() {
  std::string root = ExtractHost("cx5-roce");
  std::ofstream(root + "/sys/module/ib_core/parameters/netns_mode", std::ios::trunc) << "N\n";
  std::ofstream(root + "/etc/modprobe.d/ib_core.conf") << "options ib_core netns_mode=0\n";
  // ... and with its kernelModules already persisted (kmod_cli_test has those).
  ::mkdir((root + "/etc/modules-load.d").c_str(), 0755);
  std::ofstream(root + "/etc/modules-load.d/provisioner.conf") << "mlx5_ib\nrdma_ucm\n";
  return root;
}

TEST(CliTest, VersionAndHelp) {
  // Three parts: the VERSION file, the commit (hex, or "unknown" when git was not there
  // at build time) and the UTC build time.
  RunResult v = Provisioner({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  std::ifstream version_file(RunfilePath("VERSION"));
  std::string version;
  version_file >> version;
  ASSERT_FALSE(version.empty());
  EXPECT_EQ(v.out.rfind("provisioner " + version + " (commit ", 0), 0U) << v.out;
  EXPECT_THAT(v.out, ::testing::MatchesRegex("provisioner [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ([0-9a-f]{7,}|unknown), "
                                  "built [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z\\)\n"));
  RunResult h = Provisioner({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  for (const char* cmd : {"discover", "validate", "plan", "apply", "manifests", "doctor", "snapshot"}) {
    EXPECT_NE(h.out.find(cmd), std::string::npos) << cmd;
  }
}

TEST(CliTest, UnknownCommandOrOptionIsExit1) {
  EXPECT_EQ(Provisioner({"frobnicate"}).exit_code, 1);
  RunResult r = Provisioner({"plan", Example("roce-sriov.yaml"), "-o", "xml"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("xml"), std::string::npos) << r.err;
}

TEST(CliTest, ManifestsToStdoutAndToFiles) {
  RunResult r = Provisioner({"manifests", Example("roce-sriov.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, int> kinds;
  for (const YAML::Node& doc : YAML::LoadAll(r.out)) {
    ++kinds[doc["kind"].as<std::string>()];
    if (doc["kind"].as<std::string>() == "SriovNetworkNodePolicy") {
      EXPECT_TRUE(doc["spec"]["externallyManaged"].as<bool>());
    }
  }
  EXPECT_EQ(kinds["SpiderIPPool"], 1) << r.out;
  EXPECT_EQ(kinds["SpiderMultusConfig"], 1);
  EXPECT_EQ(kinds["SriovNetworkNodePolicy"], 1);
  EXPECT_EQ(kinds["ConfigMap"], 1);  // nccl-env-linux (the operator writes the device plugin's)
  EXPECT_EQ(kinds["DaemonSet"], 0);

  RunResult w = Provisioner({"manifests", Example("roce-sriov.yaml"), "--with-test-workload"});
  ASSERT_EQ(w.exit_code, 0) << w.err;
  // rdma-test asks for the RDMA resource itself; rdma-inject-test (the
  // example's multus config has rdmaResourceInject) asks for nothing: the
  // Spiderpool webhook injects it from the annotation.
  std::map<std::string, YAML::Node> daemonsets;
  for (const YAML::Node& doc : YAML::LoadAll(w.out)) {
    if (doc["kind"].as<std::string>() != "DaemonSet") continue;
    daemonsets[doc["metadata"]["name"].as<std::string>()] = doc;
  }
  ASSERT_EQ(daemonsets.size(), 2u) << w.out;
  ASSERT_EQ(daemonsets.count("rdma-test"), 1u) << w.out;
  EXPECT_EQ(daemonsets["rdma-test"]["spec"]["template"]["spec"]["containers"][0]["resources"]
                      ["limits"]["spidernet.io/mellanoxrdma"]
                          .as<int>(),
            1)
      << w.out;
  ASSERT_EQ(daemonsets.count("rdma-inject-test"), 1u) << w.out;
  EXPECT_FALSE(
      daemonsets["rdma-inject-test"]["spec"]["template"]["spec"]["containers"][0]["resources"])
      << w.out;

  std::string dir = MakeTempDir("manifests");
  RunResult f = Provisioner({"manifests", Example("roce-sriov.yaml"), "--output-dir", dir});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  // Every listed file exists and holds one manifest of the kind its name says.
  std::istringstream listed(f.out);
  std::string path;
  int files = 0;
  while (std::getline(listed, path)) {
    if (path.rfind(dir + "/", 0) != 0) continue;
    ++files;
    std::string base = path.substr(dir.size() + 1);
    YAML::Node doc = YAML::LoadFile(path);
    std::string kind = doc["kind"].as<std::string>();
    for (char& c : kind) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_EQ(base.rfind(kind + "-", 0), 0u) << path;
  }
  EXPECT_EQ(files, 4) << f.out;
}

// A fleet: files and directories of host.yaml, each host's tree under
// --roots DIR/<metadata.name>, merged; a conflict names both hosts.
TEST(CliTest, FleetManifestsMergeHostsAndNameConflicts) {
  std::string example;
  {
    std::ifstream in(Example("roce-sriov.yaml"));
    std::stringstream ss;
    ss << in.rdbuf();
    example = ss.str();
  }
  auto host = [&](const std::string& node, bool pool, int vfs) {
    std::string y = example;
    y.replace(y.find("name: worker1"), 13, "name: " + node);
    if (!pool) y.replace(y.find("    nodeSelector: { kubernetes.io/os: linux }"), 45, "");
    y.replace(y.find("numVfs: 12"), 10, "numVfs: " + std::to_string(vfs));
    return y;
  };
  const std::string dir = MakeTempDir("fleet");
  for (const char* node : {"worker1", "worker2"}) {
    std::ofstream(dir + "/" + node + ".yaml") << host(node, /*pool=*/false, 12);
  }
  const std::string values = dir + "-values.yaml";
  RunResult r = Provisioner({"manifests", dir, "--helm-values", values});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> policies;
  for (const YAML::Node& doc : YAML::LoadAll(r.out)) {
    if (doc["kind"].as<std::string>() != "SriovNetworkNodePolicy") continue;
    policies.push_back(doc["metadata"]["name"].as<std::string>());
    EXPECT_EQ(doc["metadata"]["namespace"].as<std::string>(), "kube-system");
  }
  EXPECT_EQ(policies, (std::vector<std::string>{"roce-sriov-nic-worker1", "roce-sriov-nic-worker2"}));
  YAML::Node v = YAML::LoadFile(values);
  EXPECT_TRUE(v["sriov"]["install"].as<bool>());

  // Each host's own tree: --roots DIR/<metadata.name>.
  const std::string roots = MakeTempDir("roots");
  for (const char* node : {"worker1", "worker2"}) {
    ASSERT_EQ(std::rename(ExtractHost("cx5-roce").c_str(), (roots + "/" + node).c_str()), 0);
  }
  RunResult rooted = Provisioner({"manifests", dir, "--roots", roots});
  ASSERT_EQ(rooted.exit_code, 0) << rooted.err;
  // With facts, each node's NodeFeature for node-feature-discovery: its
  // node-name label, the operator's config-daemon label, doctor's verdict
  // over the same tree; without facts (the run above) none.
  EXPECT_EQ(r.out.find("kind: \"NodeFeature\""), std::string::npos) << r.out;
  std::vector<std::string> nodes;
  for (const YAML::Node& doc : YAML::LoadAll(rooted.out)) {
    if (doc["kind"].as<std::string>() != "NodeFeature") continue;
    EXPECT_EQ(doc["apiVersion"].as<std::string>(), "nfd.k8s-sigs.io/v1alpha1");
    EXPECT_EQ(doc["metadata"]["namespace"].as<std::string>(), "node-feature-discovery");
    const std::string node =
        doc["metadata"]["labels"]["nfd.node.kubernetes.io/node-name"].as<std::string>();
    nodes.push_back(node);
    EXPECT_EQ(doc["metadata"]["name"].as<std::string>(), "provisioner-" + node);
    const YAML::Node labels = doc["spec"]["labels"];
    const std::string p = "provisioner.feature.node.kubernetes.io/";
    EXPECT_EQ(labels[p + "sriov-config-daemon"].as<std::string>(), "true");
    EXPECT_EQ(labels[p + "link-type"].as<std::string>(), "ethernet");
    const std::string verdict = labels[p + "doctor"].as<std::string>();
    EXPECT_TRUE(verdict == "ok" || verdict == "warn" || verdict == "fail") << verdict;
    EXPECT_EQ(verdict == "fail", labels[p + "doctor-failed"].as<std::string>() != "0");
  }
  EXPECT_EQ(nodes, (std::vector<std::string>{"worker1", "worker2"}));
  RunResult missing = Provisioner({"manifests", dir, "--roots", MakeTempDir("empty")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("worker1 (" + dir + "/worker1.yaml): no discovered tree at"),
            std::string::npos)
      << missing.err;
  RunResult one_root = Provisioner({"manifests", dir, "--root", roots + "/worker1"});
  EXPECT_EQ(one_root.exit_code, 1);
  EXPECT_NE(one_root.err.find("--root is one host's tree"), std::string::npos) << one_root.err;

  // A pool whose nodes disagree on the pool's policy.
  const std::string a = WriteTempFile("pool-a.yaml", host("worker1", /*pool=*/true, 12));
  const std::string b = WriteTempFile("pool-b.yaml", host("worker2", /*pool=*/true, 8));
  RunResult conflict = Provisioner({"manifests", a, b});
  EXPECT_EQ(conflict.exit_code, 1);
  EXPECT_NE(conflict.err.find("SriovNetworkNodePolicy kube-system/roce-sriov-nic differs between "
                              "hosts worker1 (" + a + ") and worker2 (" + b +
                              ") at spec.numVfs: 12 vs 8"),
            std::string::npos)
      << conflict.err;
  EXPECT_EQ(conflict.out, "");  // nothing half-written
}

// Two nics that discovery resolves to one PF (a rootDevice and its netdev's
// name): plan refuses them, naming both (validate cannot know it).
TEST(CliTest, PlanRefusesTwoNicsOnOnePf) {
  const std::string yaml = WriteTempFile("overlap.yaml", HostYaml(R"(  nics:
    - name: by-address
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
    - name: by-name
      nicSelector: { pfNames: [ens6f0np0] }
      mtu: 9000
)"));
  EXPECT_EQ(Provisioner({"validate", yaml}).exit_code, 0);
  RunResult p = Provisioner({"plan", yaml, "--root", ExtractHost("cx5-roce")});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_NE(p.err.find("spec.nics[1].nicSelector: selects 0000:af:00.0, which spec.nics[0] "
                       "(by-address) also selects"),
            std::string::npos)
      << p.err;
}

TEST(CliTest, DiscoverJsonHasContractKeys) {
  std::string root = ExtractHost("cx5-roce");
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ParseJson(r);
  EXPECT_EQ(j["formatVersion"], 1);
  EXPECT_TRUE(j["kernel"].contains("release"));
  EXPECT_TRUE(j["rdma"].contains("netnsMode"));
  EXPECT_TRUE(j["kernelModules"].contains("loaded"));
  ASSERT_TRUE(j["nics"].is_array());
  const json* pf0 = nullptr;
  for (const auto& n : j["nics"]) {
    if (n["pciAddress"] == "0000:af:00.0") pf0 = &n;
  }
  ASSERT_NE(pf0, nullptr) << j.dump(2);
  EXPECT_EQ((*pf0)["vendor"], "15b3");
  EXPECT_EQ((*pf0)["deviceID"], "1017");
  EXPECT_EQ((*pf0)["driver"], "mlx5_core");
  EXPECT_EQ((*pf0)["numaNode"], 1);
  EXPECT_EQ((*pf0)["netdevs"], json::array({"ens6f0np0"}));
  EXPECT_EQ((*pf0)["sriov"]["totalVfs"], 127);
  EXPECT_EQ((*pf0)["sriov"]["numVfs"], 0);
  EXPECT_EQ((*pf0)["rdmaDevices"], json::array({"mlx5_0"}));
  ASSERT_EQ(j["gpus"].size(), 1u);
}

TEST(CliTest, DiscoverTableAndYaml) {
  std::string root = ExtractHost("cx5-roce");
  RunResult t = Provisioner({"discover", "--root", root});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("0000:af:00.1"), std::string::npos);
  EXPECT_NE(t.out.find("0/127"), std::string::npos) << t.out;
  RunResult y = Provisioner({"discover", "--root", root, "-o", "yaml"});
  ASSERT_EQ(y.exit_code, 0);
  EXPECT_NE(y.out.find("pciAddress: \"0000:af:00.0\""), std::string::npos) << y.out;
}

TEST(CliTest, DiscoverRealI350Capture) {
  std::string root = ExtractHost("i350-sriov-ghw");
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ParseJson(r);
  int pfs = 0;
  for (const auto& n : j["nics"]) {
    if (n["vendor"] != "8086" || n["deviceID"] != "1521") continue;
    ++pfs;
    EXPECT_EQ(n["sriov"]["totalVfs"], 7);
    EXPECT_EQ(n["sriov"]["numVfs"], 4);
    ASSERT_EQ(n["sriov"]["vfs"].size(), 4u);
    EXPECT_EQ(n["sriov"]["vfs"][0]["driver"], "igbvf");
  }
  EXPECT_EQ(pfs, 2) << j.dump(2);
}

TEST(CliTest, LogsGoToStderrAndJsonStaysClean) {
  std::string root = ExtractHost("cx5-roce");
  RunResult r = Provisioner({"--log-level", "debug", "discover", "--root", root, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("debug: discover: module sriov"), std::string::npos) << r.err;
  ParseJson(r);
  RunResult quiet = Provisioner({"discover", "--root", root, "-o", "json"});
  EXPECT_EQ(quiet.err, "");
  EXPECT_EQ(Provisioner({"--log-level", "loud", "discover"}).exit_code, 1);
}

TEST(CliTest, DiscoverMissingRootIsErrnoError) {
  RunResult r = Provisioner({"discover", "--root", "/nonexistent/tree"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("/nonexistent/tree: ENOENT"), std::string::npos) << r.err;
}

TEST(CliTest, PlanRoceSriovListsNumVfsChange) {
  std::string root = ExtractExclusiveRoceHost();
  RunResult r = Provisioner({"plan", Example("roce-sriov.yaml"), "--root", root, "-o", "json",
                             "--detailed-exitcode"});
  ASSERT_EQ(r.exit_code, 2) << r.err;
  json j = ParseJson(r);
  EXPECT_EQ(j["formatVersion"], 1);
  EXPECT_EQ(j["root"], root);
  // numVfs, then (link module, deviceType netdevice) the new VFs' netdevs up.
  ASSERT_EQ(j["changes"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["changes"][1]["id"], "link/0000:af:00.0/vfsUp");
  const json& c = j["changes"][0];
  EXPECT_EQ(c["id"], "sriov/0000:af:00.0/numVfs");
  EXPECT_EQ(c["module"], "sriov");
  EXPECT_EQ(c["target"], "0000:af:00.0");
  EXPECT_EQ(c["attribute"], "numVfs");
  EXPECT_EQ(c["before"], 0);
  EXPECT_GT(c["after"].get<int>(), 0);
  EXPECT_EQ(c["disruption"], "live");
  EXPECT_EQ(j["summary"]["changes"], 2);
  EXPECT_EQ(j["summary"]["rebootRequired"], false);

  RunResult t = Provisioner({"plan", Example("roce-sriov.yaml"), "--root", root});
  EXPECT_EQ(t.exit_code, 0);
  EXPECT_NE(t.out.find("+ sriov 0000:af:00.0 numVfs: 0 -> "), std::string::npos) << t.out;
}

TEST(CliTest, ApplyCreatesVfsThenIsIdempotent) {
  std::string root = ExtractExclusiveRoceHost();
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  std::string yaml = Example("roce-sriov.yaml");
  RunResult a = Provisioner({"apply", yaml, "--root", root, "-o", "json", "--settle-timeout", "20"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  json j = ParseJson(a);
  ASSERT_EQ(j["changes"].size(), 2u);  // numVfs, VF netdevs up
  EXPECT_EQ(j["changes"][0]["status"], "applied");
  EXPECT_EQ(j["changes"][1]["status"], "applied");
  int want = j["changes"][0]["after"].get<int>();
  struct stat st;
  EXPECT_EQ(::stat((root + kPf0 + "/virtfn" + std::to_string(want - 1)).c_str(), &st), 0);
  EXPECT_EQ(sim.Refused(), "");

  RunResult p = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(p.exit_code, 0) << p.out << p.err;
  EXPECT_NE(p.out.find("No changes."), std::string::npos);

  // A second apply makes no write: the tree is byte-for-byte the same.
  std::string before = MakeTempDir("before") + "/tree.ttar";
  ASSERT_TRUE(WriteTtar(root, before).ok());
  RunResult a2 = Provisioner({"apply", yaml, "--root", root});
  EXPECT_EQ(a2.exit_code, 0) << a2.err;
  std::string after = MakeTempDir("after") + "/tree.ttar";
  ASSERT_TRUE(WriteTtar(root, after).ok());
  EXPECT_TRUE(ReadFile(before) == ReadFile(after)) << "second apply changed the tree";
}

// On a terminal (a pty from util-linux `script`) the VF wait is one status
// line redrawn in place with a ticking clock; results follow on a clean line.
TEST(CliTest, ApplyOnATerminalRedrawsOneProgressLine) {
  std::string root = ExtractHost("cx5-roce");
  KernelSimDaemon sim(root, /*netdev_delay_ms=*/1500);
  ASSERT_TRUE(sim.ready());
  std::string cmd = ProvisionerBinary() + " apply " + Example("roce-sriov.yaml") + " --root " +
                    root + " --settle-timeout 20 --auto-approve";
  RunResult r = provisioner::testing::Run({"/usr/bin/script", "-qfec", cmd, "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("\r\033[K"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("VFs have netdevs"), std::string::npos) << r.out;
  // The finished status line ends before the result table starts.
  size_t table = r.out.find("Apply complete");
  ASSERT_NE(table, std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("\r\033[K", table) < r.out.rfind('\n', table), true) << r.out;
}

TEST(CliTest, ApplyBetweenNonZeroCountsWritesZeroFirst) {
  std::string root = ExtractHost("cx5-roce-vfs");  // 4 VFs on af:00.0
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("host.yaml", Pf0Yaml(8));
  json j = PlanJson(yaml, root);
  ASSERT_EQ(j["changes"].size(), 1u);
  EXPECT_EQ(j["changes"][0]["before"], 4);
  EXPECT_EQ(j["changes"][0]["after"], 8);
  RunResult a = Provisioner({"apply", yaml, "--root", root, "--settle-timeout", "20"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_EQ(sim.Refused(), "");  // the simulated kernel never saw 4 -> 8 directly
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "8\n");
  EXPECT_EQ(Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"}).exit_code, 0);
}

TEST(CliTest, ConcurrentApplyFailsAtOnceOrWaits) {
  std::string root = ExtractHost("cx5-roce");
  ::mkdir((root + "/run").c_str(), 0755);
  ::mkdir((root + "/run/provisioner").c_str(), 0755);
  // This test process plays the first apply: it holds the lock.
  int fd = ::open((root + "/run/provisioner/lock").c_str(), O_RDONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  auto start = std::chrono::steady_clock::now();
  RunResult r = Provisioner({"apply", Example("roce-sriov.yaml"), "--root", root});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("another provisioner apply holds /run/provisioner/lock"), std::string::npos)
      << r.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  RunResult waited = Provisioner(
      {"apply", Example("roce-sriov.yaml"), "--root", root, "--lock-timeout", "1"});
  EXPECT_EQ(waited.exit_code, 1);
  EXPECT_NE(waited.err.find("(waited 1s)"), std::string::npos) << waited.err;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "0\n");  // nothing applied
  // A dry run takes no lock.
  EXPECT_EQ(Provisioner({"apply", Example("roce-sriov.yaml"), "--root", root, "--dry-run"}).exit_code, 0);
  ::close(fd);
}

// kill -9 during the VF wait leaves a journal; the next apply reports it and
// converges, or --rollback undoes it.
TEST(CliTest, KillDuringApplyThenApplyConvergesOrRollsBack) {
  for (bool rollback : {false, true}) {
    std::string root = ExtractHost("cx5-roce");
    KernelSimDaemon sim(root, /*netdev_delay_ms=*/20000);  // VFs come, netdevs do not
    ASSERT_TRUE(sim.ready());
    std::string yaml = Example("roce-sriov.yaml");
    std::string journal = JournalPath(root);
    // Until all 12 VFs exist (as when the kernel returns from the write;
    // the simulator creates them one by one after it): apply is waiting.
    Interrupted killed = InterruptWhen(
        {"apply", yaml, "--root", root, "--settle-timeout", "60"},
        [&] { return VfsMade(root, "0000:af:00.0", 12) && ApplyingInJournal(root) > 0; }, SIGKILL);
    ASSERT_TRUE(killed.reached);
    ASSERT_EQ(killed.exit_code, -1) << "not ended by the signal";
    const pid_t pid = killed.pid;
    ASSERT_NE(ReadFile(journal), "");

    RunResult plan = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    json pj = ParseJson(plan);
    ASSERT_EQ(pj["warnings"].size(), 1u) << pj.dump(2);
    EXPECT_NE(pj["warnings"][0].get<std::string>().find(
                  "interrupted (pid " + std::to_string(pid)),
              std::string::npos);
    EXPECT_NE(pj["warnings"][0].get<std::string>().find("stopped during sriov/0000:af:00.0/numVfs"),
              std::string::npos);

    std::vector<std::string> args = {"apply", yaml, "--root", root, "--settle-timeout", "30"};
    if (rollback) args.push_back("--rollback");
    RunResult again = Provisioner(args);
    EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), rollback ? "0\n" : "12\n");
    struct stat st;
    EXPECT_NE(::stat(journal.c_str(), &st), 0) << "journal left behind";
    EXPECT_EQ(sim.Refused(), "");
    // Settled: nothing pending and no warning any more.
    RunResult after = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
    EXPECT_EQ(ParseJson(after)["warnings"].size(), 0u);
  }
}

// A damaged saved plan is refused with what is wrong, and nothing is written.
TEST(CliTest, MalformedSavedPlanIsAClearError) {
  std::string root = ExtractHost("cx5-roce");
  std::string plan = WriteTempFile(
      "bad.plan.json",
      R"({"kind": "ProvisionerPlan", "formatVersion": 1, "root": "/", "desiredFile": "/x.yaml",
          "digests": {"desired": "1", "facts": "2"},
          "changes": [{"id": "sriov/0000:af:00.0/numVfs", "module": "sriov", "phase": "soon"}]})");
  RunResult r = Provisioner({"apply", plan, "--root", root});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("saved plan " + plan + " is malformed"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("changes[0]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("phase: want an integer"), std::string::npos) << r.err;
  EXPECT_FALSE(Exists(JournalPath(root)));
}

TEST(CliTest, SavedPlanAppliesExactlyOrIsRefusedWhenStale) {
  std::string root = ExtractExclusiveRoceHost();
  std::string yaml = WriteTempFile("host.yaml", ReadFile(Example("roce-sriov.yaml")));
  std::string planfile = MakeTempDir("plan") + "/plan.json";
  RunResult p = Provisioner({"plan", yaml, "--root", root, "--out", planfile});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  json saved = json::parse(ReadFile(planfile), nullptr, false);
  ASSERT_TRUE(saved.is_object());
  EXPECT_EQ(saved["kind"], "ProvisionerPlan");
  EXPECT_EQ(saved["changes"][0]["id"], "sriov/0000:af:00.0/numVfs");
  EXPECT_EQ(saved["digests"]["desired"].get<std::string>().size(), 16u);

  // host.yaml changed since: refused, saying so.
  const std::string original = ReadFile(yaml);
  std::string edited = original;
  edited.replace(edited.find("numVfs: 12"), 10, "numVfs: 11");
  std::ofstream(yaml, std::ios::trunc) << edited;
  RunResult stale_yaml = Provisioner({"apply", planfile});
  EXPECT_EQ(stale_yaml.exit_code, 1);
  EXPECT_NE(stale_yaml.err.find(yaml + " changed since the plan was made"), std::string::npos)
      << stale_yaml.err;
  // Issue 31: a comment or layout edit is no change of the desired state
  // (the digest is of the parsed document): the plan still holds.
  std::ofstream(yaml, std::ios::trunc) << "# edited: a comment\n" << original << "\n\n# the end\n";
  ASSERT_EQ(Provisioner({"plan", yaml, "--root", root, "--out", planfile}).exit_code, 0);
  std::ofstream(yaml, std::ios::app) << "# edited once more\n";

  // The host changed since: refused, saying so; nothing written.
  std::ofstream(root + "/sys/bus/pci/devices/0000:af:00.1/sriov_numvfs", std::ios::trunc) << "2\n";
  RunResult stale_host = Provisioner({"apply", planfile});
  EXPECT_EQ(stale_host.exit_code, 1);
  EXPECT_NE(stale_host.err.find("the host under " + root + " changed since the plan was made"),
            std::string::npos)
      << stale_host.err;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "0\n");
  std::ofstream(root + "/sys/bus/pci/devices/0000:af:00.1/sriov_numvfs", std::ios::trunc) << "0\n";

  // Unchanged: applied exactly, with the plan's root.
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  RunResult ok = Provisioner({"apply", planfile, "--settle-timeout", "20", "-o", "json"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(ParseJson(ok)["changes"][0]["status"], "applied");
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "12\n");

  // Applied again: the host changed since the plan (by it), into what it
  // plans: "already applied", exit 0, nothing to do (was: refused as stale).
  RunResult again = Provisioner({"apply", planfile});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("Saved plan " + planfile + " is already applied: the host under " +
                           root + " matches " + yaml + "."),
            std::string::npos)
      << again.out << again.err;
  RunResult again_json = Provisioner({"apply", planfile, "-o", "json"});
  EXPECT_EQ(again_json.exit_code, 0) << again_json.err;
  EXPECT_EQ(ParseJson(again_json)["alreadyApplied"], true);
  EXPECT_TRUE(ParseJson(again_json)["changes"].empty());
}

// A driver that enables fewer VFs than asked, mid-apply (after the reset to
// 0 destroyed the old VFs): apply fails naming the PF, rolls back, and the
// tree is byte-for-byte what it was (run/ aside: lock and simulator log),
// except the ifindex the kernel gives each re-created VF netdev: a real
// kernel never reuses those either.
TEST(CliTest, FailureMidApplyRestoresTheExactTree) {
  std::string root = ExtractHost("cx5-roce-vfs");  // 4 VFs on af:00.0
  std::string pristine = ExtractHost("cx5-roce-vfs");
  KernelSimDaemon sim(root, 50, {"--max-enable", "6"});
  ASSERT_TRUE(sim.ready());
  std::string yaml = WriteTempFile("host.yaml", Pf0Yaml(8));
  RunResult r = Provisioner({"apply", yaml, "--root", root, "--settle-timeout", "20", "-o", "json"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("0000:af:00.0"), std::string::npos) << r.err;
  json j = ParseJson(r);
  EXPECT_EQ(j["changes"][0]["status"], "failed");
  ASSERT_EQ(j["rolledBack"].size(), 1u);
  EXPECT_EQ(j["rolledBack"][0]["status"], "rolled-back") << j.dump(2);
  // apply returned once the VF netdevs were back; the simulator adds each
  // VF's RDMA device just after its netdev (mlx5 does both before the write
  // returns): let it finish before comparing.
  auto rdma_devices = [](const std::string& tree) {
    int n = 0;
    if (DIR* d = ::opendir((tree + "/sys/class/infiniband").c_str())) {
      while (struct dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
      ::closedir(d);
    }
    return n;
  };
  for (int i = 0; i < 200 && rdma_devices(root) != rdma_devices(pristine); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  TreeDiffOptions o;
  o.ignore = {"run"};
  std::vector<std::string> diffs = DiffTrees(pristine, root, o);
  int ifindex_lines = 0;
  for (const std::string& d : diffs) {
    bool ifindex = d.rfind("content differs: ", 0) == 0 && d.find("/net/ens6f0v") != std::string::npos &&
                   (d.find("/ifindex:") != std::string::npos || d.find("/iflink:") != std::string::npos ||
                    d.find("/uevent:") != std::string::npos);
    ifindex_lines += ifindex;
    EXPECT_TRUE(ifindex) << "rollback left a difference: " << d;
  }
  EXPECT_EQ(ifindex_lines, 12);  // 4 VF netdevs x (ifindex, iflink, uevent)
}

TEST(CliTest, ApplyDryRunWritesNothing) {
  std::string root = ExtractHost("cx5-roce");
  std::string before = MakeTempDir("before") + "/tree.ttar";
  ASSERT_TRUE(WriteTtar(root, before).ok());
  RunResult r = Provisioner({"apply", Example("roce-sriov.yaml"), "--root", root, "--dry-run",
                             "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json j = ParseJson(r);
  EXPECT_EQ(j["dryRun"], true);
  EXPECT_EQ(j["changes"][0]["status"], "planned");
  std::string after = MakeTempDir("after") + "/tree.ttar";
  ASSERT_TRUE(WriteTtar(root, after).ok());
  EXPECT_TRUE(ReadFile(before) == ReadFile(after));
}

TEST(CliTest, ApplyTimesOutWhenVfsNeverAppearAndRollsBack) {
  // No simulator: writes land in plain files and no VF ever shows up.
  std::string root = ExtractExclusiveRoceHost();
  RunResult r = Provisioner({"apply", Example("roce-sriov.yaml"), "--root", root,
                             "--settle-timeout", "1", "-o", "json"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("apply sriov/0000:af:00.0/numVfs"), std::string::npos) << r.err;
  json j = ParseJson(r);
  EXPECT_EQ(j["changes"][0]["status"], "failed");
  ASSERT_EQ(j["rolledBack"].size(), 1u);
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "0\n");
}

TEST(CliTest, NumVfsAboveTotalIsAnErrorWithLineAndColumn) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = WriteTempFile("host.yaml", HostYaml(R"(  nics:
    - name: gpu1-nic
      nicSelector:
        rootDevices: ["0000:af:00.0"]
      numVfs: 300
)"));
  RunResult r = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(yaml + ":10:15: spec.nics[0].numVfs: 300 exceeds sriov_totalvfs 127 of 0000:af:00.0"),
            std::string::npos)
      << r.err;
}

TEST(CliTest, SelectorMatchingNothingIsAnError) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = WriteTempFile("host.yaml", HostYaml(R"(  nics:
    - name: nope
      nicSelector: { vendor: "15b3", deviceID: "101d" }
      numVfs: 4
)"));
  RunResult r = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(yaml + ":8:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("spec.nics[0].nicSelector"), std::string::npos) << r.err;
}

// Malformed input of every kind: exit 1, file:line:column, never a crash.
TEST(CliTest, MalformedInputGetsLineAndColumn) {
  struct Case {
    const char* name;
    const char* yaml;
    const char* expect;  // substring of stderr after "<file>:"
  };
  const Case cases[] = {
      {"syntax", "apiVersion: provisioner/v1alpha1\nkind: [HostConfig\n", ""},
      {"unknown-field",
       "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata: {name: w}\nspec:\n  nics:\n    - name: a\n      nicSelector: {vendor: \"15b3\"}\n      numVF: 4\n",
       "8:7:"},
      {"wrong-type",
       "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata: {name: w}\nspec:\n  nics:\n    - name: a\n      nicSelector: {vendor: \"15b3\"}\n      numVfs: many\n",
       "8:15:"},
      {"bad-enum",
       "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata: {name: w}\nspec:\n  rdma:\n    netnsMode: private\n",
       "6:16:"},
      {"dangling-ref",
       "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata: {name: w}\nspec:\n  multusConfigs:\n    - name: m\n      cniType: macvlan\n      nic: ghost\n",
       "8:12:"},
      {"bad-ifname",
       "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata: {name: w}\nspec:\n  nics:\n    - name: a\n      nicSelector:\n        pfNames: [\"../eth0\"]\n",
       "8:"},
      {"empty", "", ""},
      {"not-a-map", "- a\n- b\n", ""},
      {"binary", "\x01\x02\xff\xfe: [", ""},
  };
  for (const auto& c : cases) {
    std::string yaml = WriteTempFile(std::string(c.name) + ".yaml", c.yaml);
    RunResult r = Provisioner({"validate", yaml});
    EXPECT_EQ(r.exit_code, 1) << c.name << "\n" << r.err;
    EXPECT_NE(r.err.find(yaml + ":" + c.expect), std::string::npos) << c.name << "\n" << r.err;
    EXPECT_EQ(r.err.find("terminate"), std::string::npos) << c.name;
  }
}

TEST(CliTest, ExamplesValidateAndPlanAgainstTheirHosts) {
  struct Case {
    const char* example;
    const char* host;
  };
  const Case cases[] = {
      {"roce-shared-macvlan.yaml", "cx5-roce"},
      {"roce-sriov.yaml", "cx5-roce"},
      {"ib-sriov.yaml", "cx5-ib"},
      {"ipoib.yaml", "cx5-ib"},
  };
  for (const auto& c : cases) {
    RunResult v = Provisioner({"validate", Example(c.example)});
    EXPECT_EQ(v.exit_code, 0) << c.example << v.err;
    std::string root = ExtractHost(c.host);
    RunResult p = Provisioner({"plan", Example(c.example), "--root", root, "-o", "json"});
    EXPECT_EQ(p.exit_code, 0) << c.example << "\n" << p.err;
    ParseJson(p);
  }
  EXPECT_EQ(Provisioner({"validate", Example("rails-8gpu.yaml")}).exit_code, 0);
}

}  // namespace
}  // namespace provisioner::testing
