#include "engine/base/strings.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

// Trim and TrimRight on one input each: what the whole trim leaves and what
// trimming the end only leaves, with `chars` (default: every ASCII space).
struct TrimCase {
  std::string input;
  std::string chars;
  std::string trim;
  std::string trim_right;
};

TEST(TrimTest, BothEndsOrTheEndOnlyOfTheCharactersGiven) {
  const std::string ws(kAsciiWhitespace);
  const TrimCase cases[] = {
      {" \t\n\v\f\rLINK_TYPE_P1  IB(1)\r\n\t ", ws, "LINK_TYPE_P1  IB(1)",
       " \t\n\v\f\rLINK_TYPE_P1  IB(1)"},
      {"  -E- Failed \r\n", ws, "-E- Failed", "  -E- Failed"},
      {"x", ws, "x", "x"},
      {"", ws, "", ""},
      {" \t\n ", ws, "", ""},
      {"\t 12 \n", " \n", "\t 12", "\t 12"},
      {"12\t\n", " \n", "12\t", "12\t"},
      {"0000:af:00.0 \n", " \n", "0000:af:00.0", "0000:af:00.0"},
      {" \n", " \n", "", ""},
      {"--a-b--", "-", "a-b", "--a-b"},
      {std::string("\0ab\0", 4), std::string("\0", 1), "ab", std::string("\0ab", 3)},
  };
  for (const TrimCase& c : cases) {
    EXPECT_EQ(Trim(c.input, c.chars), c.trim) << Printable(c.input);
    EXPECT_EQ(TrimRight(c.input, c.chars), c.trim_right) << Printable(c.input);
  }
  EXPECT_EQ(Trim(" a\n"), "a");  // the default: every ASCII space
  EXPECT_EQ(TrimRight(" a\n"), " a");
}

TEST(HexDigitValueTest, HexDigitsOnly) {
  EXPECT_EQ(HexDigitValue('0'), 0);
  EXPECT_EQ(HexDigitValue('9'), 9);
  EXPECT_EQ(HexDigitValue('a'), 10);
  EXPECT_EQ(HexDigitValue('F'), 15);
  for (char c : {'g', 'G', 'x', ' ', '-', '\0'}) EXPECT_EQ(HexDigitValue(c), -1) << c;
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

// PCI addresses are fixed-width hex: address order, not digit runs as numbers
// ("1a" is not "1" then "a", before "19").
TEST(NaturalLessTest, PciAddressesInAddressOrder) {
  std::vector<std::string> v = {"0000:1a:00.0",     "0000:19:00.1", "0000:19:00.0",
                                "0000:0a:00.0",     "0000:09:00.0", "pci/0000:1b:00.0",
                                "pci/0000:1A:00.1", "1a:00.0",      "19:00.0"};
  std::sort(v.begin(), v.end(), NaturalLess);
  EXPECT_EQ(v, (std::vector<std::string>{"0000:09:00.0", "0000:0a:00.0", "0000:19:00.0",
                                         "0000:19:00.1", "0000:1a:00.0", "19:00.0", "1a:00.0",
                                         "pci/0000:1A:00.1", "pci/0000:1b:00.0"}));
  // Names keep their numbers: ens6f1 (f is a hex digit) before ens10f0.
  EXPECT_TRUE(NaturalLess("ens6f1", "ens10f0"));
  EXPECT_TRUE(NaturalLess("eth2", "eth10"));
  EXPECT_TRUE(NaturalLess("virtfn2", "virtfn10"));
}

// A strict weak order whatever the names (a hostile tree's): std::sort with
// an inconsistent order reads out of bounds. Every triple of a mix of PCI
// addresses, numbers and bytes around '0' and '9' is transitive.
TEST(NaturalLessTest, StrictWeakOrderOnMixedNames) {
  const std::vector<std::string> v = {"0000:1a:00.0",
                                      "0000:19:00.0",
                                      "0000:2",
                                      "0000:1A:00.0",
                                      "19:00.0",
                                      "1a:00.0",
                                      "ab:cd.1",
                                      "a",
                                      "a1",
                                      "a01",
                                      "a001",
                                      "a/1",
                                      "a:1",
                                      "a\xff",
                                      "",
                                      "0",
                                      "00",
                                      "9",
                                      "10",
                                      "eth2",
                                      "eth10",
                                      "eth10a",
                                      "eth/0",
                                      "x1y2",
                                      "x01y1",
                                      "x1y02"};
  for (const auto& a : v) {
    EXPECT_FALSE(NaturalLess(a, a)) << a;
    for (const auto& b : v) {
      EXPECT_FALSE(NaturalLess(a, b) && NaturalLess(b, a)) << a << " " << b;
      for (const auto& c : v) {
        EXPECT_TRUE(!NaturalLess(a, b) || !NaturalLess(b, c) || NaturalLess(a, c))
            << a << " " << b << " " << c;
        // Incomparability is transitive too.
        const bool ab = !NaturalLess(a, b) && !NaturalLess(b, a);
        const bool bc = !NaturalLess(b, c) && !NaturalLess(c, b);
        EXPECT_TRUE(!ab || !bc || (!NaturalLess(a, c) && !NaturalLess(c, a)))
            << a << " " << b << " " << c;
      }
    }
  }
}

}  // namespace
}  // namespace provisioner
