// Issue 25 item 12: the P_Key tables of an IB host are read once per
// discovery, by the rdma module (facts.rdma ports' pkeys); the ipoib module
// takes them from there instead of reading ports/<n>/pkeys again.
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "test/support/discover_every_module.h"
#include "test/support/files.h"
#include "test/support/read_counting_fs.h"

namespace provisioner {
namespace {

TEST(IpoibPkeysTest, PkeyTablesAreReadOncePerDiscovery) {
  testing::ReadCountingFs fs(NewLocalHostFs(testing::ExtractedHostTree("cx5-ib")), "/pkeys/");
  HostFacts facts = testing::DiscoverWithEveryModule(fs);
  ASSERT_FALSE(fs.reads().empty());
  for (const auto& [path, n] : fs.reads()) EXPECT_EQ(n, 1) << path;
  // And the ipoib facts still hold the table (doctor's ipoib checks use it).
  bool read = false;
  for (const auto& [name, port] : facts.ipoib.ports) read = read || port.pkeys_read;
  EXPECT_TRUE(read);
}

}  // namespace
}  // namespace provisioner
