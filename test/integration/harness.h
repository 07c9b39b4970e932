// Runs the real provisioner binary (and the kernel simulator daemon) as
// subprocesses, for end-to-end tests.
#ifndef PROVISIONER_TEST_INTEGRATION_HARNESS_H_
#define PROVISIONER_TEST_INTEGRATION_HARNESS_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "test/support/files.h"  // ReadFile, Exists

namespace provisioner::testing {

struct RunResult {
  int exit_code = -1;  // -1: killed by a signal (a crash)
  std::string out;
  std::string err;
};

// Runs argv[0] with the arguments; argv[0] is a path. No shell.
RunResult Run(const std::vector<std::string>& argv);
// The memory limit of a hostile case, as a command prefix: 2 GiB of address
// space (prlimit), or, in a sanitizer build (ASAN_OPTIONS set; ASan reserves
// terabytes of shadow address space), ASan's own limit on the resident size.
std::vector<std::string> MemoryLimitPrefix();

// While alive, the processes Run starts have no LeakSanitizer (in a
// sanitizer build): LSan stops the threads with ptrace to scan them, which it
// cannot under strace, and then fails the process. No-op elsewhere.
class NoLeakCheckUnderTracer {
 public:
  NoLeakCheckUnderTracer();
  ~NoLeakCheckUnderTracer();
  NoLeakCheckUnderTracer(const NoLeakCheckUnderTracer&) = delete;
  NoLeakCheckUnderTracer& operator=(const NoLeakCheckUnderTracer&) = delete;

 private:
  std::string saved_;
  bool had_ = false;
};

// Starts argv without waiting (stdout/stderr to /dev/null); returns the pid.
pid_t Spawn(const std::vector<std::string>& argv);

// Like Spawn, with stdout and stderr written to the files `out` and `err`.
pid_t SpawnToFiles(const std::vector<std::string>& argv, const std::string& out,
                   const std::string& err);

// Waits up to `limit_ms` for `pid` to exit: its exit code, -1 when a signal
// ended it, -2 when it was still running at the limit (then killed with
// SIGKILL and reaped). `elapsed_ms`: how long the wait took.
int WaitExit(pid_t pid, int limit_ms, long long* elapsed_ms = nullptr);

// Polls `done` every 10 ms for up to `limit_ms`: true once it held. For a
// state another process reaches (a file the apply writes), not a time.
bool WaitUntil(const std::function<bool()>& done, int limit_ms = 20000);

// The provisioner binary in the runfiles.
std::string ProvisionerBinary();
// Runs provisioner with `args`.
RunResult Provisioner(const std::vector<std::string>& args);

// Extracts a test host tree (test/hosts/<name>.ttar) into a fresh directory.
std::string ExtractHost(const std::string& name);

// Writes `content` to a fresh file under $TEST_TMPDIR and returns its path.
std::string WriteTempFile(const std::string& name, const std::string& content);

// The kernel simulator daemon on `root`, stopped on destruction.
class KernelSimDaemon {
 public:
  explicit KernelSimDaemon(const std::string& root, int netdev_delay_ms = 100,
                           const std::vector<std::string>& extra_args = {});
  ~KernelSimDaemon();
  KernelSimDaemon(const KernelSimDaemon&) = delete;
  KernelSimDaemon& operator=(const KernelSimDaemon&) = delete;
  bool ready() const { return ready_; }
  // What the simulated kernel refused (lines "<path> <ERRNO>"), "" if nothing.
  std::string Refused() const;

 private:
  std::string root_;
  pid_t pid_ = -1;
  bool ready_ = false;
};

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_INTEGRATION_HARNESS_H_
