// Issue 25 item 12: modprobe.d is read once per discovery (by the kmod
// module, into KmodFacts::options_by_file); the rdma module takes the
// ib_core netns_mode from there instead of building its own confined copy
// and reading ib_core.conf again.
#include <fstream>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "test/support/discover_every_module.h"
#include "test/support/files.h"
#include "test/support/read_counting_fs.h"

namespace provisioner {
namespace {

TEST(ModprobeOnceTest, ModprobeDirIsReadOncePerDiscovery) {
  const std::string root = testing::ExtractedHostTree("cx5-roce");
  std::ofstream(root + "/etc/modprobe.d/ib_core.conf") << "options ib_core netns_mode=0\n";
  std::ofstream(root + "/etc/modprobe.d/mlx5.conf") << "options mlx5_core prof_sel=2\n";
  testing::ReadCountingFs fs(NewLocalHostFs(root), "modprobe.d/");
  HostFacts facts = testing::DiscoverWithEveryModule(fs);
  ASSERT_EQ(fs.reads().count("/etc/modprobe.d/ib_core.conf"), 1u);
  for (const auto& [path, n] : fs.reads()) EXPECT_EQ(n, 1) << path;
  // And the rdma facts still say what the file sets.
  EXPECT_EQ(facts.rdma.persistent_netns_mode, std::optional<std::string>("exclusive"));
  EXPECT_EQ(facts.rdma.persistent_netns_source, "/etc/modprobe.d/ib_core.conf");
  EXPECT_EQ(facts.rdma.ib_core_conf_netns_mode, std::optional<std::string>("exclusive"));
}

}  // namespace
}  // namespace provisioner
