// The discover read path in syscalls (issue 27 item 7), counted by strace on
// the real binary: per file read, an open, an fstat (the refusal of FIFOs,
// devices and sockets), one read and a close: no fcntl to clear O_NONBLOCK
// (it changes nothing for a regular file) and no read that returns 0 after a
// short one. Skipped where strace cannot trace (no ptrace in the sandbox).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

// strace -c's table: syscall -> calls.
std::map<std::string, long> Counts(const std::string& text) {
  std::map<std::string, long> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    double pct, secs;
    long usecs, calls;
    if (!(f >> pct >> secs >> usecs >> calls)) continue;
    std::string a, b;
    f >> a;
    if (f >> b) {
      out[b] = calls;  // an errors column
    } else {
      out[a] = calls;
    }
  }
  return out;
}

TEST(DiscoverSyscallsTest, OneOpenOneStatOneReadOneClosePerFile) {
  if (std::system("strace -o /dev/null true >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "strace cannot trace here";
  }
  std::string root = ExtractHost("cx5-roce");
  std::string trace = WriteTempFile("strace.txt", "");
  ::setenv("PROVISIONER_READ_THREADS", "1", 1);
  NoLeakCheckUnderTracer no_lsan;
  RunResult r =
      provisioner::testing::Run({"/usr/bin/strace", "-f", "-c", "-o", trace, "-e",
                                 "trace=openat,openat2,read,fcntl,newfstatat,fstat,close",
                                 ProvisionerBinary(), "discover", "--root", root, "-o", "json"});
  ::unsetenv("PROVISIONER_READ_THREADS");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, long> c = Counts(ReadFile(trace));
  const long opens = c["openat2"] + c["openat"];
  ASSERT_GT(opens, 200) << ReadFile(trace);
  // Before: about two fcntl per file read (F_GETFL, F_SETFL: 302 here). Now
  // only glibc's fdopendir check per directory listed (62 here).
  EXPECT_LT(c["fcntl"] * 4, opens) << ReadFile(trace);
  // Today: two reads per file (the data, then 0). Directories are opened
  // too (and not read), so reads stay below the opens.
  EXPECT_LE(c["read"], opens) << ReadFile(trace);
}

// Issue 40 item 4: a plan of a host.yaml with spec.rails count: allGpus
// expands the document it loaded once the GPUs are known: the file is opened
// once (before: twice, the second load after discovery).
// How many times `provisioner <command> FILE --root hgx-h100 <extra>` opens
// FILE, by strace (-1: strace cannot trace here).
int HostYamlOpens(const std::string& command, const std::vector<std::string>& extra) {
  if (std::system("strace -o /dev/null true >/dev/null 2>&1") != 0) return -1;
  const std::string file = WriteTempFile("rails-once.yaml", HostYaml(R"(  rails:
    count: allGpus
    nic:
      name: "gpu{n}-nic"
      nicSelector: { vendor: "15b3", deviceID: "1021" }
      numVfs: 4
      resourceName: "gpu{n}sriov"
)",
                                                                     "w"));
  const std::string root = ExtractHost("hgx-h100");
  const std::string trace = WriteTempFile("strace-rails.txt", "");
  NoLeakCheckUnderTracer no_lsan;
  std::vector<std::string> argv = {"/usr/bin/strace", "-f", "-o", trace, "-e",
                                   "trace=open,openat,openat2", ProvisionerBinary(),
                                   command, file, "--root", root};
  argv.insert(argv.end(), extra.begin(), extra.end());
  RunResult r = provisioner::testing::Run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::istringstream in(ReadFile(trace));
  std::string line;
  int opens = 0;
  while (std::getline(in, line)) {
    if (line.find("\"" + file + "\"") != std::string::npos) ++opens;
  }
  return opens;
}

TEST(DiscoverSyscallsTest, RailsPlanOpensHostYamlOnce) {
  const int opens = HostYamlOpens("plan", {"-o", "json"});
  if (opens < 0) GTEST_SKIP() << "strace cannot trace here";
  EXPECT_EQ(opens, 1);
}

// apply read it twice: once to tell a saved plan from a host.yaml, once to load.
TEST(DiscoverSyscallsTest, RailsApplyOpensHostYamlOnce) {
  const int opens = HostYamlOpens("apply", {"--dry-run", "-o", "json"});
  if (opens < 0) GTEST_SKIP() << "strace cannot trace here";
  EXPECT_EQ(opens, 1);
}

}  // namespace
}  // namespace provisioner::testing
