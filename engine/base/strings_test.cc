#include "engine/base/strings.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

TEST(TrimTest, BothEndsOfEveryAsciiSpace) {
  EXPECT_EQ(Trim(" \t\n\v\f\rLINK_TYPE_P1  IB(1)\r\n\t "), "LINK_TYPE_P1  IB(1)");
  EXPECT_EQ(Trim("x"), "x");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t\n "), "");
}

TEST(TrimTest, OnlyTheCharactersGiven) {
  EXPECT_EQ(Trim("\t 12 \n", " \n"), "\t 12");
  EXPECT_EQ(Trim("--a-b--", "-"), "a-b");
  EXPECT_EQ(Trim(std::string("\0ab\0", 4), std::string_view("\0", 1)), "ab");
}

TEST(TrimRightTest, EndOnly) {
  EXPECT_EQ(TrimRight("  -E- Failed \r\n"), "  -E- Failed");
  EXPECT_EQ(TrimRight("\t\n"), "");
  EXPECT_EQ(TrimRight(""), "");
  EXPECT_EQ(TrimRight("a"), "a");
}

TEST(TrimRightTest, OnlyTheCharactersGiven) {
  EXPECT_EQ(TrimRight("0000:af:00.0 \n", " \n"), "0000:af:00.0");
  EXPECT_EQ(TrimRight("12\t\n", " \n"), "12\t");
  EXPECT_EQ(TrimRight(" \n", " \n"), "");
}

TEST(NearestNamesTest, TheClosestOnlyAndNoneWhenFarOrExact) {
  const std::vector<std::string> mods = {"mlx5_core", "mlx5_ib", "ib_core", "ib_uverbs",
                                         "rdma_ucm"};
  EXPECT_EQ(NearestNames("mlx5-ib", mods), std::vector<std::string>{"mlx5_ib"});
  EXPECT_EQ(NearestNames("rdma_ucn", mods), std::vector<std::string>{"rdma_ucm"});
  EXPECT_TRUE(NearestNames("gdrdrv", mods).empty());
  EXPECT_TRUE(NearestNames("mlx5_ib", mods).empty());
}

TEST(SplitTest, LinesAndWhitespaceFields) {
  EXPECT_EQ(SplitLines("a b\n\nc"), (std::vector<std::string>{"a b", "", "c"}));
  EXPECT_EQ(SplitLines("a\n"), std::vector<std::string>{"a"});
  EXPECT_TRUE(SplitLines("").empty());
  EXPECT_EQ(SplitWhitespace("  options\tib_core  netns_mode=0 "),
            (std::vector<std::string>{"options", "ib_core", "netns_mode=0"}));
  EXPECT_TRUE(SplitWhitespace(" \t ").empty());
}

TEST(NaturalLessTest, NumbersByValue) {
  std::vector<std::string> v = {"mlx5_10", "mlx5_9", "mlx5_1", "ens10f0", "ens6f1",
                                "ens6f0",  "a01",    "a1",     "a"};
  std::sort(v.begin(), v.end(), NaturalLess);
  EXPECT_EQ(v, (std::vector<std::string>{"a", "a1", "a01", "ens6f0", "ens6f1", "ens10f0", "mlx5_1",
                                         "mlx5_9", "mlx5_10"}));
  EXPECT_FALSE(NaturalLess("x2", "x2"));
  EXPECT_TRUE(NaturalLess("0000:17:00.0", "0000:af:00.0"));
}

}  // namespace
}  // namespace provisioner
