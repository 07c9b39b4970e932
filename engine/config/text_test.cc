#include "engine/config/text.h"

#include <string>

#include "engine/config/field_path.h"
#include "gtest/gtest.h"

namespace provisioner::config {
namespace {

using namespace std::string_literals;

TEST(TextTest, Utf8Validity) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("ens6f0np0"));
  EXPECT_TRUE(IsValidUtf8("gr\xc3\xbc\xc3\x9f"));       // "grüß"
  EXPECT_TRUE(IsValidUtf8("\xf0\x9f\x98\x80"));          // U+1F600
  EXPECT_FALSE(IsValidUtf8("\xff"));
  EXPECT_FALSE(IsValidUtf8("\xc3"));                     // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));                 // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));             // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));         // > U+10FFFF
}

TEST(TextTest, QuoteEscapesAndTruncates) {
  EXPECT_EQ(Quote("abc"), "\"abc\"");
  EXPECT_EQ(Quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Quote("a\nb\x01\xff"s), "\"a\\nb\\x01\\xff\"");
  std::string q = Quote(std::string(200, 'x'), 10);
  EXPECT_EQ(q, "\"xxxxxxxxxx...\"");
  EXPECT_EQ(Printable("bad \x1b[31m"), "bad \\x1b[31m");
}

TEST(TextTest, EditDistanceIgnoresCase) {
  EXPECT_EQ(EditDistance("numVF", "numVfs"), 1u);
  EXPECT_EQ(EditDistance("nmae", "name"), 2u);
  EXPECT_EQ(EditDistance("NAME", "name"), 0u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
}

TEST(FieldPathTest, JoinAndAncestry) {
  EXPECT_EQ(JoinField("", "spec"), "spec");
  EXPECT_EQ(JoinIndex(JoinField("spec", "nics"), 2), "spec.nics[2]");
  EXPECT_TRUE(IsSelfOrAncestor("", "spec.nics"));
  EXPECT_TRUE(IsSelfOrAncestor("spec.nics", "spec.nics"));
  EXPECT_TRUE(IsSelfOrAncestor("spec.nics", "spec.nics[0].name"));
  EXPECT_TRUE(IsSelfOrAncestor("spec.nics[0]", "spec.nics[0].name"));
  EXPECT_FALSE(IsSelfOrAncestor("spec.nics[1]", "spec.nics[10]"));
  EXPECT_FALSE(IsSelfOrAncestor("spec.nic", "spec.nics"));
  EXPECT_FALSE(IsSelfOrAncestor("spec.nics[0].name", "spec.nics[0]"));
}

}  // namespace
}  // namespace provisioner::config
