// Issue 31 item 12: the bundled host trees are usable without Bazel:
// `--root FILE.ttar` reads the archive (extracted into a private temporary
// directory, removed at exit); apply and plan --out are refused on it.
#include <dirent.h>

#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

// Entries of $TMPDIR named provisioner-root-*: what --root FILE.ttar leaves behind.
std::vector<std::string> LeftBehind(const std::string& tmp) {
  std::vector<std::string> out;
  if (DIR* d = ::opendir(tmp.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n.rfind("provisioner-root-", 0) == 0) out.push_back(n);
    }
    ::closedir(d);
  }
  return out;
}

RunResult WithTmp(const std::string& tmp, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/env", "TMPDIR=" + tmp, ProvisionerBinary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

TEST(ArchiveRootCliTest, ReadOnlyCommandsReadTheArchiveAsTheExtractedTree) {
  const std::string archive = Example("hosts/cx5-roce.ttar");
  const std::string tree = ExtractHost("cx5-roce");
  const std::string tmp = MakeTempDir("archive-root-tmp");
  ASSERT_FALSE(tmp.empty());

  RunResult from_tree = Provisioner({"discover", "--root", tree, "-o", "json"});
  ASSERT_EQ(from_tree.exit_code, 0) << from_tree.err;
  RunResult from_archive = WithTmp(tmp, {"discover", "--root", archive, "-o", "json"});
  ASSERT_EQ(from_archive.exit_code, 0) << from_archive.err;
  json a = json::parse(from_archive.out, nullptr, false);
  json t = json::parse(from_tree.out, nullptr, false);
  ASSERT_FALSE(a.is_discarded()) << from_archive.out;
  EXPECT_EQ(a["nics"], t["nics"]);
  EXPECT_EQ(a["kernelModules"], t["kernelModules"]);

  const std::string yaml = Example("roce-sriov.yaml");
  RunResult plan_tree = Provisioner({"plan", yaml, "--root", tree, "-o", "json"});
  RunResult plan_archive = WithTmp(tmp, {"plan", yaml, "--root", archive, "-o", "json"});
  ASSERT_EQ(plan_archive.exit_code, plan_tree.exit_code) << plan_archive.err;
  json pa = json::parse(plan_archive.out, nullptr, false);
  json pt = json::parse(plan_tree.out, nullptr, false);
  ASSERT_FALSE(pa.is_discarded()) << plan_archive.out;
  EXPECT_FALSE(pa["changes"].empty());
  EXPECT_EQ(pa["changes"], pt["changes"]);
  EXPECT_EQ(pa["summary"], pt["summary"]);

  RunResult validate = WithTmp(tmp, {"validate", yaml, "--root", archive});
  EXPECT_EQ(validate.exit_code, 0) << validate.out << validate.err;
  RunResult doctor = WithTmp(tmp, {"doctor", "--root", archive, "-o", "json"});
  EXPECT_NE(doctor.exit_code, -1) << doctor.err;
  EXPECT_TRUE(json::accept(doctor.out)) << doctor.out << doctor.err;

  EXPECT_TRUE(LeftBehind(tmp).empty());  // removed at exit
}

TEST(ArchiveRootCliTest, ApplyAndPlanOutAreRefusedAndNothingIsWritten) {
  const std::string archive = WriteTempFile("copy.ttar", ReadFile(Example("hosts/cx5-roce.ttar")));
  const std::string before = ReadFile(archive);
  const std::string tmp = MakeTempDir("archive-root-tmp");
  const std::string yaml = Example("roce-sriov.yaml");

  RunResult apply = WithTmp(tmp, {"apply", yaml, "--root", archive, "-y"});
  EXPECT_EQ(apply.exit_code, 1) << apply.out;
  EXPECT_NE(apply.err.find("--root " + archive +
                           " is a file (a ttar archive): read-only use only, and apply changes the "
                           "root; extract it to a directory first"),
            std::string::npos)
      << apply.err;
  const std::string saved = WriteTempFile("unused-plan.json", "");
  RunResult out = WithTmp(tmp, {"plan", yaml, "--root", archive, "--out", saved + ".new"});
  EXPECT_EQ(out.exit_code, 1) << out.out;
  EXPECT_NE(out.err.find("a saved plan names its root"), std::string::npos) << out.err;
  EXPECT_FALSE(Exists(saved + ".new"));
  EXPECT_EQ(ReadFile(archive), before);
  EXPECT_TRUE(LeftBehind(tmp).empty());
}

// A file that is not a ttar archive, and an archive that would write
// through a link it made, are errors naming the file and line; the
// temporary directory goes either way.
TEST(ArchiveRootCliTest, BadArchivesAreClearErrors) {
  const std::string tmp = MakeTempDir("archive-root-tmp");
  const std::string outside = MakeTempDir("archive-root-outside");
  const std::string yaml = WriteTempFile("not-a-tree.ttar", "apiVersion: provisioner/v1alpha1\n");
  RunResult r = WithTmp(tmp, {"discover", "--root", yaml});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.err.find("provisioner: --root " + yaml +
                       " is a file, read as a ttar archive (a bundled host tree): " + yaml +
                       ":1: unknown keyword: apiVersion"),
            std::string::npos)
      << r.err;

  const std::string evil = WriteTempFile("evil.ttar",
                                         "Directory: sys\nMode: 755\n"
                                         "Path: sys/out\nSymlinkTo: " +
                                             outside +
                                             "\n"
                                             "Path: sys/out/planted\nLines: 1\nx\nMode: 644\n");
  RunResult e = WithTmp(tmp, {"discover", "--root", evil});
  EXPECT_EQ(e.exit_code, 1) << e.out;
  EXPECT_NE(e.err.find(evil + ":5: ttar: path through the symlink "), std::string::npos) << e.err;
  EXPECT_NE(e.err.find("ELOOP"), std::string::npos) << e.err;
  EXPECT_FALSE(Exists(outside + "/planted"));
  EXPECT_TRUE(LeftBehind(tmp).empty());
}

}  // namespace
}  // namespace provisioner::testing
