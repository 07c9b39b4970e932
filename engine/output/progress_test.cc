#include "engine/output/progress.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <thread>

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
    ConsoleProgress p(cap.file(), {.terminal = true, .redraw_interval = std::chrono::milliseconds(50)});
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
  EXPECT_EQ(out.rfind("provisioner: kmod: loading mlx5_ib\nprovisioner: mstconfig query 0000:86:00.0\n", 0), 0u) << out;
  // A long silent step says it is still working.
  EXPECT_GE(Count(out, "mstconfig query 0000:86:00.0: still working"), 1) << out;
}

TEST(ConsoleProgressTest, NothingWrittenWithoutSteps) {
  Captured cap;
  { ConsoleProgress p(cap.file(), {.terminal = true, .redraw_interval = std::chrono::milliseconds(10)});
    std::this_thread::sleep_for(std::chrono::milliseconds(50)); }
  EXPECT_EQ(cap.Take(), "");
}

}  // namespace
}  // namespace provisioner
