#include "engine/base/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

TEST(InterruptGuardTest, RecordsTheFirstSignalInsteadOfDying) {
  {
    InterruptGuard guard;
    EXPECT_EQ(InterruptGuard::signal().load(), 0);
    ASSERT_EQ(::raise(SIGTERM), 0);  // without the guard: the test process ends
    ASSERT_EQ(::raise(SIGINT), 0);
    EXPECT_EQ(InterruptGuard::signal().load(), SIGTERM);
  }
  // The old disposition is back: SIGHUP ignored here, so raising it is harmless.
  struct sigaction ign {};
  ign.sa_handler = SIG_IGN;
  struct sigaction old {};
  ASSERT_EQ(::sigaction(SIGHUP, &ign, &old), 0);
  {
    InterruptGuard guard;  // a new guard starts from 0
    EXPECT_EQ(InterruptGuard::signal().load(), 0);
  }
  struct sigaction now {};
  ASSERT_EQ(::sigaction(SIGHUP, nullptr, &now), 0);
  EXPECT_EQ(now.sa_handler, SIG_IGN);
  ::sigaction(SIGHUP, &old, nullptr);
}

TEST(InterruptGuardTest, SignalNames) {
  EXPECT_EQ(SignalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(SignalName(SIGINT), "SIGINT");
  EXPECT_EQ(SignalName(SIGHUP), "SIGHUP");
  EXPECT_EQ(SignalName(SIGUSR1), "signal " + std::to_string(SIGUSR1));
}

}  // namespace
}  // namespace provisioner
