// The agent's loop: one epoll over the event source, the host.yaml watch and
// a signalfd, with the timeout computed from the next deadline (debounce,
// resync, backoff retry, lock retry, watchdog). Idle, nothing else wakes it.
#include "engine/agent/agent.h"

#include <errno.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/agent/agent_status.h"
#include "engine/agent/backoff.h"
#include "engine/agent/event_source.h"
#include "engine/agent/metrics.h"
#include "engine/agent/reconcile.h"
#include "engine/base/fd_io.h"
#include "engine/core/session.h"
#include "engine/manifests/manifests.h"
#include "engine/plan/change.h"
#include "spdlog/spdlog.h"

namespace provisioner::agent {
namespace {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;
using std::chrono::milliseconds;

// How long a CLI apply's lock is waited for between tries.
constexpr milliseconds kLockRetry{500};

std::string Now() { return UtcTime(std::chrono::system_clock::now()); }

// host.yaml's last good bytes in a memfd: what every reconcile plans from,
// whatever the file on disk says meanwhile.
class DesiredCopy {
 public:
  ~DesiredCopy() {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Open() {
    fd_ = ::memfd_create("host.yaml", MFD_CLOEXEC);
    if (fd_ < 0) return ErrnoToStatus(errno, "memfd_create");
    return OkStatus();
  }
  Status Set(const std::string& bytes) {
    if (::ftruncate(fd_, 0) != 0) return ErrnoToStatus(errno, "ftruncate memfd");
    if (::pwrite(fd_, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
      return ErrnoToStatus(errno, "write memfd");
    }
    bytes_ = bytes;
    return OkStatus();
  }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }
  const std::string& bytes() const { return bytes_; }

 private:
  int fd_ = -1;
  std::string bytes_;
};

StatusOr<std::string> ReadHostYaml(const std::string& file) {
  std::string out;
  const char* not_regular = nullptr;
  if (int e = ReadRegularFile(file, size_t{4} << 20, &out, &not_regular); e != 0) {
    if (e < 0) return FailedPreconditionError("read " + file + ": not a regular file");
    return ErrnoToStatus(e, "read " + file);
  }
  return out;
}

// The first error of a load, as file:line:column says it.
std::string FirstError(const std::string& file, const FileDiagnostics& d) {
  for (const Diagnostic& item : d.items) {
    if (item.severity == Severity::kError) return FormatDiagnostic(file, d.marks, item);
  }
  return file + ": invalid";
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); !from.empty() && at != std::string::npos;
       at = s.find(from, at + to.size())) {
    s.replace(at, from.size(), to);
  }
  return s;
}

class Agent {
 public:
  explicit Agent(AgentOptions o)
      : opt_(std::move(o)), backoff_(opt_.backoff_base, opt_.backoff_cap) {}

  int Run() {
    if (Status s = Start(); !s.ok()) {
      std::fprintf(stderr, "provisioner: agent: %s\n", s.message().c_str());
      return 1;
    }
    ::sd_notify(0, "READY=1\nSTATUS=converging");
    want_reconcile_ = SteadyClock::now();
    trigger_ = "start";
    for (;;) {
      const TimePoint now = SteadyClock::now();
      if (stop_) break;
      if (want_reconcile_ && *want_reconcile_ <= now) {
        RunReconcile();
        continue;
      }
      if (watchdog_ && *watchdog_ <= now) {
        ::sd_notify(0, "WATCHDOG=1");
        *watchdog_ = now + watchdog_interval_;
      }
      Wait();
    }
    ::sd_notify(0, "STOPPING=1");
    spdlog::info("agent: stopped by a signal");
    return 0;
  }

 private:
  Status Start() {
    // The stop signals through a signalfd: blocked before any thread starts
    // (the exposer's inherit the mask), so a SIGTERM during an apply lets
    // it finish (or roll back) and is read after it.
    sigset_t set;
    sigemptyset(&set);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, sig);
    if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0) return ErrnoToStatus(errno, "sigprocmask");
    sig_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (sig_fd_ < 0) return ErrnoToStatus(errno, "signalfd");

    auto bytes = ReadHostYaml(opt_.file);
    if (!bytes.ok()) return bytes.status();
    LoadOutcome loaded = LoadFile(opt_.file);
    if (!loaded.desired) return InvalidArgumentError(FirstError(opt_.file, loaded.diagnostics));
    RETURN_IF_ERROR(desired_.Open());
    RETURN_IF_ERROR(desired_.Set(*bytes));
    state_.desired_digest = Digest(*bytes);
    state_.desired_loaded_at = Now();
    state_.root = opt_.root;
    state_.file = opt_.file;
    if (!opt_.file.empty() && opt_.file[0] != '/') {
      char cwd[4096];
      if (::getcwd(cwd, sizeof cwd) != nullptr) state_.file = std::string(cwd) + "/" + opt_.file;
    }

    HostOptions host;
    host.root = opt_.root;
    auto opened = OpenHost(host);
    if (!opened.ok()) return opened.status();
    host_ = std::move(opened).value();
    auto source = NewEventSource(*host_->fs);
    if (!source.ok()) return source.status().WithContext("event source");
    source_ = std::move(source).value();
    state_.event_source = source_->kind();
    if (auto nfd = host_->fs->ReadFile(kNfdFeaturesPath); nfd.ok()) nfd_written_ = *nfd;

    file_fd_ = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (file_fd_ < 0) return ErrnoToStatus(errno, "inotify_init1");
    const std::string dir = std::string(Dirname(opt_.file)).empty() ? "." : std::string(Dirname(opt_.file));
    // The directory: an editor replaces the file (rename), which a watch on
    // the file itself would lose.
    if (::inotify_add_watch(file_fd_, dir.c_str(), IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE) < 0) {
      return ErrnoToStatus(errno, "inotify_add_watch " + dir);
    }
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return ErrnoToStatus(errno, "epoll_create1");
    for (int fd : {sig_fd_, file_fd_, source_->fd()}) {
      struct epoll_event ev = {};
      ev.events = EPOLLIN;
      ev.data.fd = fd;
      if (::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) return ErrnoToStatus(errno, "epoll_ctl");
    }
    if (!opt_.metrics_address.empty() && opt_.metrics_address != "off") {
      RETURN_IF_ERROR(CheckMetricsAddress(opt_.metrics_address, opt_.metrics_address_given));
      auto metrics = StartMetrics(opt_.metrics_address, opt_.root);
      if (metrics.ok()) {
        metrics_ = std::move(metrics).value();
        state_.metrics_address = metrics_->address();
        spdlog::info("agent: metrics on http://{}/metrics", metrics_->address());
      } else if (metrics.status().code() == StatusCode::kUnimplemented &&
                 !opt_.metrics_address_given) {
        // The portable build has no endpoint: the default address is not an error.
        spdlog::warn("agent: {}", metrics.status().message());
      } else {
        return metrics.status();
      }
    }
    uint64_t usec = 0;
    if (::sd_watchdog_enabled(0, &usec) > 0 && usec > 0) {
      watchdog_interval_ = milliseconds(std::max<uint64_t>(usec / 2000, 1));
      watchdog_ = SteadyClock::now();
    }
    return OkStatus();
  }

  // Sleeps until the next deadline or something readable; handles it.
  void Wait() {
    const TimePoint now = SteadyClock::now();
    std::optional<TimePoint> next = want_reconcile_;
    auto earliest = [&](std::optional<TimePoint> t) {
      if (t && (!next || *t < *next)) next = t;
    };
    earliest(watchdog_);
    earliest(resync_at_);
    earliest(backoff_.NextRetry(now));
    int timeout = -1;
    if (next) {
      const auto left = std::chrono::duration_cast<milliseconds>(*next - now).count() + 1;
      timeout = static_cast<int>(std::clamp<int64_t>(left, 0, 24 * 3600 * 1000));
    }
    struct epoll_event evs[4];
    const int n = ::epoll_wait(ep_, evs, 4, timeout);
    const TimePoint after = SteadyClock::now();
    if (resync_at_ && *resync_at_ <= after && !want_reconcile_) {
      Want(after, "resync");
    }
    if (auto retry = backoff_.NextRetry(now); retry && *retry <= after && !want_reconcile_) {
      Want(after, "backoff");
    }
    for (int i = 0; i < n; ++i) {
      const int fd = evs[i].data.fd;
      if (fd == sig_fd_) HandleSignals();
      if (fd == file_fd_) HandleFileEvents();
      if (fd == source_->fd()) HandleEvents();
    }
  }

  void Want(TimePoint at, const std::string& trigger) {
    if (!want_reconcile_ || at < *want_reconcile_ || trigger == "event") want_reconcile_ = at;
    trigger_ = trigger;
  }

  void HandleSignals() {
    struct signalfd_siginfo si;
    while (::read(sig_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
      if (si.ssi_signo == SIGHUP) {
        ReloadDesired("SIGHUP");
      } else {
        stop_ = true;
      }
    }
  }

  void HandleFileEvents() {
    alignas(struct inotify_event) char buf[4096];
    bool ours = false;
    const std::string base(Basename(opt_.file));
    for (ssize_t n; (n = ::read(file_fd_, buf, sizeof buf)) > 0;) {
      for (ssize_t off = 0; off < n;) {
        const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
        off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
        if (ev->len > 0 && base == ev->name) ours = true;
      }
    }
    if (ours) ReloadDesired("host.yaml changed");
  }

  // Reads host.yaml again: a valid edit becomes the desired state (and a
  // reconcile follows); an invalid one is reported, the last good state stays.
  void ReloadDesired(const std::string& why) {
    auto bytes = ReadHostYaml(opt_.file);
    if (!bytes.ok()) {
      ReportDesiredError(bytes.status().message());
      return;
    }
    if (*bytes == desired_.bytes() && state_.desired_error.empty()) return;
    LoadOutcome loaded = LoadFile(opt_.file);
    if (!loaded.desired) {
      ReportDesiredError(FirstError(opt_.file, loaded.diagnostics));
      return;
    }
    previous_bytes_ = desired_.bytes();
    if (Status s = desired_.Set(*bytes); !s.ok()) {
      ReportDesiredError(s.message());
      return;
    }
    unproven_ = true;  // a plan-time error still sends it back (RunReconcile)
    state_.desired_digest = Digest(*bytes);
    state_.desired_loaded_at = Now();
    state_.desired_error.clear();
    spdlog::info("agent: {}: desired state reloaded", why);
    Want(SteadyClock::now(), "host.yaml");
  }

  void ReportDesiredError(const std::string& error) {
    spdlog::error("agent: host.yaml not taken, running on the last good state: {}", error);
    state_.desired_error = error;
    WriteStatus();
  }

  void HandleEvents() {
    std::vector<std::string> events;
    if (Status s = source_->Read(&events); !s.ok()) spdlog::warn("agent: {}", s.message());
    if (events.empty()) return;
    state_.events += events.size();
    state_.last_event = events.back();
    state_.last_event_at = Now();
    spdlog::debug("agent: {} event(s), last: {}", events.size(), events.back());
    // A burst is debounced: the reconcile waits for a quiet period.
    want_reconcile_ = SteadyClock::now() + opt_.debounce;
    trigger_ = "event";
  }

  void RunReconcile() {
    want_reconcile_.reset();
    ::sd_notify(0, "STATUS=reconciling");
    ReconcileRequest request;
    request.file = desired_.path();
    request.host.root = opt_.root;
    request.host.settle_timeout = opt_.settle_timeout;
    const auto wall = std::chrono::system_clock::now();
    ReconcileResult r = Reconcile(request, &backoff_);
    r.error = Replace(r.error, desired_.path(), opt_.file);
    if (r.file_invalid && unproven_ && !previous_bytes_.empty()) {
      // The edit loads but does not plan on this host: back to the last good.
      state_.desired_error = r.error;
      (void)desired_.Set(previous_bytes_);
      state_.desired_digest = Digest(previous_bytes_);
      unproven_ = false;
      Want(SteadyClock::now(), "host.yaml");
      WriteStatus();
      return;
    }
    if (!r.file_invalid) unproven_ = false;
    if (r.result == "waiting-for-lock") {
      // A CLI apply holds the lock: wait for it, never fail.
      want_reconcile_ = SteadyClock::now() + kLockRetry;
      if (!state_.waiting_for_lock) {
        spdlog::info("agent: {}: waiting", r.error);
        state_.waiting_for_lock = true;
        WriteStatus();
      }
      return;
    }
    state_.waiting_for_lock = false;
    // What the apply itself caused is not a new event.
    std::vector<std::string> own;
    (void)source_->Read(&own);
    if (Status s = source_->Rescan(); !s.ok()) spdlog::warn("agent: rescan: {}", s.message());
    ++state_.reconciles;
    state_.last_reconcile_at = UtcTime(wall);
    state_.last_trigger = trigger_;
    state_.last_result = r.result;
    state_.last_error = r.error;
    state_.last_duration_ms = r.duration.count();
    state_.pending = r.pending;
    state_.converged = r.result == "converged" || r.result == "applied";
    state_.reboot_pending = r.reboot_pending;
    if (r.result != "failed") state_.last_success_at = state_.last_reconcile_at;
    for (const auto& [m, n] : r.drift_detected) state_.drift_detected[m] += n;
    for (const auto& [m, n] : r.drift_fixed) state_.drift_fixed[m] += n;
    if (r.facts && r.desired) state_.fact_labels = manifests::NodeFeatureFactLabels(*r.desired, *r.facts);
    // Counted before it is logged: whoever reads the log line and then
    // scrapes /metrics finds this reconcile there.
    if (metrics_) {
      metrics_->Record(r, std::chrono::duration<double>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count());
    }
    if (!r.error.empty()) spdlog::error("agent: reconcile {}: {}", r.result, r.error);
    spdlog::info("agent: reconcile ({}) {} in {} ms, {} pending", trigger_, r.result,
                 r.duration.count(), r.pending.size());
    WriteStatus();
    resync_at_ = SteadyClock::now() + opt_.resync;
    ::sd_notify(0, state_.converged ? "STATUS=converged" : "STATUS=not converged");
  }

  // The node-feature-discovery file before the status file: the status is
  // what a waiter reads (`provisioner status`, tests), so once it shows a
  // reconcile, that reconcile's labels are on disk too.
  void WriteStatus() {
    if (!state_.last_reconcile_at.empty()) {
      if (auto w = WriteNfdIfChanged(*host_->fs, state_, &nfd_written_); !w.ok()) {
        spdlog::warn("agent: node-feature-discovery: {}", w.status().message());
      }
    }
    if (Status s = WriteStatusFile(*host_->fs, state_, backoff_); !s.ok()) {
      spdlog::warn("agent: status: {}", s.message());
    }
  }

  AgentOptions opt_;
  Backoff backoff_;
  AgentState state_;
  DesiredCopy desired_;
  std::string previous_bytes_;
  bool unproven_ = false;
  std::unique_ptr<Host> host_;  // the status and NFD writes
  std::unique_ptr<EventSource> source_;
  std::unique_ptr<AgentMetrics> metrics_;
  std::string nfd_written_;
  int sig_fd_ = -1, file_fd_ = -1, ep_ = -1;
  bool stop_ = false;
  std::optional<TimePoint> want_reconcile_, resync_at_, watchdog_;
  milliseconds watchdog_interval_{0};
  std::string trigger_ = "start";
};

}  // namespace

int RunAgent(const AgentOptions& options) { return Agent(options).Run(); }

}  // namespace provisioner::agent
