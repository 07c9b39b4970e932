// Progress of long steps on stderr. On a terminal one status line is redrawn
// in place, with a spinner and the step's elapsed time ticking several times
// a second even while a step blocks (a firmware query, a VF wait), so the
// user never looks at a silent prompt. Elsewhere (logs, Ansible, systemd):
// one plain line per step, and a "still working" line when a step has been
// silent for `quiet_line_interval`.
#ifndef PROVISIONER_ENGINE_OUTPUT_PROGRESS_H_
#define PROVISIONER_ENGINE_OUTPUT_PROGRESS_H_

#include <chrono>
#include <condition_variable>
#include <cstdio>
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
};

class ConsoleProgress final : public Progress {
 public:
  ConsoleProgress(std::FILE* out, ProgressOptions options);
  ~ConsoleProgress() override;  // Finish()es

  void Step(std::string_view message) override;
  // Ends the status line (terminal) so that what follows starts on a clean
  // line; later Steps start a new one.
  void Finish();

 private:
  void Tick();
  void DrawLocked(std::chrono::steady_clock::time_point now);

  std::FILE* out_;
  ProgressOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string current_;
  bool line_open_ = false;
  bool stop_ = false;
  int frame_ = 0;
  std::chrono::steady_clock::time_point step_start_;
  std::chrono::steady_clock::time_point last_line_;
  std::thread ticker_;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_OUTPUT_PROGRESS_H_
