#include "engine/agent/backoff.h"

#include <gtest/gtest.h>

namespace provisioner::agent {
namespace {

using std::chrono::milliseconds;

TEST(BackoffTest, DoublesUpToTheCapAndForgetsOnSuccess) {
  Backoff b(milliseconds(100), milliseconds(1000));
  EXPECT_EQ(b.DelayAfter(1), milliseconds(100));
  EXPECT_EQ(b.DelayAfter(2), milliseconds(200));
  EXPECT_EQ(b.DelayAfter(4), milliseconds(800));
  EXPECT_EQ(b.DelayAfter(5), milliseconds(1000));
  EXPECT_EQ(b.DelayAfter(40), milliseconds(1000));
  const auto t0 = std::chrono::steady_clock::now();
  b.Fail("pf:0000:af:00.0", "EIO", t0);
  b.Fail("pf:0000:af:00.0", "EIO", t0);
  EXPECT_TRUE(b.Waiting("pf:0000:af:00.0", t0 + milliseconds(199)));
  EXPECT_FALSE(b.Waiting("pf:0000:af:00.0", t0 + milliseconds(200)));
  EXPECT_FALSE(b.Waiting("pf:0000:b0:00.0", t0));  // one failing PF, the others go on
  ASSERT_TRUE(b.NextRetry(t0).has_value());
  EXPECT_EQ(*b.NextRetry(t0), t0 + milliseconds(200));
  b.Succeed("pf:0000:af:00.0");
  EXPECT_FALSE(b.NextRetry(t0).has_value());
}

}  // namespace
}  // namespace provisioner::agent
