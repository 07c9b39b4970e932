#include "engine/host/host_lock.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

TEST(HostLockTest, SecondHolderFailsAtOnceThenSucceedsAfterRelease) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("lock"));
  auto first = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(fs->Exists("/run/provisioner/lock"));
  // flock locks belong to the open file description: a second open conflicts
  // even in the same process, as a second provisioner process would.
  auto start = std::chrono::steady_clock::now();
  auto second = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("another provisioner apply holds /run/provisioner/lock"),
            std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
  auto waited = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(200));
  ASSERT_FALSE(waited.ok());
  EXPECT_NE(waited.status().message().find("waited"), std::string::npos);
  { HostLock released = std::move(first).value(); }
  EXPECT_TRUE(AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0)).ok());
}

TEST(HostLockTest, ExistingLockFileIsNotWritten) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("lock"));
  {
    auto first = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
    ASSERT_TRUE(first.ok());
    first->Keep();
  }
  ASSERT_TRUE(fs->Exists("/run/provisioner/lock"));
  auto fs2 = NewLocalHostFs(fs->root());
  ASSERT_TRUE(AcquireHostLock(*fs2, kApplyLockPath, std::chrono::milliseconds(0)).ok());
  EXPECT_EQ(fs2->stats().files_opened_for_write, 0u);
}

TEST(HostLockTest, FirstLockOpensNoFileForWriting) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("lock"));
  ASSERT_FALSE(fs->Exists("/run"));
  auto lock = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
  ASSERT_TRUE(lock.ok());
  EXPECT_TRUE(fs->Exists("/run/provisioner/lock"));
  EXPECT_EQ(fs->stats().files_opened_for_write, 0u);
}

// Issue 26, item 14: a lock that created its file (and the directories above
// it) removes them on release unless kept (an apply that wrote keeps it); a
// file that was there before stays.
TEST(HostLockTest, CreatedLockFileGoesOnReleaseUnlessKept) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("lock"));
  ::mkdir((fs->root() + "/run").c_str(), 0755);
  {
    auto lock = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
    ASSERT_TRUE(lock.ok());
    EXPECT_TRUE(lock->removes_file());
    EXPECT_TRUE(fs->Exists("/run/provisioner/lock"));
  }
  EXPECT_FALSE(fs->Exists("/run/provisioner")) << "made for the lock: removed with it";
  EXPECT_TRUE(fs->Exists("/run")) << "there before";
  {
    auto lock = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
    ASSERT_TRUE(lock.ok());
    lock->Keep();
  }
  EXPECT_TRUE(fs->Exists("/run/provisioner/lock"));
  {
    auto lock = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
    ASSERT_TRUE(lock.ok());
    EXPECT_FALSE(lock->removes_file()) << "not created by this lock";
  }
  EXPECT_TRUE(fs->Exists("/run/provisioner/lock"));
}

// A process waiting on a lock file that its holder then removes opens the
// lock again, so it never holds an unlinked file beside a newer holder of
// the file at the path.
TEST(HostLockTest, WaiterOnARemovedLockFileLocksTheFileAtThePath) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("lock"));
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t pid = ::fork();
  if (pid == 0) {
    auto fs_child = NewLocalHostFs(fs->root());
    auto l = AcquireHostLock(*fs_child, kApplyLockPath, std::chrono::milliseconds(0));
    if (!l.ok() || !l->removes_file()) ::_exit(2);
    (void)!::write(ready[1], "x", 1);
    ::usleep(300 * 1000);
    ::_exit(0);  // not released by the destructor: released below instead
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  struct stat held;
  ASSERT_EQ(::stat((fs->root() + "/run/provisioner/lock").c_str(), &held), 0);
  int status = 0;
  // The child exits without removing; remove it as its release would have,
  // while another process waits on the old file.
  pid_t waiter = ::fork();
  if (waiter == 0) {
    auto fs_w = NewLocalHostFs(fs->root());
    auto l = AcquireHostLock(*fs_w, kApplyLockPath, std::chrono::milliseconds(5000));
    if (!l.ok()) ::_exit(3);
    struct stat now;
    if (::stat((fs_w->root() + "/run/provisioner/lock").c_str(), &now) != 0) ::_exit(4);
    ::_exit(0);
  }
  ::usleep(100 * 1000);
  ASSERT_EQ(::unlink((fs->root() + "/run/provisioner/lock").c_str()), 0);
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ::waitpid(waiter, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the waiter did not lock a file at the lock's path";
}

TEST(HostLockTest, WaitsForAHolderThatLetsGo) {
  auto fs = NewLocalHostFs(testing::MakeTempDir("lock"));
  ASSERT_TRUE(AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0)).ok());
  pid_t pid = ::fork();
  if (pid == 0) {
    auto fs_child = NewLocalHostFs(fs->root());
    auto l = AcquireHostLock(*fs_child, kApplyLockPath, std::chrono::milliseconds(0));
    if (!l.ok()) ::_exit(2);
    ::usleep(300 * 1000);
    ::_exit(0);
  }
  ::usleep(100 * 1000);
  auto busy = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
  EXPECT_FALSE(busy.ok());
  auto waited = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(5000));
  EXPECT_TRUE(waited.ok()) << waited.status().message();
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// Issue 26 item 2: a FIFO at the lock's path (or a link to one, or a link
// out of the root) is refused at once, --lock-timeout or not: before, open(2)
// of the FIFO waited for a writer forever.
TEST(HostLockTest, FifoOrLinkAtTheLockIsRefusedNotWaitedOn) {
  const std::string base = testing::MakeTempDir("lock");
  const std::string root = base + "/root";
  ASSERT_EQ(::mkdir(root.c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root + "/run").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir((root + "/run/provisioner").c_str(), 0755), 0);
  auto fs = NewLocalHostFs(root);
  const std::string lock = root + "/run/provisioner/lock";
  ASSERT_EQ(::mkfifo(lock.c_str(), 0644), 0);
  auto start = std::chrono::steady_clock::now();
  for (int timeout_ms : {0, 300}) {
    auto l = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(timeout_ms));
    ASSERT_FALSE(l.ok());
    EXPECT_NE(l.status().message().find("a FIFO, not a regular file: refused"), std::string::npos)
        << l.status().message();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

  // A link to a FIFO inside the root, and one to a file outside it.
  ASSERT_EQ(::unlink(lock.c_str()), 0);
  ASSERT_EQ(::mkfifo((root + "/run/fifo").c_str(), 0644), 0);
  ASSERT_EQ(::symlink("../fifo", lock.c_str()), 0);
  auto linked = AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0));
  ASSERT_FALSE(linked.ok());
  EXPECT_NE(linked.status().message().find("a symbolic link"), std::string::npos)
      << linked.status().message();
  ASSERT_EQ(::unlink(lock.c_str()), 0);
  ASSERT_EQ(::symlink((base + "/outside").c_str(), lock.c_str()), 0);
  EXPECT_FALSE(AcquireHostLock(*fs, kApplyLockPath, std::chrono::milliseconds(0)).ok());
  struct stat st;
  EXPECT_NE(::lstat((base + "/outside").c_str(), &st), 0) << "created a file outside the root";
}

}  // namespace
}  // namespace provisioner
