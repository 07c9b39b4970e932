#include "engine/base/enum_names.h"

#include "gtest/gtest.h"

namespace provisioner {
namespace {

enum class Color { kRed, kGreen, kBlue };

constexpr EnumName<Color> kColorNames[] = {
    {Color::kRed, "red"},
    {Color::kGreen, "green"},
};

TEST(EnumNamesTest, NameOfFindsTheRowAndFallsBackOutsideTheTable) {
  EXPECT_STREQ(NameOf(kColorNames, Color::kRed, "?"), "red");
  EXPECT_STREQ(NameOf(kColorNames, Color::kGreen, "?"), "green");
  EXPECT_STREQ(NameOf(kColorNames, Color::kBlue, "?"), "?");
  static_assert(NameOf(kColorNames, Color::kGreen, "?")[0] == 'g', "usable at compile time");
}

TEST(EnumNamesTest, ValueOfParsesExactNamesOnly) {
  EXPECT_EQ(ValueOf(kColorNames, "green"), Color::kGreen);
  EXPECT_EQ(ValueOf(kColorNames, "red"), Color::kRed);
  EXPECT_EQ(ValueOf(kColorNames, "Red"), std::nullopt);
  EXPECT_EQ(ValueOf(kColorNames, "blue"), std::nullopt);
  EXPECT_EQ(ValueOf(kColorNames, ""), std::nullopt);
}

}  // namespace
}  // namespace provisioner
