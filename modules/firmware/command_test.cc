// The bounded runner: every command provisioner runs on the live root has its
// output capped and its run time limited (issue 36.9).
#include "modules/firmware/command.h"

#include <cerrno>
#include <chrono>
#include <string>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

TEST(RunCommandTest, KeepsWhatFitsAndTheExitCode) {
  auto r = RunCommand({"sh", "-c", "printf out; printf err >&2; exit 3"}, std::chrono::seconds(10));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->out, "out");
  EXPECT_EQ(r->err, "err");
  EXPECT_EQ(r->exit_code, 3);
}

// A tool that prints without end (a wedged mstconfig in a loop, a boot loader
// tool asking on stdout) is killed at the cap: the memory it takes is bounded.
TEST(RunCommandTest, OutputOverTheCapIsAnErrorAndTheProcessIsKilled) {
  // `yes` never ends by itself: only the cap ends it (well within the timeout).
  auto r = RunCommand({"yes", "mstconfig"}, std::chrono::seconds(60), 4096);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(r.status().err(), EFBIG);
  EXPECT_EQ(r.status().message(), "yes: killed after printing more than 4096 bytes on stdout");
  auto e = RunCommand({"sh", "-c", "head -c 10000 /dev/zero >&2"}, std::chrono::seconds(60), 4096);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("on stderr"), std::string::npos) << e.status().message();
  // Exactly the cap is kept.
  auto fits = RunCommand({"sh", "-c", "head -c 4096 /dev/zero"}, std::chrono::seconds(60), 4096);
  ASSERT_TRUE(fits.ok()) << fits.status().message();
  EXPECT_EQ(fits->out.size(), 4096u);
}

TEST(RunCommandTest, TheDefaultCapIsTheTreeBackendsReadLimit) {
  EXPECT_EQ(kMaxCommandOutput, size_t{16} * 1024 * 1024);
}

TEST(RunCommandTest, RunTimeIsLimited) {
  auto r = RunCommand({"sleep", "30"}, std::chrono::milliseconds(200));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(r.status().err(), ETIMEDOUT);
}

TEST(RunCommandTest, MissingProgramIsNotFound) {
  auto r = RunCommand({"provisioner-no-such-tool"}, std::chrono::seconds(1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().err(), ENOENT);
}

}  // namespace
}  // namespace provisioner
