#include "engine/host/parallel_reads.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "engine/host/forwarding_host_fs.h"
#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

// A tree of `n` directories d<i>/value holding "<i>\n".
class ParallelReadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("par");
    ASSERT_NE(root_, "");
    for (int i = 0; i < kDirs; ++i) {
      std::string d = root_ + "/d" + std::to_string(i);
      ASSERT_EQ(::mkdir(d.c_str(), 0755), 0);
      std::ofstream(d + "/value") << i << "\n";
    }
    fs_ = NewLocalHostFs(root_);
    ::setenv("PROVISIONER_READ_THREADS", "4", 1);
  }
  void TearDown() override { ::unsetenv("PROVISIONER_READ_THREADS"); }

  static constexpr int kDirs = 200;
  std::string root_;
  std::unique_ptr<HostFs> fs_;
};

// A decorator that does not say its reads are thread-safe (as the snapshot
// recorder): everything runs on the caller's thread.
class SerialFs : public ForwardingHostFs {
 public:
  using ForwardingHostFs::ForwardingHostFs;
};

TEST_F(ParallelReadsTest, ThreadCountFollowsSafetyWorkAndOverride) {
  EXPECT_TRUE(fs_->ConcurrentReadsSafe());
  EXPECT_EQ(ReadThreads(*fs_, 200, 16), 4u);  // PROVISIONER_READ_THREADS=4
  EXPECT_EQ(ReadThreads(*fs_, 40, 16), 2u);   // only 40 items: two threads' worth
  EXPECT_EQ(ReadThreads(*fs_, 10, 16), 1u);   // too little to pay for a thread
  EXPECT_EQ(ReadThreads(*fs_, 0, 16), 1u);
  ::setenv("PROVISIONER_READ_THREADS", "1", 1);
  EXPECT_EQ(ReadThreads(*fs_, 200, 16), 1u);
  ::setenv("PROVISIONER_READ_THREADS", "64", 1);
  EXPECT_EQ(ReadThreads(*fs_, 100000, 1), 8u);      // capped
  ::setenv("PROVISIONER_READ_THREADS", "zero", 1);  // not a count: the CPU count
  EXPECT_GE(ReadThreads(*fs_, 100000, 1), 1u);
  SerialFs serial(fs_.get());
  EXPECT_FALSE(serial.ConcurrentReadsSafe());
  ::setenv("PROVISIONER_READ_THREADS", "4", 1);
  EXPECT_EQ(ReadThreads(serial, 200, 16), 1u);
}

TEST_F(ParallelReadsTest, EveryIndexOnceResultsInTheirSlots) {
  std::vector<std::string> got(kDirs);
  std::vector<std::atomic<int>> calls(kDirs);
  std::mutex mu;
  std::set<std::thread::id> threads;
  ForEachIndex(*fs_, kDirs, 16, [&](size_t i) {
    calls[i].fetch_add(1);
    auto v = fs_->ReadAttr("/d" + std::to_string(i) + "/value");
    got[i] = v.ok() ? *v : v.status().message();
    std::lock_guard<std::mutex> lock(mu);
    threads.insert(std::this_thread::get_id());
  });
  for (int i = 0; i < kDirs; ++i) {
    EXPECT_EQ(calls[i].load(), 1) << i;
    EXPECT_EQ(got[i], std::to_string(i)) << i;
  }
  EXPECT_GE(threads.size(), 1u);
  EXPECT_LE(threads.size(), 4u);
  // The counters of the shared HostFs add up across threads.
  EXPECT_EQ(fs_->stats().files_read, static_cast<uint64_t>(kDirs));
}

TEST_F(ParallelReadsTest, SerialFsRunsOnTheCallersThreadInOrder) {
  SerialFs serial(fs_.get());
  std::vector<size_t> order;
  std::thread::id me = std::this_thread::get_id();
  bool all_mine = true;
  ForEachIndex(serial, kDirs, 16, [&](size_t i) {
    order.push_back(i);
    all_mine = all_mine && std::this_thread::get_id() == me;
  });
  ASSERT_EQ(order.size(), static_cast<size_t>(kDirs));
  for (size_t i = 0; i < order.size(); ++i) EXPECT_EQ(order[i], i);
  EXPECT_TRUE(all_mine);
}

// Waiting items (an external command each) overlap whatever the CPU count:
// ten items that each wait until all ten have started can only finish on
// ten threads (PROVISIONER_READ_THREADS=4 does not apply).
TEST_F(ParallelReadsTest, WaitingItemsRunOnAThreadEach) {
  constexpr size_t kItems = 10;
  std::mutex mu;
  std::condition_variable cv;
  size_t started = 0;
  std::set<std::thread::id> threads;
  std::vector<int> calls(kItems, 0);
  ForEachIndexWaiting(kItems, 32, [&](size_t i) {
    std::unique_lock<std::mutex> lock(mu);
    ++calls[i];
    threads.insert(std::this_thread::get_id());
    ++started;
    cv.notify_all();
    // Bounded: a serial run fails the count below instead of hanging.
    cv.wait_for(lock, std::chrono::seconds(2), [&] { return started == kItems; });
  });
  EXPECT_EQ(threads.size(), kItems);
  for (size_t i = 0; i < kItems; ++i) EXPECT_EQ(calls[i], 1) << i;
  // Capped at max_threads: two threads share eight items.
  std::set<std::thread::id> capped;
  ForEachIndexWaiting(8, 2, [&](size_t) {
    std::lock_guard<std::mutex> lock(mu);
    capped.insert(std::this_thread::get_id());
  });
  EXPECT_LE(capped.size(), 2u);
}

TEST_F(ParallelReadsTest, AnExceptionComesBackToTheCaller) {
  std::atomic<int> calls{0};
  EXPECT_THROW(ForEachIndex(*fs_, kDirs, 16,
                            [&](size_t i) {
                              calls.fetch_add(1);
                              if (i == 7) throw std::runtime_error("item 7");
                            }),
               std::runtime_error);
  EXPECT_GE(calls.load(), 8);  // items 0..7 were handed out before it
  EXPECT_LE(calls.load(), kDirs);
}

TEST_F(ParallelReadsTest, ReadEachKeepsOrderAndReturnsTheLowestFailingIndex) {
  auto read = [&](size_t i) -> StatusOr<int> {
    auto v = fs_->ReadAttr("/d" + std::to_string(i) + "/value");
    if (!v.ok()) return v.status();
    return std::stoi(*v);
  };
  auto all = ReadEach<int>(*fs_, kDirs, 16, read);
  ASSERT_TRUE(all.ok()) << all.status().message();
  ASSERT_EQ(all->size(), static_cast<size_t>(kDirs));
  for (int i = 0; i < kDirs; ++i) EXPECT_EQ((*all)[static_cast<size_t>(i)], i);
  // d150 and d40 missing, d40 failing last in time: the error is d40's.
  ASSERT_EQ(::rename((root_ + "/d150").c_str(), (root_ + "/gone150").c_str()), 0);
  ASSERT_EQ(::rename((root_ + "/d40").c_str(), (root_ + "/gone40").c_str()), 0);
  auto slow_40 = [&](size_t i) {
    if (i == 40) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return read(i);
  };
  for (int run = 0; run < 3; ++run) {
    auto failed = ReadEach<int>(*fs_, kDirs, 16, slow_40);
    ASSERT_FALSE(failed.ok());
    EXPECT_NE(failed.status().message().find("/d40/value"), std::string::npos)
        << failed.status().message();
  }
}

}  // namespace
}  // namespace provisioner
