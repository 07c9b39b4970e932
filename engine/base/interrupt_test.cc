#include "engine/base/interrupt.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

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

// A wait wakes on the signal itself (the self-pipe), not at its end.
TEST(InterruptGuardTest, WaitUnlessInterruptedWakesOnTheSignal) {
  InterruptGuard guard;
  std::atomic<bool> waiting{false};
  bool slept_all = true;
  auto start = std::chrono::steady_clock::now();
  std::thread waiter([&] {
    waiting = true;
    slept_all = WaitUnlessInterrupted(std::chrono::minutes(10));
  });
  while (!waiting) std::this_thread::yield();
  ASSERT_EQ(::kill(::getpid(), SIGINT), 0);
  waiter.join();
  EXPECT_FALSE(slept_all);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_EQ(InterruptGuard::count(), 1);
  // Once a signal came, a new wait does not sleep at all.
  EXPECT_FALSE(WaitUnlessInterrupted(std::chrono::minutes(10)));
}

TEST(InterruptGuardTest, WaitUnlessInterruptedSleepsWithoutASignal) {
  InterruptGuard guard;
  EXPECT_TRUE(WaitUnlessInterrupted(std::chrono::milliseconds(1)));
}

// The second signal while apply runs ends the process at once, with the word.
TEST(InterruptGuardDeathTest, SecondSignalExitsAtOnce) {
  EXPECT_EXIT(
      {
        InterruptGuard guard;
        SecondSignalExit second("the journal is kept", 7);
        ::raise(SIGINT);  // the first: recorded
        ::raise(SIGINT);  // at once: the same request delivered twice (timeout(1))
        if (InterruptGuard::count() != 1) ::_exit(3);
        // A person's second Ctrl-C comes later than 100 ms.
        std::this_thread::sleep_for(std::chrono::milliseconds(150));
        ::raise(SIGTERM);
        ::_exit(0);
      },
      ::testing::ExitedWithCode(7), "second SIGTERM: the journal is kept");
}

TEST(InterruptGuardTest, SignalNames) {
  EXPECT_EQ(SignalName(SIGTERM), "SIGTERM");
  EXPECT_EQ(SignalName(SIGINT), "SIGINT");
  EXPECT_EQ(SignalName(SIGHUP), "SIGHUP");
  EXPECT_EQ(SignalName(SIGUSR1), "signal " + std::to_string(SIGUSR1));
}

}  // namespace
}  // namespace provisioner
