#include "modules/kmod/kmod_parse.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ParseProcModules, KernelFormat) {
  auto m = ParseProcModules(
      "rdma_ucm 32768 0 - Live 0x0000000000000000\n"
      "ib_core 450560 7 rdma_cm,iw_cm, Live 0xffffffffc0a00000 (E)\n"
      "\n"
      "nvidia_peermem 16384 - - Loading 0x0000000000000000\n");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->size(), 3u);
  EXPECT_EQ((*m)[0].name, "rdma_ucm");
  EXPECT_EQ((*m)[0].size, 32768);
  EXPECT_TRUE((*m)[0].used_by.empty());
  EXPECT_EQ((*m)[1].refcount, 7);
  EXPECT_THAT((*m)[1].used_by, ElementsAre("rdma_cm", "iw_cm"));
  EXPECT_EQ((*m)[2].state, "Loading");
}

TEST(ParseProcModules, BadLineNamesItsNumber) {
  auto m = ParseProcModules("ok 1 0 - Live 0x0\nbroken line\n");
  ASSERT_FALSE(m.ok());
  EXPECT_THAT(m.status().message(), HasSubstr("line 2"));
  EXPECT_FALSE(ParseProcModules("x notanumber 0 - Live 0x0\n").ok());
}

TEST(ParseProcModules, RenderRoundTrips) {
  const std::string text =
      "rdma_ucm 32768 0 - Live 0x0000000000000000\n"
      "ib_core 450560 2 rdma_cm,iw_cm, Live 0x0000000000000000\n";
  auto m = ParseProcModules(text);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(RenderProcModules(*m), text);
}

TEST(ParseModulesDep, NamesAndDependencies) {
  auto d = ParseModulesDep(
      "kernel/drivers/infiniband/hw/mlx5/mlx5_ib.ko.xz: "
      "kernel/drivers/infiniband/core/ib_uverbs.ko.xz "
      "kernel/drivers/infiniband/core/ib_core.ko.xz\n"
      "kernel/drivers/infiniband/core/ib_core.ko:\n"
      "updates/dkms/nvidia-peermem.ko.zst: updates/dkms/nvidia.ko.zst\n");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_THAT(d->at("mlx5_ib"), ElementsAre("ib_uverbs", "ib_core"));
  EXPECT_TRUE(d->at("ib_core").empty());
  EXPECT_THAT(d->at("nvidia_peermem"), ElementsAre("nvidia"));  // '-' normalized
  EXPECT_FALSE(ParseModulesDep("no colon here\n").ok());
}

TEST(ModulesLoad, ParseSkipsCommentsAndRenderRoundTrips) {
  EXPECT_THAT(ParseModulesLoad("# c\n; c\n\nmlx5_ib\n  rdma_ucm  \n"),
              ElementsAre("mlx5_ib", "rdma_ucm"));
  EXPECT_THAT(ParseModulesLoad(RenderModulesLoad({"a", "b"})), ElementsAre("a", "b"));
}

}  // namespace
}  // namespace provisioner
