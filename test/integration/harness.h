// Runs the real provisioner binary (and the kernel simulator daemon) as
// subprocesses, for end-to-end tests.
#ifndef PROVISIONER_TEST_INTEGRATION_HARNESS_H_
#define PROVISIONER_TEST_INTEGRATION_HARNESS_H_

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "test/support/files.h"      // ReadFile, Exists
#include "test/support/host_yaml.h"  // HostYaml, Pf0Yaml

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

// A provisioner run interrupted by a signal once it reached a state.
struct Interrupted {
  bool reached = false;  // the state held (within 20 s) and the signal was sent
  pid_t pid = -1;
  int exit_code = -3;        // WaitExit's: -1 a signal ended it, -2 still running at 10 s (killed)
  long long elapsed_ms = 0;  // from the signal to the exit
  std::string out, err;
};
// Starts `provisioner --no-color ARGS...`, waits until `state` holds (a state
// the run reaches: a tree, a journal; never a time: under load a timer fires
// before the run got there), sends `sig` and waits up to 10 s for the exit.
Interrupted InterruptWhen(const std::vector<std::string>& args, const std::function<bool()>& state,
                          int sig);

// <root>/run/provisioner/journal.json, the apply journal.
std::string JournalPath(const std::string& root);
// How many of the journal's changes are "applying" (started, not done).
int ApplyingInJournal(const std::string& root);
// The PF `pci` has its `n` VFs: virtfn<n-1> exists and sriov_numvfs reads n
// (the simulated kernel writes the count after it made the VFs, truncate then
// write: a read between them is empty, so the count is checked too).
bool VfsMade(const std::string& root, const std::string& pci, int n);

// The provisioner binary in the runfiles.
std::string ProvisionerBinary();
// Runs provisioner with `args`.
RunResult Provisioner(const std::vector<std::string>& args);

// stdout of `r` as one JSON document (a test failure, and a discarded
// value, when it is not one).
nlohmann::json ParseJson(const RunResult& r);
// The steps the CLI tests repeat, each a test failure when the exit code is
// not the one given. `plan FILE --root ROOT -o json`: its document.
nlohmann::json PlanJson(const std::string& yaml, const std::string& root);
// `apply FILE --root ROOT -o json --settle-timeout 30`: its document.
nlohmann::json ApplyJson(const std::string& yaml, const std::string& root, int want_exit = 0);
// `plan FILE --root ROOT --detailed-exitcode` exits 0: nothing left to do.
void ExpectConverged(const std::string& yaml, const std::string& root);
// `COMMAND FILE --root ROOT` (plan, apply, validate) refuses the file, exit
// 1: its stderr, the errors.
std::string Refused(const std::string& command, const std::string& yaml, const std::string& root);

// `provisioner discover --root ROOT -o json`: the facts (a test failure
// unless it exits 0 with one JSON document).
nlohmann::json DiscoverJson(const std::string& root);
// The "id" of each change in `changes` (a plan's or an apply's), in order.
std::vector<std::string> Ids(const nlohmann::json& changes);
// examples/<name> in the runfiles.
std::string Example(const std::string& name);

// Extracts a test host tree (test/hosts/<name>.ttar) into a fresh directory.
std::string ExtractHost(const std::string& name);

// The tree of the generated host `preset` (test/support/host_presets.h) in a
// fresh directory; a test failure when it cannot be built.
std::string BuildPresetTree(const std::string& preset);

// ExtractHost(name) with a network namespace `netns` in it (the tree's
// stand-in: an entry in run/netns): the kernel refuses the RDMA netns mode
// switch while one exists, so the change waits for the next boot.
std::string ExtractHostWithNetns(const std::string& name, const std::string& netns);

// The names of every bundled host tree (test/hosts and examples/hosts), sorted.
std::vector<std::string> BundledHostTrees();

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
