#include "engine/output/progress.h"

namespace provisioner {

namespace {
constexpr const char* kSpinner[] = {"|", "/", "-", "\\"};

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}
}  // namespace

ConsoleProgress::ConsoleProgress(std::FILE* out, ProgressOptions options)
    : out_(out), options_(options) {}

ConsoleProgress::~ConsoleProgress() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  Finish();
}

void ConsoleProgress::Step(std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  // The ticker starts with the first step: commands that never show one
  // (discover, plan, a no-op apply) start no thread.
  if (!ticker_.joinable()) ticker_ = std::thread([this] { Tick(); });
  auto now = std::chrono::steady_clock::now();
  current_.assign(message.data(), message.size());
  step_start_ = now;
  last_line_ = now;
  if (options_.terminal) {
    line_open_ = true;
    DrawLocked(now);
  } else {
    std::fprintf(out_, "provisioner: %s\n", current_.c_str());
    std::fflush(out_);
  }
}

void ConsoleProgress::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.terminal && line_open_) {
    // The last state stays visible, as a finished line.
    std::fprintf(out_, "\r\033[Kprovisioner: %s (%.1fs)\n", current_.c_str(),
                 Seconds(std::chrono::steady_clock::now() - step_start_));
    std::fflush(out_);
  }
  line_open_ = false;
  current_.clear();
}

void ConsoleProgress::DrawLocked(std::chrono::steady_clock::time_point now) {
  std::fprintf(out_, "\r\033[K%s provisioner: %s (%.1fs)", kSpinner[frame_++ % 4],
               current_.c_str(), Seconds(now - step_start_));
  std::fflush(out_);
}

// Keeps the terminal line alive while a step blocks; off a terminal, says
// "still working" after a long silence.
void ConsoleProgress::Tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, options_.redraw_interval);
    if (stop_ || current_.empty()) continue;
    auto now = std::chrono::steady_clock::now();
    if (options_.terminal) {
      if (line_open_) DrawLocked(now);
    } else if (now - last_line_ >= options_.quiet_line_interval) {
      std::fprintf(out_, "provisioner: %s: still working (%.0fs)\n", current_.c_str(),
                   Seconds(now - step_start_));
      std::fflush(out_);
      last_line_ = now;
    }
  }
}

}  // namespace provisioner
