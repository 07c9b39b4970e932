// End-to-end: `provisioner snapshot` of each host tree; discover and plan on
// the snapshot give what they give on the original.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

// The output directory of a snapshot: a fresh, not yet existing path.
std::string NewOutputDir(const std::string& tag) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string base = std::string(tmp ? tmp : "/tmp") + "/snapXXXXXX";
  if (::mkdtemp(base.data()) == nullptr) return "";
  return base + "/" + tag;  // missing: snapshot creates it
}

// `text` with every occurrence of the tree's directory replaced by "<root>":
// where the tree is is the only difference allowed (messages name it).
std::string Unrooted(std::string text, const std::string& root) {
  for (size_t at = text.find(root); at != std::string::npos; at = text.find(root, at)) {
    text.replace(at, root.size(), "<root>");
  }
  return text;
}

json Discover(const std::string& root) {
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(Unrooted(r.out, root), nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  return j;
}

std::string FirstNic(const json& facts) {
  return facts["nics"].empty() ? std::string() : facts["nics"][0]["pciAddress"].get<std::string>();
}

class SnapshotCliTest : public ::testing::TestWithParam<const char*> {};

TEST_P(SnapshotCliTest, DiscoverOnSnapshotEqualsOriginal) {
  std::string root = ExtractHost(GetParam());
  std::string out = NewOutputDir(GetParam());
  ASSERT_FALSE(out.empty());
  // A file no discovery reads: a snapshot has only what was read.
  ::mkdir((root + "/etc").c_str(), 0755);
  std::ofstream(root + "/etc/not-read-by-discovery") << "x\n";
  RunResult snap = Provisioner({"snapshot", "--root", root, "--output", out});
  ASSERT_EQ(snap.exit_code, 0) << snap.out << snap.err;
  EXPECT_NE(snap.out.find("written to " + out), std::string::npos) << snap.out;
  json original = Discover(root);
  json copy = Discover(out);
  EXPECT_EQ(copy, original) << "original:\n" << original.dump(2) << "\nsnapshot:\n" << copy.dump(2);
  struct stat st;
  EXPECT_NE(::stat((out + "/etc/not-read-by-discovery").c_str(), &st), 0);
  // The same shape: the PF's sysfs path is a relative link, as in the original.
  char a[4096], b[4096];
  ssize_t na = ::readlink((root + "/sys/bus/pci/devices/" + FirstNic(original)).c_str(), a, sizeof a);
  ssize_t nb = ::readlink((out + "/sys/bus/pci/devices/" + FirstNic(original)).c_str(), b, sizeof b);
  ASSERT_GT(na, 0);
  EXPECT_EQ(std::string(b, nb > 0 ? static_cast<size_t>(nb) : 0), std::string(a, static_cast<size_t>(na)));
}

INSTANTIATE_TEST_SUITE_P(Trees, SnapshotCliTest,
                         ::testing::Values("cx5-roce", "cx5-ib", "cx5-roce-vfs", "i350-sriov-ghw"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n) {
                             if (c == '-') c = '_';
                           }
                           return n;
                         });

TEST(SnapshotCli, PlanOnSnapshotEqualsOriginal) {
  for (const char* example : {"roce-sriov.yaml", "rails-8gpu.yaml"}) {
    std::string root = ExtractHost("cx5-roce");
    std::string out = NewOutputDir("plan");
    RunResult snap = Provisioner({"snapshot", "--root", root, "--output", out});
    ASSERT_EQ(snap.exit_code, 0) << snap.err;
    std::string yaml = RunfilePath(std::string("examples/") + example);
    RunResult a = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
    RunResult b = Provisioner({"plan", yaml, "--root", out, "-o", "json"});
    EXPECT_EQ(a.exit_code, b.exit_code) << example << "\n" << a.err << "\n" << b.err;
    EXPECT_EQ(Unrooted(a.err, root), Unrooted(b.err, out)) << example;
    if (a.exit_code == 0) {
      json pa = json::parse(Unrooted(a.out, root), nullptr, false);
      json pb = json::parse(Unrooted(b.out, out), nullptr, false);
      ASSERT_FALSE(pa.is_discarded()) << a.out;
      EXPECT_EQ(pa, pb) << example;
      EXPECT_FALSE(pa["changes"].empty()) << example;  // a plan worth comparing
    }
  }
}

TEST(SnapshotCli, RefusesNonEmptyOutputDirectory) {
  std::string root = ExtractHost("cx5-roce");
  std::string out = NewOutputDir("busy");
  ASSERT_EQ(::mkdir(out.c_str(), 0755), 0);
  std::ofstream(out + "/keep") << "mine\n";
  RunResult snap = Provisioner({"snapshot", "--root", root, "--output", out});
  EXPECT_EQ(snap.exit_code, 1);
  EXPECT_NE(snap.err.find("not empty"), std::string::npos) << snap.err;
  EXPECT_NE(snap.err.find(out), std::string::npos) << snap.err;
  struct stat st;
  EXPECT_NE(::stat((out + "/sys").c_str(), &st), 0);  // nothing written
  // An existing empty directory is fine.
  std::string empty = NewOutputDir("empty");
  ASSERT_EQ(::mkdir(empty.c_str(), 0755), 0);
  EXPECT_EQ(Provisioner({"snapshot", "--root", root, "--output", empty}).exit_code, 0);
}

}  // namespace
}  // namespace provisioner::testing
