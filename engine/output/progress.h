// Progress of long steps on stderr. On a terminal a block of status lines is
// redrawn in place, one per running change (apply runs independent ones at
// once), each with a spinner and its elapsed time ticking several times a
// second even while the change blocks (a firmware set, a VF wait); a bounded
// wait shows its total elapsed time against its limit ("12 s of 300 s"). A
// change that finishes leaves a permanent line, in the plan's wording, with
// its duration. Elsewhere (logs, Ansible, systemd): one plain line per step,
// a "still waiting (N s of L s)" line every `quiet_line_interval` of a wait
// (not one per poll), and the permanent line per finished change.
#ifndef PROVISIONER_ENGINE_OUTPUT_PROGRESS_H_
#define PROVISIONER_ENGINE_OUTPUT_PROGRESS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "engine/module/module.h"

namespace provisioner {

struct ProgressOptions {
  bool terminal = false;  // redraw in place (stderr is a TTY)
  std::chrono::milliseconds redraw_interval{200};
  std::chrono::milliseconds quiet_line_interval{std::chrono::seconds(10)};
  // A signal number set asynchronously (InterruptGuard::signal()): when it
  // is set, says at once what happens now (the running changes finish, then
  // everything applied is rolled back), without waiting for them.
  const std::atomic<int>* interrupt = nullptr;
  // Off a terminal, a line for each module step of a change ("VF 3 trust
  // on") and for each change's start (-v); without, a change is one line,
  // when it finishes (and a wait's lines in between).
  bool step_lines = false;
  // The terminal's width; 0: asked of the terminal (TIOCGWINSZ).
  size_t columns = 0;
};

class ConsoleProgress final : public Progress {
 public:
  ConsoleProgress(std::FILE* out, ProgressOptions options);
  ~ConsoleProgress() override;  // Finish()es

  void Step(std::string_view message) override;
  void Waiting(std::string_view message, std::chrono::milliseconds limit) override;
  void ChangeStarted(size_t key, std::string_view label) override;
  void ChangeStep(size_t key, std::string_view message) override;
  void ChangeWaiting(size_t key, std::string_view message,
                     std::chrono::milliseconds limit) override;
  void ChangeFinished(size_t key, std::string_view line, bool ok) override;
  // Ends the status lines (terminal) so that what follows (results, errors)
  // starts on a clean line; later Steps start new ones.
  void Finish();

  // Runs `write` (a log line to the same terminal: the spdlog sink of
  // engine/cli) with the status lines of the live terminal progress, if
  // any, cleared first and drawn again after it, so that a warning never
  // lands in the middle of a status line. Without one, just runs it.
  static void WriteAbove(const std::function<void()>& write);

 private:
  using TimePoint = std::chrono::steady_clock::time_point;
  struct Slot {
    std::string label;   // the step, or the change
    std::string detail;  // a change's latest module step
    TimePoint start;
    TimePoint wait_start;
    TimePoint last_line;  // off a terminal: the last line printed for it
    std::chrono::milliseconds limit{0};
    bool waiting = false;
  };
  // The slot of Step/Waiting outside any change (discover, plan).
  static constexpr size_t kPlain = static_cast<size_t>(-1);

  void StartTickerLocked();
  void StartSlotLocked(size_t key, std::string_view label, bool announce);
  void UpdateLocked(size_t key, std::string_view message, bool waiting,
                    std::chrono::milliseconds limit);
  // The status line of `s`, at most `columns` wide (0: any width): the
  // clock and the start of the latest step (the VF count) always show, the
  // middle is shortened.
  std::string RenderLocked(const Slot& s, TimePoint now, const char* spin, size_t columns) const;
  // Terminal: the block drawn again; ClearLocked leaves the cursor where the
  // block started, on a cleared line.
  void DrawLocked(TimePoint now);
  void ClearLocked();
  // A line that stays (above the block on a terminal).
  void PrintLineLocked(const std::string& line);
  void Tick();

  std::FILE* out_;
  ProgressOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<size_t, Slot> slots_;
  size_t drawn_ = 0;  // terminal: lines of the block on screen
  bool stop_ = false;
  bool acknowledged_ = false;  // the interrupt was said
  int frame_ = 0;
  std::thread ticker_;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_OUTPUT_PROGRESS_H_
