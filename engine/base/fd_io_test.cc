#include "engine/base/fd_io.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

std::atomic<int> alarms{0};
void OnAlarm(int) { alarms.fetch_add(1); }

// SIGALRM every millisecond in this thread while it lives, with a handler
// installed without SA_RESTART: a blocking read or write of this thread
// fails with EINTR (or returns short) instead of being restarted by libc.
// Threads started while it lives have SIGALRM blocked.
class Interrupter {
 public:
  Interrupter() {
    struct sigaction sa = {};
    sa.sa_handler = OnAlarm;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    sigaction(SIGALRM, &sa, &old_action_);
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, &old_mask_);
  }
  // Called once the other threads are started: only this one gets SIGALRM.
  void Start() {
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &alrm, nullptr);
    itimerval t = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &t, nullptr);
  }
  ~Interrupter() {
    itimerval off = {};
    setitimer(ITIMER_REAL, &off, nullptr);
    pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    sigaction(SIGALRM, &old_action_, nullptr);
  }

 private:
  struct sigaction old_action_ = {};
  sigset_t old_mask_;
};

struct Pipe {
  int r = -1, w = -1;
  Pipe() {
    int fds[2];
    if (::pipe(fds) == 0) {
      r = fds[0];
      w = fds[1];
    }
  }
  ~Pipe() {
    if (r >= 0) ::close(r);
    if (w >= 0) ::close(w);
  }
  void CloseWrite() {
    ::close(w);
    w = -1;
  }
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 251) % 26);
  return s;
}

TEST(FdIoTest, ReadAllReadsToEndOfFileAppending) {
  Pipe p;
  ASSERT_GE(p.r, 0);
  const std::string data = Pattern(300 * 1024);  // several reads' worth
  std::thread writer([&] {
    EXPECT_EQ(WriteAll(p.w, data), 0);
    p.CloseWrite();
  });
  std::string out = "before:";
  EXPECT_EQ(ReadAll(p.r, &out), 0);
  writer.join();
  EXPECT_EQ(out, "before:" + data);
}

TEST(FdIoTest, ReadAllRetriesReadsASignalInterrupted) {
  Pipe p;
  ASSERT_GE(p.r, 0);
  std::string out;
  int err = -1;
  {
    Interrupter interrupter;
    std::thread writer([&] {
      // The reader sits in read() meanwhile, SIGALRM every millisecond.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      EXPECT_EQ(WriteAll(p.w, "late"), 0);
      p.CloseWrite();
    });
    const int before = alarms.load();
    interrupter.Start();
    err = ReadAll(p.r, &out);
    const int during = alarms.load() - before;
    writer.join();
    EXPECT_GT(during, 10);  // the reads were interrupted, many times over
  }
  EXPECT_EQ(err, 0) << "errno " << err;
  EXPECT_EQ(out, "late");
}

TEST(FdIoTest, WriteAllFinishesShortAndInterruptedWrites) {
  Pipe p;
  ASSERT_GE(p.r, 0);
  // Far more than a pipe holds, drained slowly: writes block, are cut short
  // by the signal after part of the data went, or fail with EINTR.
  const std::string data = Pattern(4 * 1024 * 1024);
  std::string got;
  int err = -1;
  {
    Interrupter interrupter;
    std::thread reader([&] {
      char buf[16 * 1024];
      for (;;) {
        ssize_t n = ::read(p.r, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got.append(buf, static_cast<size_t>(n));
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
    const int before = alarms.load();
    interrupter.Start();
    err = WriteAll(p.w, data);
    const int during = alarms.load() - before;
    p.CloseWrite();
    reader.join();
    EXPECT_GT(during, 10);
  }
  EXPECT_EQ(err, 0) << "errno " << err;
  EXPECT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
}

TEST(FdIoTest, ReadAllStopsPastMaxBytes) {
  for (size_t size : {size_t{10}, size_t{100 * 1024}}) {
    Pipe p;
    ASSERT_GE(p.r, 0);
    const std::string data = Pattern(size);
    std::thread writer([&] {
      (void)WriteAll(p.w, data);  // EPIPE once the reader gave up
      p.CloseWrite();
    });
    std::string exact, over;
    EXPECT_EQ(ReadAll(p.r, &exact, size), 0);
    writer.join();
    EXPECT_EQ(exact, data);

    Pipe q;
    ASSERT_GE(q.r, 0);
    std::thread writer2([&] {
      (void)WriteAll(q.w, data);
      q.CloseWrite();
    });
    EXPECT_EQ(ReadAll(q.r, &over, size - 1), EFBIG);
    const int drained = ReadAll(q.r, &over);  // let the writer finish
    writer2.join();
    EXPECT_EQ(drained, 0);
  }
}

TEST(FdIoTest, ErrorsComeBackAsTheErrno) {
  Pipe p;
  ASSERT_GE(p.r, 0);
  std::string out;
  EXPECT_EQ(ReadAll(p.w, &out), EBADF);  // the write end
  EXPECT_EQ(WriteAll(p.r, "x"), EBADF);  // the read end
  EXPECT_EQ(ReadAll(-1, &out), EBADF);
  EXPECT_EQ(WriteAll(-1, "x"), EBADF);
  EXPECT_EQ(WriteAll(-1, ""), 0);  // nothing to write: no write(2) at all
  EXPECT_EQ(out, "");
}

TEST(FdIoTest, WriteFileWritesAllAndNamesTheStepThatFailed) {
  char dir[] = "/tmp/fd_io_test.XXXXXX";
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string base = tmp != nullptr ? std::string(tmp) + "/fd_io_test.XXXXXX" : dir;
  ASSERT_NE(::mkdtemp(base.data()), nullptr);
  const std::string path = base + "/f";
  const char* step = "";
  EXPECT_EQ(WriteFile(path, O_EXCL, "abc", &step), 0);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  std::string out;
  EXPECT_EQ(ReadAll(fd, &out), 0);
  ::close(fd);
  EXPECT_EQ(out, "abc");
  EXPECT_EQ(WriteFile(path, O_EXCL, "x", &step), EEXIST);  // O_EXCL: the file is there
  EXPECT_STREQ(step, "create");
  EXPECT_EQ(WriteFile(path, O_TRUNC, "de", &step), 0);
  EXPECT_EQ(WriteFile(base + "/missing/f", 0, "x", &step), ENOENT);
  EXPECT_STREQ(step, "create");
  ::unlink(path.c_str());
  ::rmdir(base.c_str());
}

}  // namespace
}  // namespace provisioner
