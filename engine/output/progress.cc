#include "engine/output/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cmath>

#include "engine/base/interrupt.h"

namespace provisioner {

namespace {
constexpr const char* kSpinner[] = {"|", "/", "-", "\\"};

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

std::string Fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// "12 s of 300 s": whole seconds, as a user reads a wait against its limit.
std::string WaitClock(std::chrono::steady_clock::duration elapsed,
                      std::chrono::milliseconds limit) {
  const long long s = static_cast<long long>(std::floor(Seconds(elapsed)));
  const double l = std::chrono::duration<double>(limit).count();
  const std::string ls = l == std::floor(l) ? std::to_string(static_cast<long long>(l)) : Fixed1(l);
  return std::to_string(s) + " s of " + ls + " s";
}

// Columns of the terminal behind `f` (0 when unknown): a status line longer
// than that would wrap and break the in-place redraw.
size_t Columns(std::FILE* f) {
  struct winsize ws {};
  if (::ioctl(::fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

// Terminal columns of UTF-8 text (one per character; "…" is one).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (char ch : s) n += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
  return n;
}

// The first `n` columns of `s` (whole characters).
std::string Head(const std::string& s, size_t n) {
  size_t i = 0;
  for (size_t cols = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && cols++ == n) break;
  }
  return s.substr(0, i);
}

// The last `n` columns of `s`.
std::string Tail(const std::string& s, size_t n) {
  size_t i = s.size();
  for (size_t cols = 0; i > 0 && cols < n; --i) {
    if ((static_cast<unsigned char>(s[i - 1]) & 0xC0) != 0x80) ++cols;
  }
  return s.substr(i);
}

// `s` in at most `n` columns, its middle replaced by "…".
std::string ElideMiddle(const std::string& s, size_t n) {
  if (Width(s) <= n) return s;
  if (n <= 1) return Head("\u2026", n);
  const size_t keep = n - 1;
  return Head(s, keep - keep / 2) + "\u2026" + Tail(s, keep / 2);
}

}  // namespace

namespace {
// The terminal progress whose status lines a log line must not cut into
// (WriteAbove); one command has one.
std::mutex active_mu;
ConsoleProgress* active = nullptr;
}  // namespace

ConsoleProgress::ConsoleProgress(std::FILE* out, ProgressOptions options)
    : out_(out), options_(options) {
  if (!options_.terminal) return;
  std::lock_guard<std::mutex> lock(active_mu);
  active = this;
}

void ConsoleProgress::WriteAbove(const std::function<void()>& write) {
  std::lock_guard<std::mutex> lock(active_mu);
  if (active == nullptr) {
    write();
    return;
  }
  std::lock_guard<std::mutex> progress_lock(active->mu_);
  const bool drawn = active->drawn_ > 0;
  active->ClearLocked();
  std::fflush(active->out_);
  write();
  if (drawn && !active->slots_.empty()) active->DrawLocked(std::chrono::steady_clock::now());
}

ConsoleProgress::~ConsoleProgress() {
  {
    std::lock_guard<std::mutex> lock(active_mu);
    if (active == this) active = nullptr;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  Finish();
}

void ConsoleProgress::StartTickerLocked() {
  // The ticker starts with the first step: commands that never show one
  // (discover, plan, a no-op apply) start no thread.
  if (!ticker_.joinable()) ticker_ = std::thread([this] { Tick(); });
}

void ConsoleProgress::Step(std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  StartSlotLocked(kPlain, message, true);
}

void ConsoleProgress::Waiting(std::string_view message, std::chrono::milliseconds limit) {
  std::lock_guard<std::mutex> lock(mu_);
  StartTickerLocked();
  UpdateLocked(kPlain, message, true, limit);
}

void ConsoleProgress::ChangeStarted(size_t key, std::string_view label) {
  std::lock_guard<std::mutex> lock(mu_);
  slots_.erase(kPlain);  // a step before apply (discovery) is over
  StartSlotLocked(key, label, options_.step_lines);
}

// A fresh slot for a step or a change: drawn on a terminal, one line elsewhere.
void ConsoleProgress::StartSlotLocked(size_t key, std::string_view label, bool announce) {
  StartTickerLocked();
  auto now = std::chrono::steady_clock::now();
  Slot& s = slots_[key];
  s = Slot();
  s.label.assign(label.data(), label.size());
  s.start = now;
  s.last_line = now;
  if (options_.terminal) {
    DrawLocked(now);
  } else if (announce) {
    std::fprintf(out_, "provisioner: %s\n", s.label.c_str());
    std::fflush(out_);
  }
}

void ConsoleProgress::ChangeStep(size_t key, std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  StartTickerLocked();
  UpdateLocked(key, message, false, std::chrono::milliseconds(0));
}

void ConsoleProgress::ChangeWaiting(size_t key, std::string_view message,
                                    std::chrono::milliseconds limit) {
  std::lock_guard<std::mutex> lock(mu_);
  StartTickerLocked();
  UpdateLocked(key, message, true, limit);
}

void ConsoleProgress::UpdateLocked(size_t key, std::string_view message, bool waiting,
                                   std::chrono::milliseconds limit) {
  auto now = std::chrono::steady_clock::now();
  auto [it, fresh] = slots_.try_emplace(key);
  Slot& s = it->second;
  if (fresh) {
    s.start = now;
    s.last_line = now;
    s.label.assign(message.data(), message.size());
  }
  s.detail.assign(message.data(), message.size());
  const bool new_wait = waiting && !s.waiting;
  if (new_wait) s.wait_start = now;
  s.waiting = waiting;
  s.limit = limit;
  if (options_.terminal) {
    DrawLocked(now);
    return;
  }
  // Off a terminal: a step is a line; a wait is one line when it starts,
  // then the ticker's "still waiting" lines, never one per poll.
  if (!waiting) {
    if (key != kPlain && !options_.step_lines) return;  // -v: a change's steps
    std::fprintf(out_, "provisioner: %s\n", s.detail.c_str());
  } else if (new_wait) {
    std::fprintf(out_, "provisioner: %s (waiting at most %s)\n", s.detail.c_str(),
                 WaitClock(std::chrono::seconds(0), limit).substr(7).c_str());
  } else {
    return;
  }
  s.last_line = now;
  std::fflush(out_);
}

void ConsoleProgress::ChangeFinished(size_t key, std::string_view line, bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  auto now = std::chrono::steady_clock::now();
  auto it = slots_.find(key);
  const double took = it == slots_.end() ? 0.0 : Seconds(now - it->second.start);
  if (it != slots_.end()) slots_.erase(it);
  PrintLineLocked("provisioner: " + std::string(line) + (ok ? "" : ": failed") + " (" +
                  Fixed1(took) + " s)");
}

void ConsoleProgress::Finish() {
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.terminal && drawn_ > 0) {
    // The last state stays visible, as finished lines.
    auto now = std::chrono::steady_clock::now();
    ClearLocked();
    for (const auto& [key, s] : slots_) {
      std::string text = s.label;
      if (key != kPlain && !s.detail.empty()) text += ": " + s.detail;
      std::fprintf(out_, "\r\033[Kprovisioner: %s (%.1fs)\n", text.c_str(), Seconds(now - s.start));
    }
    std::fflush(out_);
  }
  drawn_ = 0;
  slots_.clear();
}

std::string ConsoleProgress::RenderLocked(const Slot& s, TimePoint now, const char* spin,
                                          size_t columns) const {
  std::string head = std::string(spin) + " provisioner: ";
  std::string label = s.label;
  std::string detail = !s.detail.empty() && s.detail != s.label ? ": " + s.detail : "";
  const std::string clock = s.waiting && s.limit.count() > 0
                                ? " (" + WaitClock(now - s.wait_start, s.limit) + ")"
                                : " (" + Fixed1(Seconds(now - s.start)) + "s)";
  auto width = [&] { return Width(head) + Width(label) + Width(detail) + Width(clock); };
  if (columns == 0 || width() <= columns) return head + label + detail + clock;
  // Narrow (an 80-column serial console): the clock and the step's start
  // ("8/12 VFs have netdevs") stay; the change's label gives way first.
  head = std::string(spin) + " ";
  constexpr size_t kShortestLabel = 16;
  if (width() > columns) {
    const size_t rest = Width(head) + Width(detail) + Width(clock);
    label = ElideMiddle(label, rest + kShortestLabel <= columns ? columns - rest : kShortestLabel);
  }
  if (width() > columns) {
    const size_t rest = Width(head) + Width(label) + Width(clock);
    detail = ElideMiddle(detail, columns > rest ? columns - rest : 0);
  }
  if (width() > columns) {
    const size_t room = columns > Width(clock) ? columns - Width(clock) : 0;
    return Head(head + label + detail, room) + clock;
  }
  return head + label + detail + clock;
}

void ConsoleProgress::ClearLocked() {
  if (drawn_ == 0) return;
  std::fputc('\r', out_);
  if (drawn_ > 1) std::fprintf(out_, "\033[%zuA", drawn_ - 1);
  std::fputs("\033[J", out_);
  drawn_ = 0;
}

void ConsoleProgress::DrawLocked(TimePoint now) {
  const size_t columns = options_.columns > 0 ? options_.columns : Columns(out_);
  // Back to the block's first line, then every line again. One line is
  // today's single status line: "\r\033[K" and the text, no newline.
  if (drawn_ > 1) std::fprintf(out_, "\r\033[%zuA", drawn_ - 1);
  size_t n = 0;
  const char* spin = kSpinner[frame_++ % 4];
  for (const auto& [key, s] : slots_) {
    // One column short of the width: a line that fills it would wrap on
    // some terminals and break the redraw.
    std::string line = RenderLocked(s, now, spin, columns > 1 ? columns - 1 : 0);
    std::fprintf(out_, "%s\r\033[K%s", n == 0 ? "" : "\n", line.c_str());
    ++n;
  }
  if (n < drawn_) std::fputs("\033[J", out_);  // lines of finished changes
  drawn_ = n;
  std::fflush(out_);
}

void ConsoleProgress::PrintLineLocked(const std::string& line) {
  if (options_.terminal) {
    ClearLocked();
    std::fprintf(out_, "\r\033[K%s\n", line.c_str());
    if (!slots_.empty()) DrawLocked(std::chrono::steady_clock::now());
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
}

// Keeps the terminal lines alive while changes block; off a terminal, says
// "still waiting" / "still working" after a long silence; says at once that a
// signal arrived.
void ConsoleProgress::Tick() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, options_.redraw_interval);
    if (stop_) break;
    const int sig = options_.interrupt != nullptr ? options_.interrupt->load() : 0;
    if (sig != 0 && !acknowledged_) {
      acknowledged_ = true;
      PrintLineLocked("provisioner: " + SignalName(sig) +
                      " received: finishing the running change(s), then rolling back "
                      "everything applied");
    }
    if (slots_.empty()) continue;
    auto now = std::chrono::steady_clock::now();
    if (options_.terminal) {
      DrawLocked(now);
      continue;
    }
    for (auto& [key, s] : slots_) {
      if (now - s.last_line < options_.quiet_line_interval) continue;
      std::string text = key == kPlain ? s.label : s.label + ": " + s.detail;
      if (key != kPlain && s.detail.empty()) text = s.label;
      if (s.waiting && s.limit.count() > 0) {
        std::fprintf(out_, "provisioner: %s: still waiting (%s)\n", text.c_str(),
                     WaitClock(now - s.wait_start, s.limit).c_str());
      } else {
        std::fprintf(out_, "provisioner: %s: still working (%.0fs)\n", text.c_str(),
                     Seconds(now - s.start));
      }
      std::fflush(out_);
      s.last_line = now;
    }
  }
}

}  // namespace provisioner
