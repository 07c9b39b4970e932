#include "test/integration/harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "gtest/gtest.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

extern char** environ;

namespace provisioner::testing {

RunResult Run(const std::vector<std::string>& argv) {
  RunResult r;
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) return r;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    r.err = "spawn " + argv[0] + ": " + std::strerror(rc);
    ::close(out[0]);
    ::close(err[0]);
    return r;
  }
  struct pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

pid_t Spawn(const std::vector<std::string>& argv) {
  return SpawnToFiles(argv, "/dev/null", "/dev/null");
}

pid_t SpawnToFiles(const std::vector<std::string>& argv, const std::string& out,
                   const std::string& err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

int WaitExit(pid_t pid, int limit_ms, long long* elapsed_ms) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::milliseconds(limit_ms);
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (elapsed_ms != nullptr) {
    *elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -2;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool WaitUntil(const std::function<bool()>& done, int limit_ms) { return WaitFor(done, limit_ms); }

Interrupted InterruptWhen(const std::vector<std::string>& args, const std::function<bool()>& state,
                          int sig) {
  Interrupted r;
  const std::string out = WriteTempFile("interrupted.out", "");
  const std::string err = WriteTempFile("interrupted.err", "");
  std::vector<std::string> argv = {ProvisionerBinary(), "--no-color"};
  argv.insert(argv.end(), args.begin(), args.end());
  r.pid = SpawnToFiles(argv, out, err);
  if (r.pid <= 0) return r;
  r.reached = WaitUntil(state);
  if (r.reached) ::kill(r.pid, sig);
  r.exit_code = WaitExit(r.pid, r.reached ? 10000 : 0, &r.elapsed_ms);
  r.out = ReadFile(out);
  r.err = ReadFile(err);
  return r;
}

std::string JournalPath(const std::string& root) { return root + "/run/provisioner/journal.json"; }

int ApplyingInJournal(const std::string& root) {
  const std::string text = ReadFile(JournalPath(root));
  int n = 0;
  for (size_t p = text.find("\"applying\""); p != std::string::npos;
       p = text.find("\"applying\"", p + 1)) {
    ++n;
  }
  return n;
}

bool VfsMade(const std::string& root, const std::string& pci, int n) {
  const std::string pf = root + "/sys/bus/pci/devices/" + pci;
  return Exists(pf + "/virtfn" + std::to_string(n - 1)) &&
         ReadFile(pf + "/sriov_numvfs") == std::to_string(n) + "\n";
}

std::string ProvisionerBinary() { return RunfilePath("engine/cli/provisioner"); }

RunResult Provisioner(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ProvisionerBinary(), "--no-color"};
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

nlohmann::json ParseJson(const RunResult& r) {
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "stdout is not one JSON document:\n" << r.out << "\n" << r.err;
  return j;
}

nlohmann::json PlanJson(const std::string& yaml, const std::string& root) {
  RunResult r = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << "plan " << yaml << ":\n" << r.err;
  return ParseJson(r);
}

std::string Refused(const std::string& command, const std::string& yaml, const std::string& root) {
  RunResult r = Provisioner({command, yaml, "--root", root});
  EXPECT_EQ(r.exit_code, 1) << command << " " << yaml << ":\n" << r.out << r.err;
  return r.err;
}

nlohmann::json ApplyJson(const std::string& yaml, const std::string& root, int want_exit) {
  RunResult r =
      Provisioner({"apply", yaml, "--root", root, "-o", "json", "--settle-timeout", "30"});
  EXPECT_EQ(r.exit_code, want_exit) << "apply " << yaml << ":\n" << r.out << r.err;
  return ParseJson(r);
}

void ExpectConverged(const std::string& yaml, const std::string& root) {
  RunResult r = Provisioner({"plan", yaml, "--root", root, "--detailed-exitcode"});
  EXPECT_EQ(r.exit_code, 0) << "plan " << yaml << " after apply:\n" << r.out << r.err;
}

nlohmann::json DiscoverJson(const std::string& root) {
  RunResult r = Provisioner({"discover", "--root", root, "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return ParseJson(r);
}

std::vector<std::string> Ids(const nlohmann::json& changes) {
  std::vector<std::string> ids;
  for (const nlohmann::json& c : changes) ids.push_back(c.value("id", ""));
  return ids;
}

std::string Example(const std::string& name) { return RunfilePath("examples/" + name); }

std::string ExtractHost(const std::string& name) {
  std::string dir = MakeTempDir(name);
  Status s = ExtractTtar(HostTreePath(name), dir);
  if (!s.ok()) return "extract-failed:" + s.message();
  return dir;
}

std::string BuildPresetTree(const std::string& preset) {
  HostSpec spec;
  EXPECT_TRUE(PresetByName(preset, &spec)) << preset;
  const std::string dir = MakeTempDir(preset);
  const Status s = BuildHostTree(spec, dir);
  EXPECT_TRUE(s.ok()) << preset << ": " << s.message();
  return dir;
}

std::string ExtractHostWithNetns(const std::string& name, const std::string& netns) {
  const std::string root = ExtractHost(name);
  ::mkdir((root + "/run").c_str(), 0755);
  ::mkdir((root + "/run/netns").c_str(), 0755);
  std::ofstream(root + "/run/netns/" + netns) << "";
  return root;
}

std::vector<std::string> BundledHostTrees() {
  std::set<std::string> names;
  for (const char* probe : {"cx5-roce-vfs", "cx5-roce"}) {  // one in each folder
    std::string dir = HostTreePath(probe);
    dir = dir.substr(0, dir.rfind('/'));
    if (DIR* d = ::opendir(dir.c_str())) {
      while (struct dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".ttar") == 0) {
          names.insert(n.substr(0, n.size() - 5));
        }
      }
      ::closedir(d);
    }
  }
  return {names.begin(), names.end()};
}

std::string WriteTempFile(const std::string& name, const std::string& content) {
  std::string path = MakeTempDir("input") + "/" + name;
  std::ofstream(path, std::ios::binary) << content;
  return path;
}

KernelSimDaemon::KernelSimDaemon(const std::string& root, int netdev_delay_ms,
                                 const std::vector<std::string>& extra_args)
    : root_(root) {
  std::string ready = MakeTempDir("kernel-sim") + "/ready";
  std::string bin = RunfilePath("test/sim/kernel_sim");
  std::string delay = std::to_string(netdev_delay_ms);
  std::vector<std::string> argv = {bin,   "--root",       root, "--netdev-delay-ms",
                                   delay, "--ready-file", ready};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  if (posix_spawn(&pid_, bin.c_str(), nullptr, nullptr, args.data(), environ) != 0) {
    pid_ = -1;
    return;
  }
  for (int i = 0; i < 200 && !ready_; ++i) {
    struct stat st;
    ready_ = ::stat(ready.c_str(), &st) == 0;
    if (!ready_) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
}

KernelSimDaemon::~KernelSimDaemon() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status;
    ::waitpid(pid_, &status, 0);
  }
}

std::string KernelSimDaemon::Refused() const {
  std::ifstream in(root_ + "/run/kernel-sim/refused");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> MemoryLimitPrefix() {
  if (const char* asan = std::getenv("ASAN_OPTIONS")) {
    return {"/usr/bin/env", std::string("ASAN_OPTIONS=") + asan + ":hard_rss_limit_mb=2048"};
  }
  return {"/usr/bin/prlimit", "--as=2147483648"};
}

NoLeakCheckUnderTracer::NoLeakCheckUnderTracer() {
  if (const char* asan = std::getenv("ASAN_OPTIONS")) {
    had_ = true;
    saved_ = asan;
    ::setenv("ASAN_OPTIONS", (saved_ + ":detect_leaks=0").c_str(), 1);
  }
}

NoLeakCheckUnderTracer::~NoLeakCheckUnderTracer() {
  if (had_) ::setenv("ASAN_OPTIONS", saved_.c_str(), 1);
}

}  // namespace provisioner::testing
