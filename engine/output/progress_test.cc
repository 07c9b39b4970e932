#include "engine/output/progress.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

// Everything written to a memory stream, read after the progress is gone.
class Captured {
 public:
  Captured() { f_ = open_memstream(&buf_, &size_); }
  ~Captured() {
    if (f_ != nullptr) std::fclose(f_);
    std::free(buf_);
  }
  std::FILE* file() { return f_; }
  std::string Take() {
    std::fclose(f_);
    f_ = nullptr;
    return std::string(buf_, size_);
  }

 private:
  char* buf_ = nullptr;
  size_t size_ = 0;
  std::FILE* f_ = nullptr;
};

int Count(const std::string& s, const std::string& what) {
  int n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

TEST(ConsoleProgressTest, TerminalRedrawsWhileAStepBlocks) {
  Captured cap;
  {
    ConsoleProgress p(cap.file(),
                      {.terminal = true, .redraw_interval = std::chrono::milliseconds(50)});
    p.Step("0000:af:00.0: 0/8 VFs have netdevs");
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // a blocking step
    p.Finish();
  }
  std::string out = cap.Take();
  // Redrawn in place several times with a ticking clock, no newline until the end.
  EXPECT_GE(Count(out, "\r\033[K"), 4) << out;
  EXPECT_EQ(Count(out, "\n"), 1) << out;
  // The clock ticks: distinct elapsed times, the last at least the 0.4 s blocked.
  std::set<double> times;
  for (size_t p = out.find(" ("); p != std::string::npos; p = out.find(" (", p + 1)) {
    times.insert(std::strtod(out.c_str() + p + 2, nullptr));
  }
  EXPECT_GE(times.size(), 3u) << out;
  EXPECT_GE(*times.rbegin(), 0.4) << out;
  EXPECT_EQ(out.back(), '\n');
}

// A log line written through WriteAbove from other threads while the
// ticker redraws: each starts on an erased line, the block comes back after
// it (the threads race the ticker; run under TSan too).
TEST(ConsoleProgressTest, WriteAboveClearsTheBlockAndRedrawsIt) {
  Captured cap;
  std::FILE* f = cap.file();
  {
    ConsoleProgress p(f, {.terminal = true, .redraw_interval = std::chrono::milliseconds(5)});
    p.ChangeStarted(1, "sriov/0000:af:00.0/numVfs");
    std::vector<std::thread> loggers;
    for (int t = 0; t < 2; ++t) {
      loggers.emplace_back([f] {
        for (int i = 0; i < 20; ++i) {
          ConsoleProgress::WriteAbove([f] { std::fputs("provisioner: warning: w\n", f); });
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      });
    }
    for (auto& t : loggers) t.join();
    p.ChangeFinished(1, "sriov 0000:af:00.0 numVfs: 0 -> 8", true);
  }
  ConsoleProgress::WriteAbove([f] { std::fputs("after\n", f); });  // none live: written as is
  std::string out = cap.Take();
  EXPECT_EQ(Count(out, "provisioner: warning: w\n"), 40) << out;
  for (size_t at = out.find("provisioner: warning"); at != std::string::npos;
       at = out.find("provisioner: warning", at + 1)) {
    ASSERT_GE(at, 3u);
    const std::string before = out.substr(at - 3, 3);
    // "\033[J" (the block erased) or the previous warning's newline.
    EXPECT_TRUE(before == "\033[J" || before.back() == '\n') << out.substr(0, at + 20);
    // The status line is drawn again right after the warning.
    EXPECT_EQ(out.compare(at + 24, 4, "\r\033[K"), 0) << out.substr(at, 60);
  }
  EXPECT_EQ(out.substr(out.size() - 6), "after\n");
}

TEST(ConsoleProgressTest, PlainLinesOffATerminal) {
  Captured cap;
  {
    ConsoleProgress p(cap.file(), {.terminal = false,
                                   .redraw_interval = std::chrono::milliseconds(20),
                                   .quiet_line_interval = std::chrono::milliseconds(150)});
    p.Step("kmod: loading mlx5_ib");
    p.Step("mstconfig query 0000:86:00.0");
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  std::string out = cap.Take();
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(out.find("\033"), std::string::npos) << out;
  EXPECT_EQ(
      out.rfind("provisioner: kmod: loading mlx5_ib\nprovisioner: mstconfig query 0000:86:00.0\n",
                0),
      0u)
      << out;
  // A long silent step says it is still working.
  EXPECT_GE(Count(out, "mstconfig query 0000:86:00.0: still working"), 1) << out;
}

TEST(ConsoleProgressTest, NothingWrittenWithoutSteps) {
  Captured cap;
  {
    ConsoleProgress p(cap.file(),
                      {.terminal = true, .redraw_interval = std::chrono::milliseconds(10)});
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(cap.Take(), "");
}

// Issue 31 item 4: a wait polled every 100 ms (the VF wait reports each
// poll) keeps one clock, its total against its limit, not one that restarts.
TEST(ConsoleProgressTest, AWaitShowsItsTotalElapsedTimeAndItsLimit) {
  Captured cap;
  {
    ConsoleProgress p(cap.file(),
                      {.terminal = true, .redraw_interval = std::chrono::milliseconds(50)});
    p.ChangeStarted(3, "sriov/0000:af:00.0/numVfs: 0 -> 16");
    for (int i = 0; i < 14; ++i) {
      p.ChangeWaiting(3, "0000:af:00.0: 0/16 VFs have netdevs", std::chrono::seconds(300));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    p.ChangeFinished(3, "sriov 0000:af:00.0 numVfs: 0 -> 16", true);
  }
  std::string out = cap.Take();
  EXPECT_NE(out.find("0/16 VFs have netdevs (0 s of 300 s)"), std::string::npos) << out;
  EXPECT_NE(out.find("0/16 VFs have netdevs (1 s of 300 s)"), std::string::npos) << out;
  // The permanent line, in the plan's wording, with how long the change took.
  EXPECT_NE(out.find("provisioner: sriov 0000:af:00.0 numVfs: 0 -> 16 (1."), std::string::npos)
      << out;
  EXPECT_EQ(out.back(), '\n');
}

// Several changes at once: one line each, redrawn together in place.
TEST(ConsoleProgressTest, TerminalShowsOneLinePerRunningChange) {
  Captured cap;
  {
    ConsoleProgress p(cap.file(),
                      {.terminal = true, .redraw_interval = std::chrono::milliseconds(30)});
    p.ChangeStarted(0, "sriov/0000:1a:00.0/numVfs: 0 -> 8");
    p.ChangeStarted(1, "sriov/0000:3c:00.0/numVfs: 0 -> 8");
    p.ChangeStarted(2, "firmware/0000:4d:00.0/LINK_TYPE_P1: IB -> ETH");
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    p.ChangeFinished(1, "sriov 0000:3c:00.0 numVfs: 0 -> 8", true);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    p.ChangeFinished(0, "sriov 0000:1a:00.0 numVfs: 0 -> 8", false);
    p.ChangeFinished(2, "firmware 0000:4d:00.0 LINK_TYPE_P1: IB -> ETH", true);
  }
  std::string out = cap.Take();
  // A redraw of three lines: back up two lines, three cleared lines.
  EXPECT_GE(Count(out, "\033[2A"), 2) << out;
  size_t block = out.rfind("\033[2A");
  ASSERT_NE(block, std::string::npos);
  std::string redraw =
      out.substr(block, out.find("\033[", block + 4) == std::string::npos ? std::string::npos
                                                                          : out.size() - block);
  EXPECT_NE(redraw.find("0000:1a:00.0"), std::string::npos) << out;
  EXPECT_NE(redraw.find("0000:3c:00.0"), std::string::npos) << out;
  EXPECT_NE(redraw.find("0000:4d:00.0"), std::string::npos) << out;
  // Each finished change leaves its line; a failed one says so.
  EXPECT_EQ(Count(out, "provisioner: sriov 0000:3c:00.0 numVfs: 0 -> 8 ("), 1) << out;
  EXPECT_EQ(Count(out, "provisioner: sriov 0000:1a:00.0 numVfs: 0 -> 8: failed ("), 1) << out;
  EXPECT_EQ(Count(out, "provisioner: firmware 0000:4d:00.0 LINK_TYPE_P1: IB -> ETH ("), 1) << out;
  EXPECT_EQ(out.back(), '\n');
}

// Off a terminal: one line when a wait starts, then "still waiting" every
// quiet interval, never a line per poll.
TEST(ConsoleProgressTest, PlainWaitsSayStillWaitingNotOneLinePerPoll) {
  Captured cap;
  {
    ConsoleProgress p(cap.file(), {.terminal = false,
                                   .redraw_interval = std::chrono::milliseconds(20),
                                   .quiet_line_interval = std::chrono::milliseconds(200)});
    p.ChangeStarted(0, "sriov/0000:af:00.0/numVfs: 0 -> 16");
    for (int i = 0; i < 50; ++i) {  // 50 polls over ~1 s
      p.ChangeWaiting(0, "0000:af:00.0: " + std::to_string(i / 5) + "/16 VFs have netdevs",
                      std::chrono::seconds(300));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    p.ChangeFinished(0, "sriov 0000:af:00.0 numVfs: 0 -> 16", true);
  }
  std::string out = cap.Take();
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(Count(out, "VFs have netdevs (waiting at most 300 s)"), 1) << out;
  const int still = Count(out, ": still waiting (");
  EXPECT_GE(still, 2) << out;
  EXPECT_LE(still, 7) << out;
  EXPECT_LE(Count(out, "\n"), 10) << out;
  EXPECT_NE(out.find("s of 300 s)"), std::string::npos) << out;
  EXPECT_NE(out.find("provisioner: sriov 0000:af:00.0 numVfs: 0 -> 16 ("), std::string::npos)
      << out;
}

// Ctrl-C is acknowledged at once, while the change still runs.
TEST(ConsoleProgressTest, AnInterruptIsAcknowledgedAtOnce) {
  Captured cap;
  std::atomic<int> sig{0};
  {
    ConsoleProgress p(
        cap.file(),
        {.terminal = true, .redraw_interval = std::chrono::milliseconds(20), .interrupt = &sig});
    p.ChangeStarted(0, "sriov/0000:af:00.0/numVfs: 0 -> 16");
    sig = 2;  // SIGINT
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    p.ChangeFinished(0, "sriov 0000:af:00.0 numVfs: 0 -> 16", true);
  }
  std::string out = cap.Take();
  size_t ack = out.find("received: finishing the running change(s), then rolling back");
  ASSERT_NE(ack, std::string::npos) << out;
  EXPECT_LT(ack, out.find("provisioner: sriov 0000:af:00.0 numVfs: 0 -> 16 (")) << out;
  EXPECT_EQ(Count(out, "received: finishing"), 1) << out;
}

// Issue 38 item 5: at 80 columns (a BMC serial console, IPMI SOL) the VF
// count and the clock stay on the status line; the middle is shortened.
// Today the line was cut at the end, clock first.
TEST(ConsoleProgressTest, AtEightyColumnsTheCountAndTheClockStay) {
  Captured cap;
  {
    ConsoleProgress p(cap.file(), {.terminal = true,
                                   .redraw_interval = std::chrono::milliseconds(20),
                                   .columns = 80});
    p.ChangeStarted(0, "sriov 0000:af:00.0 numVfs: 0 -> 12");
    p.ChangeWaiting(0, "0000:af:00.0: 8/12 VFs have netdevs", std::chrono::seconds(300));
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  std::string out = cap.Take();
  // Every drawn line: after "\r\033[K", up to the next escape or newline.
  bool saw_wait = false;
  for (size_t at = out.find("\r\033[K"); at != std::string::npos;
       at = out.find("\r\033[K", at + 1)) {
    const size_t start = at + 4;
    const size_t end = out.find_first_of("\r\n\033", start);
    const std::string line = out.substr(start, end - start);
    // Status lines start with the spinner; Finish()'s permanent lines may wrap.
    if (line.size() < 2 || line[1] != ' ' || std::string("|/-\\").find(line[0]) == std::string::npos)
      continue;
    size_t columns = 0;
    for (char ch : line) columns += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    EXPECT_LE(columns, 79u) << line;
    if (line.find("VFs have netdevs") == std::string::npos) continue;
    saw_wait = true;
    EXPECT_NE(line.find("8/12 VFs have netdevs"), std::string::npos) << line;
    EXPECT_NE(line.find(" s of 300 s)"), std::string::npos) << line;
  }
  EXPECT_TRUE(saw_wait) << out;
}

// Issue 38 item 4: off a terminal a change is one line (when it finishes),
// and its module steps (one per VF) show only with -v (step_lines).
TEST(ConsoleProgressTest, OffATerminalAChangeIsOneLineAndStepsOnlyVerbose) {
  for (bool verbose : {false, true}) {
    Captured cap;
    {
      ConsoleProgress p(cap.file(), {.terminal = false, .step_lines = verbose});
      p.ChangeStarted(0, "vf 0000:af:00.0 trust#0-3: false -> true");
      for (int vf = 0; vf < 4; ++vf) p.ChangeStep(0, "VF " + std::to_string(vf) + " trust on");
      p.ChangeFinished(0, "vf 0000:af:00.0 trust#0-3: false -> true", true);
    }
    std::string out = cap.Take();
    EXPECT_EQ(Count(out, "vf 0000:af:00.0 trust#0-3: false -> true"), verbose ? 2 : 1) << out;
    EXPECT_EQ(Count(out, "trust on"), verbose ? 4 : 0) << out;
  }
}

}  // namespace
}  // namespace provisioner
