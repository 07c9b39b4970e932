// The operator's experience (issue 31), end to end with the real binary:
// lossless YAML, replacements marked, apply that asks on a terminal (run in
// a real pty from forkpty(3): stdin, stdout and stderr are its slave side, as
// under ssh or a terminal emulator), flags anywhere, validate against a host.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/integration/pty_run.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const std::string kPf0 = "/sys/bus/pci/devices/0000:af:00.0";

// The host's state (sys and etc; run/ holds apply's lock file).
std::string TreeText(const std::string& root) {
  std::string text;
  for (const char* dir : {"/sys", "/etc"}) {
    auto t = TreeToTtar(root + dir);
    EXPECT_TRUE(t.ok());
    if (t.ok()) text += *t;
  }
  return text;
}

// cx5-roce-vfs (4 VFs on af:00.0) asked for 8: a replacement.
std::string EightVfs() { return WriteTempFile("host.yaml", Pf0Yaml(8)); }

// Item 1: a YAML 1.1 reader (PyYAML, what Ansible uses) reads discover's
// YAML as exactly the JSON document: PCI addresses as mapping keys were
// base-60 numbers (0000:17:01.0 -> 1021.0).
TEST(UxCliTest, DiscoverYamlReadsBackAsTheJsonOnEveryTree) {
  const std::vector<std::string> trees = BundledHostTrees();
  ASSERT_GE(trees.size(), 12u);
  const char* kCompare = R"py(import json, sys, yaml
a = json.load(open(sys.argv[1]))
b = yaml.safe_load(open(sys.argv[2]))
def diff(x, y, path):
    if type(x) != type(y) and not (isinstance(x, (int, float)) and isinstance(y, (int, float)) and not isinstance(x, bool) and not isinstance(y, bool)):
        return "%s: %r (json) vs %r (yaml)" % (path, x, y)
    if isinstance(x, dict):
        if set(x) != set(y):
            return "%s: keys %r vs %r" % (path, sorted(set(x) ^ set(y), key=str)[:5], "")
        for k in x:
            d = diff(x[k], y[k], path + "/" + str(k))
            if d: return d
    elif isinstance(x, list):
        if len(x) != len(y): return "%s: %d vs %d items" % (path, len(x), len(y))
        for i, (p, q) in enumerate(zip(x, y)):
            d = diff(p, q, "%s/%d" % (path, i))
            if d: return d
    elif x != y:
        return "%s: %r vs %r" % (path, x, y)
    return None
d = diff(a, b, "")
if d or a != b:
    print(d or "documents differ"); sys.exit(1)
)py";
  std::string script = WriteTempFile("compare.py", kCompare);
  for (const std::string& name : trees) {
    SCOPED_TRACE(name);
    std::string root = ExtractHost(name);
    RunResult j = Provisioner({"discover", "--root", root, "-o", "json"});
    RunResult y = Provisioner({"discover", "--root", root, "-o", "yaml"});
    ASSERT_EQ(j.exit_code, 0) << j.err;
    ASSERT_EQ(y.exit_code, 0) << y.err;
    std::string jf = WriteTempFile(name + ".json", j.out);
    std::string yf = WriteTempFile(name + ".yaml", y.out);
    RunResult cmp = provisioner::testing::Run({"/usr/bin/python3", script, jf, yf});
    EXPECT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
  }
}

// Item 2: numVfs between two non-zero counts destroys every VF first.
TEST(UxCliTest, NumVfsBetweenNonZeroCountsIsAReplacement) {
  std::string root = ExtractHost("cx5-roce-vfs");
  std::string yaml = EightVfs();
  json j = PlanJson(yaml, root);
  ASSERT_EQ(j["changes"].size(), 1u);
  EXPECT_EQ(j["changes"][0]["action"], "replace");
  EXPECT_EQ(j["summary"]["replace"], 1);
  EXPECT_EQ(j["summary"]["add"], 0);
  EXPECT_EQ(j["summary"]["change"], 0);
  EXPECT_EQ(j["summary"]["remove"], 0);
  EXPECT_EQ(j["summary"]["changes"], 1);
  RunResult pt = Provisioner({"plan", yaml, "--root", root});
  ASSERT_EQ(pt.exit_code, 0) << pt.err;
  EXPECT_NE(pt.out.find("  -/+ sriov 0000:af:00.0 numVfs: 4 -> 8  (forces replacement: destroys 4 "
                        "VFs, creates 8)\n"),
            std::string::npos)
      << pt.out;
  EXPECT_NE(pt.out.find("Plan: 0 to add, 0 to change, 1 to replace, 0 to remove."),
            std::string::npos)
      << pt.out;
  // apply's JSON carries the action too.
  RunResult dry = Provisioner({"apply", yaml, "--root", root, "--dry-run", "-o", "json"});
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(ParseJson(dry)["changes"][0]["action"], "replace");
}

// Item 3: on a terminal apply shows the plan and asks; "n" changes nothing.
TEST(UxCliTest, ApplyOnATerminalAsksAndNoChangesNothing) {
  std::string root = ExtractHost("cx5-roce-vfs");
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  std::string yaml = EightVfs();
  const std::string before = TreeText(root);
  PtyResult r =
      RunInPty({ProvisionerBinary(), "apply", yaml, "--root", root, "--settle-timeout", "20"},
               "[y/N] ", "n\n", {{"NO_COLOR", "1"}});
  EXPECT_TRUE(r.answered) << r.out;
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("-/+ sriov 0000:af:00.0 numVfs: 4 -> 8"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Apply 1 change to " + root + "? [y/N] "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("apply cancelled; nothing was changed"), std::string::npos) << r.out;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "4\n");
  EXPECT_TRUE(before == TreeText(root)) << "answering n changed the tree";

  // "y" applies, and says where.
  PtyResult y =
      RunInPty({ProvisionerBinary(), "apply", yaml, "--root", root, "--settle-timeout", "20"},
               "[y/N] ", "y\n", {{"NO_COLOR", "1"}});
  EXPECT_TRUE(y.answered) << y.out;
  EXPECT_EQ(y.exit_code, 0) << y.out;
  EXPECT_NE(y.out.find("Apply complete: 0 added, 0 changed, 1 replaced, 0 removed; verified under " +
                        root + "."),
            std::string::npos)
      << y.out;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "8\n");
}

TEST(UxCliTest, ApplyWithAutoApproveOrWithoutATerminalNeverAsks) {
  std::string root = ExtractHost("cx5-roce-vfs");
  KernelSimDaemon sim(root);
  ASSERT_TRUE(sim.ready());
  std::string yaml = EightVfs();
  // -y on a terminal: no question (nothing is typed; asking would block).
  PtyResult r = RunInPty(
      {ProvisionerBinary(), "apply", yaml, "--root", root, "-y", "--settle-timeout", "20"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("[y/N]"), std::string::npos) << r.out;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "8\n");
  // Pipes (systemd, Ansible, cloud-init): applies as before, no question.
  std::string yaml4 = WriteTempFile("host4.yaml", Pf0Yaml(4));
  RunResult a = Provisioner({"apply", yaml4, "--root", root, "--settle-timeout", "20"});
  EXPECT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_EQ(a.out.find("[y/N]"), std::string::npos) << a.out;
  EXPECT_EQ(ReadFile(root + kPf0 + "/sriov_numvfs"), "4\n");
}

// Item 5: global flags after the subcommand; -q and -v.
TEST(UxCliTest, GlobalFlagsAnywhere) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = Example("roce-sriov.yaml");
  RunResult debug =
      Provisioner({"plan", yaml, "--root", root, "--log-level", "debug", "--no-color"});
  EXPECT_EQ(debug.exit_code, 0) << debug.err;
  EXPECT_NE(debug.err.find("provisioner: debug: "), std::string::npos) << debug.err;
  RunResult v = Provisioner({"plan", yaml, "--root", root, "-vv"});
  EXPECT_EQ(v.exit_code, 0) << v.err;
  EXPECT_NE(v.err.find("provisioner: debug: "), std::string::npos) << v.err;
  RunResult q = Provisioner({"plan", yaml, "--root", root, "-q"});
  EXPECT_EQ(q.exit_code, 0) << q.err;
  EXPECT_EQ(q.err, "");
  EXPECT_NE(q.out.find("Plan: "), std::string::npos) << q.out;
  // A wrong one points at the subcommand's help.
  RunResult bad = Provisioner({"plan", yaml, "--bogus"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("Run 'provisioner plan --help' for usage."), std::string::npos) << bad.err;
  // Extra arguments in the order they were given (CLI11 lists them reversed).
  RunResult extra = Provisioner({"plan", yaml, "first", "second"});
  EXPECT_EQ(extra.exit_code, 1);
  EXPECT_NE(extra.err.find("unexpected arguments: first second\n"), std::string::npos) << extra.err;
  EXPECT_NE(extra.err.find("Run 'provisioner plan --help' for usage."), std::string::npos)
      << extra.err;
}

// Item 6: -o yaml wherever -o json is; validate -o json.
TEST(UxCliTest, YamlWhereverJsonAndValidateJson) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = Example("roce-sriov.yaml");
  for (const std::vector<std::string>& cmd : {std::vector<std::string>{"plan", yaml},
                                              {"apply", yaml, "--dry-run"},
                                              {"doctor", yaml},
                                              {"validate", yaml}}) {
    SCOPED_TRACE(cmd[0]);
    std::vector<std::string> args = cmd;
    args.insert(args.end(), {"--root", root, "-o", "json"});
    RunResult j = Provisioner(args);
    args.back() = "yaml";
    RunResult y = Provisioner(args);
    EXPECT_EQ(j.exit_code, y.exit_code) << j.err << y.err;
    ASSERT_FALSE(ParseJson(j).is_discarded());
    std::string jf = WriteTempFile("doc.json", j.out);
    std::string yf = WriteTempFile("doc.yaml", y.out);
    RunResult cmp = provisioner::testing::Run(
        {"/usr/bin/python3", "-c",
         "import json,sys,yaml\n"
         "sys.exit(0 if json.load(open(sys.argv[1])) == yaml.safe_load(open(sys.argv[2])) "
         "else 1)",
         jf, yf});
    EXPECT_EQ(cmp.exit_code, 0) << j.out << "\n" << y.out << cmp.err;
  }
  // -o=json is -o json.
  RunResult eq = Provisioner({"plan", yaml, "--root", root, "-o=json"});
  EXPECT_EQ(eq.exit_code, 0) << eq.err;
  EXPECT_EQ(ParseJson(eq)["formatVersion"], 1);
}

// Item 7: validate is offline by default and says so; --root checks a host.
TEST(UxCliTest, ValidateOfflineByDefaultAndAgainstAHostWithRoot) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = WriteTempFile("typo.yaml", HostYaml(R"(  nics:
    - name: pf0
      nicSelector: { pfNames: ["ens6f0np1"] }
      numVfs: 8
)"));
  RunResult offline = Provisioner({"validate", yaml});
  EXPECT_EQ(offline.exit_code, 0) << offline.err;
  EXPECT_NE(offline.out.find("schema and semantics; no host checked"), std::string::npos)
      << offline.out;
  RunResult j = Provisioner({"validate", yaml, "-o", "json"});
  EXPECT_EQ(j.exit_code, 0);
  json doc = ParseJson(j);
  EXPECT_EQ(doc["valid"], true);
  EXPECT_EQ(doc["hostChecked"], false);
  RunResult host = Provisioner({"validate", yaml, "--root", root});
  EXPECT_EQ(host.exit_code, 1) << host.out;
  EXPECT_NE(host.err.find("typo.yaml:8:20: spec.nics[0].nicSelector: selects no PCI function"),
            std::string::npos)
      << host.err;
  // The candidates, and the nearest one to the typo.
  EXPECT_NE(host.err.find("typo.yaml:8:20: note: spec.nics[0].nicSelector: could match: "),
            std::string::npos)
      << host.err;
  EXPECT_NE(host.err.find("0000:af:00.0 ens6f0np0 15b3:1017, 0000:af:00.1 ens6f1np1 15b3:1017"),
            std::string::npos)
      << host.err;
  EXPECT_NE(host.err.find("; did you mean ens6f0np0?"), std::string::npos) << host.err;
  RunResult hj = Provisioner({"validate", yaml, "--root", root, "-o", "json"});
  EXPECT_EQ(hj.exit_code, 1);
  json hdoc = ParseJson(hj);
  EXPECT_EQ(hdoc["valid"], false);
  EXPECT_EQ(hdoc["hostChecked"], true);
  ASSERT_FALSE(hdoc["diagnostics"].empty());
  EXPECT_EQ(hdoc["diagnostics"][0]["path"], "spec.nics[0].nicSelector");
  RunResult good = Provisioner({"validate", Example("roce-sriov.yaml"), "--root", root});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("for the host under " + root + ": schema, semantics and host checks"),
            std::string::npos)
      << good.out;
}

// Item 8: -o is a format everywhere; terraform's -out gets a hint; a saved
// plan stores the absolute root.
TEST(UxCliTest, OneMeaningPerFlag) {
  std::string root = ExtractHost("cx5-roce");
  std::string yaml = Example("roce-sriov.yaml");
  RunResult out = Provisioner({"plan", yaml, "--root", root, "-out", "x.plan"});
  EXPECT_EQ(out.exit_code, 1);
  EXPECT_NE(out.err.find("--out PLANFILE"), std::string::npos) << out.err;
  std::string dir = MakeTempDir("snap") + "/tree";
  RunResult snap = Provisioner({"snapshot", "--root", root, "--output-dir", dir});
  EXPECT_EQ(snap.exit_code, 0) << snap.err;
  std::string plan_file = MakeTempDir("plan") + "/p.json";
  RunResult p = Provisioner({"plan", yaml, "--root", root + "/./sys/..", "--out", plan_file});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  std::ifstream in(plan_file);
  json saved = json::parse(in, nullptr, false);
  ASSERT_FALSE(saved.is_discarded());
  EXPECT_EQ(saved["root"], root);
}

// Issue 31 (low): device names are listed in natural order wherever a user
// reads them (discover's table and JSON, doctor's targets): mlx5_10 after
// mlx5_9, as `ls -v` would, not after mlx5_1. PCI addresses keep their
// fixed-width hex order (0000:1a:00.0 after 0000:17:00.0).
std::vector<int> Mlx5Numbers(const std::string& text) {
  std::vector<int> out;
  for (size_t at = text.find("mlx5_"); at != std::string::npos; at = text.find("mlx5_", at + 5)) {
    size_t end = at + 5;
    while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
    if (end > at + 5) out.push_back(std::stoi(text.substr(at + 5, end - at - 5)));
  }
  return out;
}

TEST(UxCliTest, DeviceNamesInNaturalOrder) {
  const std::vector<int> twelve = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  std::string hgx = ExtractHost("hgx-h100");  // mlx5_0 .. mlx5_11
  RunResult text = Provisioner({"discover", "--root", hgx});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  size_t rdma = text.out.find("RDMA devices:");
  ASSERT_NE(rdma, std::string::npos) << text.out;
  std::string table = text.out.substr(rdma, text.out.find("\n\n", rdma) - rdma);
  EXPECT_EQ(Mlx5Numbers(table), twelve) << table;

  json doc = ParseJson(Provisioner({"discover", "--root", hgx, "-o", "json"}));
  std::string names;
  for (const auto& d : doc["rdmaDevices"]) names += d["name"].get<std::string>() + " ";
  EXPECT_EQ(Mlx5Numbers(names), twelve) << names;
  std::vector<std::string> pci;
  for (const auto& n : doc["nics"]) pci.push_back(n["pciAddress"].get<std::string>());
  ASSERT_GE(pci.size(), 2u);
  EXPECT_EQ(pci[0], "0000:1a:00.0");
  EXPECT_TRUE(std::is_sorted(pci.begin(), pci.end())) << doc["nics"].dump();

  json doctor = ParseJson(Provisioner({"doctor", "--root", hgx, "-o", "json"}));
  std::string ports;
  for (const auto& c : doctor["checks"]) {
    if (c["id"] == "rdma.port-netdev") ports += c["target"].get<std::string>() + " ";
  }
  EXPECT_EQ(Mlx5Numbers(ports), twelve) << ports;
}

// Issue 31 (low): a plan without changes says how many PFs with VFs no nic
// of host.yaml selects (their VFs are left as they are), from the facts.
TEST(UxCliTest, NoChangesCountsPfsWithVfsNotInHostYaml) {
  std::string root = ExtractHost("cx5-roce-vfs");  // 4 VFs on af:00.0, none on af:00.1
  const std::string head = HostYaml(R"(  nics:
    - name: pf
)");
  std::string other = WriteTempFile(
      "host.yaml",
      head + "      nicSelector: { rootDevices: [\"0000:af:00.1\"] }\n      numVfs: 0\n");
  RunResult t = Provisioner({"plan", other, "--root", root});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("No changes. The host matches the desired state (1 PF with VFs is not in "
                       "host.yaml).\n"),
            std::string::npos)
      << t.out;
  json j = ParseJson(Provisioner({"plan", other, "--root", root, "-o", "json"}));
  EXPECT_EQ(j["summary"]["unmanagedPfsWithVfs"], 1) << j.dump();
  RunResult a = Provisioner({"apply", other, "--root", root, "--auto-approve"});
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  EXPECT_NE(a.out.find("(1 PF with VFs is not in host.yaml)"), std::string::npos) << a.out;

  std::string managed = WriteTempFile(
      "host.yaml",
      head + "      nicSelector: { rootDevices: [\"0000:af:00.0\"] }\n      numVfs: 4\n");
  RunResult m = Provisioner({"plan", managed, "--root", root});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("No changes. The host matches the desired state.\n"), std::string::npos)
      << m.out;
  json mj = ParseJson(Provisioner({"plan", managed, "--root", root, "-o", "json"}));
  EXPECT_FALSE(mj["summary"].contains("unmanagedPfsWithVfs")) << mj.dump();
}

// Item 11: doctor groups a repeated cause, filters with --only, and says
// when a host has no RDMA at all.
TEST(UxCliTest, DoctorGroupsFiltersAndSaysNoRdma) {
  std::string hgx = ExtractHost("hgx-h100");
  RunResult all = Provisioner({"doctor", "--root", hgx});
  EXPECT_NE(all.out.find("WARN  roce.nccl-priority  \u00d712: "), std::string::npos) << all.out;
  EXPECT_NE(all.out.find("(the same for the other 11; -o json lists each one's evidence)"),
            std::string::npos)
      << all.out;
  RunResult j = Provisioner({"doctor", "--root", hgx, "-o", "json"});
  json doc = ParseJson(j);
  size_t nccl = 0;
  for (const auto& c : doc["checks"]) nccl += c["id"] == "roce.nccl-priority";
  EXPECT_EQ(nccl, 12u);  // JSON keeps each
  RunResult warn = Provisioner({"doctor", "--root", hgx, "--only", "warn", "-o", "json"});
  json wdoc = ParseJson(warn);
  ASSERT_FALSE(wdoc["checks"].empty());
  for (const auto& c : wdoc["checks"]) EXPECT_NE(c["verdict"], "ok") << c.dump();
  EXPECT_EQ(wdoc["summary"], doc["summary"]);  // counts stay those of every check
  RunResult fail = Provisioner({"doctor", "--root", hgx, "--only", "fail"});
  EXPECT_EQ(fail.out.find("WARN"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("(0 shown)"), std::string::npos) << fail.out;

  std::string ryzen = ExtractHost("ghw-amd64-amd-ryzen-1600");  // no RDMA NIC at all
  RunResult none = Provisioner({"doctor", "--root", ryzen});
  EXPECT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("WARN  host.rdma"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("no RDMA on this host"), std::string::npos) << none.out;
  EXPECT_EQ(none.out.find("No checks apply"), std::string::npos) << none.out;
}

// help, EXIT STATUS / EXAMPLES / ENVIRONMENT in --help.
TEST(UxCliTest, HelpHasExitStatusExamplesEnvironment) {
  RunResult h = Provisioner({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  for (const char* s :
       {"EXIT STATUS:", "EXAMPLES:", "ENVIRONMENT:", "NO_COLOR", "  3  apply converged"}) {
    EXPECT_NE(h.out.find(s), std::string::npos) << s << "\n" << h.out;
  }
  RunResult sub = Provisioner({"help", "plan"});
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.out.find("Usage: provisioner plan"), std::string::npos) << sub.out;
  EXPECT_NE(sub.out.find("PLANFILE"), std::string::npos) << sub.out;
}

// no-color.org: NO_COLOR set but empty keeps colour; TERM=dumb drops it.
TEST(UxCliTest, ColourFollowsNoColorAndTerm) {
  std::string root = ExtractHost("cx5-roce");
  std::vector<std::string> argv = {ProvisionerBinary(), "plan", Example("roce-sriov.yaml"),
                                   "--root", root};
  PtyResult plain = RunInPty(argv, "", "", {{"TERM", "xterm"}});
  EXPECT_NE(plain.out.find("\033[3"), std::string::npos) << plain.out;
  PtyResult empty = RunInPty(argv, "", "", {{"TERM", "xterm"}, {"NO_COLOR", ""}});
  EXPECT_NE(empty.out.find("\033[3"), std::string::npos) << empty.out;
  PtyResult set = RunInPty(argv, "", "", {{"TERM", "xterm"}, {"NO_COLOR", "1"}});
  EXPECT_EQ(set.out.find("\033[3"), std::string::npos) << set.out;
  PtyResult dumb = RunInPty(argv, "", "", {{"TERM", "dumb"}});
  EXPECT_EQ(dumb.out.find("\033[3"), std::string::npos) << dumb.out;
}

// Issue 31 (low): validate --show-expanded keeps host.yaml's key order
// (it was every mapping's keys sorted: spec.ipPools first, rdma last, a
// nic's linkType before its name); the rails' items take their template's.
TEST(UxCliTest, ShowExpandedKeepsInputOrder) {
  RunResult r = Provisioner({"validate", Example("rails.yaml"), "--show-expanded"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto at = [&](const std::string& what) {
    const size_t p = r.out.find(what);
    EXPECT_NE(p, std::string::npos) << what << " in\n" << r.out;
    return p;
  };
  EXPECT_LT(at("apiVersion:"), at("\nkind:"));
  EXPECT_LT(at("\nkind:"), at("\nmetadata:"));
  EXPECT_LT(at("\n  rdma:"), at("\n  kernelModules:"));
  EXPECT_LT(at("\n  kernelModules:"), at("\n  nics:"));
  EXPECT_LT(at("\n  nics:"), at("\n  ipPools:"));
  EXPECT_LT(at("\n  multusConfigs:"), at("\n  kubernetes:"));
  const size_t nic = at("- name: \"gpu1-nic\"\n");
  EXPECT_LT(nic, at("linkType: \"eth\""));
  EXPECT_LT(at("nicSelector:"), at("numVfs: 12"));
  EXPECT_LT(at("numVfs: 12"), at("resourceName: \"gpu1sriov\""));
}

// Issue 31 (low): after an apply whose change the kernel deferred to the
// next boot (the RDMA netns switch, refused while a namespace exists: the
// tree stand-in run/netns/blue), plan says the change is pending a reboot
// instead of offering it as new work.
TEST(UxCliTest, PlanAfterARebootPendingApplySaysPendingReboot) {
  std::string root = ExtractHostWithNetns("cx5-roce", "blue");
  std::string yaml = WriteTempFile("exclusive.yaml", HostYaml("  rdma:\n    netnsMode: exclusive\n"));
  RunResult before = Provisioner({"plan", yaml, "--root", root});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  EXPECT_EQ(before.out.find("pending reboot"), std::string::npos) << before.out;
  RunResult apply = Provisioner({"apply", yaml, "--root", root});
  ASSERT_EQ(apply.exit_code, 3) << apply.out << apply.err;
  RunResult plan = Provisioner({"plan", yaml, "--root", root});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("~ rdma system netnsMode: shared -> exclusive  (pending reboot: applied, "
                          "takes effect at the next boot)"),
            std::string::npos)
      << plan.out;
  EXPECT_NE(plan.out.find("; 1 change pending reboot."), std::string::npos) << plan.out;
  json j = PlanJson(yaml, root);
  EXPECT_EQ(j["summary"]["pendingReboot"], 1);
  EXPECT_EQ(j["pendingReboot"], json({"rdma/system/netnsMode"}));
}

}  // namespace
}  // namespace provisioner::testing
