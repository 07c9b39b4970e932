#include "engine/host/capture_file.h"

#include <cerrno>
#include <string>

#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

StatusOr<int> ParseCount(const std::string& text) {
  if (text == "3\n") return 3;
  return InvalidArgumentError("not a count");
}

TEST(CaptureFileTest, AMissingCaptureSaysWhatAndHowToMakeOne) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("cap"));
  StatusOr<int> got = ReadParsedCapture(*fs, "/run/provisioner/x/eth0", "x state of eth0",
                                        "provisioner snapshot writes it", ParseCount);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(got.status().err(), ENOENT);
  EXPECT_EQ(got.status().message(),
            "/run/provisioner/x/eth0: ENOENT: x state of eth0 not captured "
            "(provisioner snapshot writes it)");
}

TEST(CaptureFileTest, ACaptureIsParsedAndABadOneNamesItsPath) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("cap"));
  ASSERT_TRUE(fs->WriteFileAtomic("/run/provisioner/x/eth0", "3\n", 0644).ok());
  StatusOr<int> got = ReadParsedCapture(*fs, "/run/provisioner/x/eth0", "x", "y", ParseCount);
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(*got, 3);
  ASSERT_TRUE(fs->WriteFileAtomic("/run/provisioner/x/eth0", "4\n", 0644).ok());
  got = ReadParsedCapture(*fs, "/run/provisioner/x/eth0", "x", "y", ParseCount);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(got.status().message(), "/run/provisioner/x/eth0 <- not a count");
}

TEST(CaptureFileTest, AnObjectOfKnownKeysOnly) {
  auto j = ParseCaptureObject("{\"a\":1,\"b\":true}", "test", "{\"a\":<n>}", {"a", "b"});
  ASSERT_TRUE(j.ok()) << j.status().message();
  EXPECT_EQ((*j)["a"], 1);
  EXPECT_EQ(ParseCaptureObject("[1]", "test", "{\"a\":<n>}", {"a"}).status().message(),
            "not a test capture: expected {\"a\":<n>}");
  EXPECT_EQ(ParseCaptureObject("{\"a\":", "test", "{}", {"a"}).status().message(),
            "not a test capture: expected {}");
  EXPECT_EQ(ParseCaptureObject("{\"c\":1}", "test", "{}", {"a", "b"}).status().message(),
            "unknown key \"c\"");
}

}  // namespace
}  // namespace provisioner
