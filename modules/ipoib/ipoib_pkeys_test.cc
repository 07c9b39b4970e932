// Issue 25 item 12: the P_Key tables of an IB host are read once per
// discovery, by the rdma module (facts.rdma ports' pkeys); the ipoib module
// takes them from there instead of reading ports/<n>/pkeys again.
#include <map>
#include <string>

#include "engine/core/engine.h"
#include "engine/module/registry.h"
#include "gtest/gtest.h"
#include "test/support/read_counting_fs.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

TEST(IpoibPkeysTest, PkeyTablesAreReadOncePerDiscovery) {
  const std::string root = testing::MakeTempDir("cx5-ib");
  ASSERT_TRUE(testing::ExtractTtar(testing::HostTreePath("cx5-ib"), root).ok());
  testing::ReadCountingFs fs(NewLocalHostFs(root), "/pkeys/");
  auto modules = ModuleRegistry::CreateAll();
  HostContext ctx;
  ctx.fs = &fs;
  auto facts = Discover(modules, ctx);
  ASSERT_TRUE(facts.ok()) << facts.status().message();
  ASSERT_FALSE(fs.reads().empty());
  for (const auto& [path, n] : fs.reads()) EXPECT_EQ(n, 1) << path;
  // And the ipoib facts still hold the table (doctor's ipoib checks use it).
  bool read = false;
  for (const auto& [name, port] : facts->ipoib.ports) read = read || port.pkeys_read;
  EXPECT_TRUE(read);
}

}  // namespace
}  // namespace provisioner
