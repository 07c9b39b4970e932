#include "engine/base/strings.h"

#include <string>

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

}  // namespace
}  // namespace provisioner
