// A module's backend factory picks by root: its live-system backend (netlink,
// libkmod, ...) for "/" only; any other root, a tree, gets the backend that
// reads and writes the tree's files, never this machine's.
#ifndef PROVISIONER_TEST_SUPPORT_BACKEND_BY_ROOT_H_
#define PROVISIONER_TEST_SUPPORT_BACKEND_BY_ROOT_H_

#include <string>

#include "engine/host/host_fs.h"
#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner::testing {

// `describe(fs)` makes the backend the factory picks for `fs` and says which
// it is (its Name() or Source()): `live` for "/", `tree` for a fresh temp dir.
template <typename Describe>
void ExpectBackendByRoot(Describe describe, const std::string& live, const std::string& tree) {
  auto live_fs = NewLocalHostFs("/");
  EXPECT_EQ(describe(*live_fs), live) << "on the live root /";
  const std::string dir = MakeTempDir("backend-by-root");
  ASSERT_NE(dir, "");
  auto tree_fs = NewLocalHostFs(dir);
  EXPECT_EQ(describe(*tree_fs), tree) << "on the tree " << dir;
}

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_BACKEND_BY_ROOT_H_
