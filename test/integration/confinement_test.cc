// What libkmod reads under a tree root stays in the tree (issue 19, item 2),
// and snapshot records a dangling modprobe.d link as a link and never leaves
// a partial output (item 3).
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

std::string TempDir(const std::string& tag) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string base = std::string(tmp ? tmp : "/tmp") + "/" + tag + "XXXXXX";
  return ::mkdtemp(base.data()) == nullptr ? "" : base;
}

// A modprobe.d file outside the tree, reached by an absolute and by an
// escaping relative link: neither is read; both are named in a warning.
TEST(ConfinementTest, ModprobeLinksLeavingTheTreeAreNotFollowed) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string outside = TempDir("outside");
  ASSERT_FALSE(outside.empty());
  std::ofstream(outside + "/evil.conf") << "blacklist mlx5_ib\noptions ib_core netns_mode=0\n";
  std::filesystem::create_directories(root + "/etc/modprobe.d");
  ASSERT_EQ(::symlink((outside + "/evil.conf").c_str(), (root + "/etc/modprobe.d/abs.conf").c_str()), 0);
  std::string up;
  for (int i = 0; i < 40; ++i) up += "../";
  ASSERT_EQ(::symlink((up + outside.substr(1) + "/evil.conf").c_str(),
                      (root + "/etc/modprobe.d/rel.conf").c_str()),
            0);
  std::ofstream(root + "/etc/modprobe.d/mine.conf") << "options mlx5_core prof_sel=2\n";
  json j = DiscoverJson(root);
  const json& mp = j["kernelModules"]["modprobe"];
  EXPECT_EQ(mp["blacklist"], json::array()) << mp.dump();
  EXPECT_EQ(mp["options"].dump().find("netns_mode"), std::string::npos) << mp.dump();
  EXPECT_NE(mp["options"].dump().find("prof_sel=2"), std::string::npos) << mp.dump();
  // No contradiction: nothing persists an exclusive mode in this tree.
  EXPECT_TRUE(j["rdma"]["persistentNetnsMode"].is_null()) << j["rdma"].dump();
  const std::string w = j["warnings"].dump();
  EXPECT_NE(w.find("/etc/modprobe.d/abs.conf not read"), std::string::npos) << w;
  EXPECT_NE(w.find("/etc/modprobe.d/rel.conf not read"), std::string::npos) << w;
}

// A dangling *.conf link: discover goes on; snapshot keeps it as a link.
TEST(ConfinementTest, SnapshotKeepsADanglingModprobeLinkAsALink) {
  const std::string root = ExtractHost("cx5-roce");
  std::filesystem::create_directories(root + "/etc/modprobe.d");
  ASSERT_EQ(::symlink("/nonexistent/gone.conf", (root + "/etc/modprobe.d/gone.conf").c_str()), 0);
  EXPECT_NE(DiscoverJson(root)["warnings"].dump().find("/etc/modprobe.d/gone.conf not read"),
            std::string::npos);
  const std::string out = TempDir("snap") + "/out";
  RunResult snap = Provisioner({"snapshot", "--root", root, "--output", out});
  ASSERT_EQ(snap.exit_code, 0) << snap.out << snap.err;
  struct stat st;
  ASSERT_EQ(::lstat((out + "/etc/modprobe.d/gone.conf").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

// A snapshot that fails leaves nothing behind: not the directory it made.
TEST(ConfinementTest, FailedSnapshotLeavesNoPartialOutput) {
  const std::string root = ExtractHost("cx5-roce");
  ASSERT_EQ(::unlink((root + "/proc/modules").c_str()), 0);
  ASSERT_EQ(::mkfifo((root + "/proc/modules").c_str(), 0644), 0);
  const std::string out = TempDir("snapfail") + "/out";
  RunResult snap = Provisioner({"snapshot", "--root", root, "--output", out});
  EXPECT_EQ(snap.exit_code, 1) << snap.out << snap.err;
  EXPECT_NE(snap.err.find("a FIFO, not a regular file"), std::string::npos) << snap.err;
  struct stat st;
  EXPECT_NE(::stat(out.c_str(), &st), 0) << "a partial snapshot was left at " << out;
}

}  // namespace
}  // namespace provisioner::testing
