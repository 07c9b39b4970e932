// Hostile host trees (issue 18, items 6-8): a captured tree in CI comes from
// anywhere. A FIFO or a device node where a file is expected, an endless or
// oversized file, and input full of control bytes must each end discovery
// with a clear error naming the path, in bounded time and memory, and an
// error message must quote at most a short, escaped excerpt of the input.
//
// Each case runs the real binary under timeout(1) and prlimit(1) (address
// space 2 GiB; ASan's hard_rss_limit_mb in a sanitizer build): before the fix, a FIFO blocked
// discovery forever and a character device at sriov_numvfs grew its memory without end.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

namespace fs = std::filesystem;

constexpr int kTimeoutSeconds = 30;

std::vector<std::string> MemoryLimit() { return MemoryLimitPrefix(); }

// provisioner `args` under a time and a memory limit.
RunResult Bounded(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/timeout", "-s", "KILL",
                                   std::to_string(kTimeoutSeconds)};
  for (const std::string& a : MemoryLimit()) argv.push_back(a);
  argv.push_back(ProvisionerBinary());
  argv.insert(argv.end(), args.begin(), args.end());
  return Run(argv);
}

RunResult BoundedDiscover(const std::string& root) {
  return Bounded({"discover", "--root", root, "-o", "json"});
}

// The first file named `name` under root/sys/devices (a PF's attribute).
std::string FindSysfsFile(const std::string& root, const std::string& name) {
  for (const auto& e : fs::recursive_directory_iterator(root + "/sys/devices")) {
    if (e.path().filename() == name && e.is_regular_file()) return e.path().string();
  }
  return "";
}

void ReplaceWithFifo(const std::string& path) {
  ASSERT_EQ(::unlink(path.c_str()), 0) << path;
  ASSERT_EQ(::mkfifo(path.c_str(), 0644), 0) << path;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Exit 1 with a message (not killed by timeout or by the memory limit).
void ExpectRefused(const RunResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 1) << what << "\nstdout:\n"
                            << r.out.substr(0, 2000) << "\nstderr:\n"
                            << r.err.substr(0, 2000);
}

// An SR-IOV count refused that way is a warning on its function (issue 19,
// item 7: the rest of the host is still discovered): exit 0, the refusal in
// the JSON warnings, naming the path.
void ExpectWarned(const RunResult& r, const std::string& what, const std::string& text) {
  EXPECT_EQ(r.exit_code, 0) << what << "\nstderr:\n" << r.err.substr(0, 2000);
  EXPECT_NE(r.out.find(text), std::string::npos) << what << "\n" << r.out.substr(0, 2000);
  EXPECT_LT(r.out.size() + r.err.size(), 1u << 20) << "the input is echoed";
}

TEST(HostileTreeTest, FifoAtSriovTotalVfsIsRefusedNotWaitedOn) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string attr = FindSysfsFile(root, "sriov_totalvfs");
  ASSERT_FALSE(attr.empty());
  ReplaceWithFifo(attr);
  RunResult r = BoundedDiscover(root);
  ExpectWarned(r, "FIFO at sriov_totalvfs", "sriov_totalvfs: a FIFO, not a regular file: refused");
}

TEST(HostileTreeTest, FifoAtProcModulesIsRefusedNotWaitedOn) {
  const std::string root = ExtractHost("cx5-roce");
  ReplaceWithFifo(root + "/proc/modules");
  RunResult r = BoundedDiscover(root);
  ExpectRefused(r, "FIFO at proc/modules");
  EXPECT_NE(r.err.find("/proc/modules: a FIFO, not a regular file: refused"), std::string::npos)
      << r.err;
}

TEST(HostileTreeTest, CharacterDeviceAtSriovNumVfsIsRefusedNotReadForever) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string attr = FindSysfsFile(root, "sriov_numvfs");
  ASSERT_FALSE(attr.empty());
  ASSERT_EQ(::unlink(attr.c_str()), 0);
  if (::mknod(attr.c_str(), S_IFCHR | 0644, makedev(1, 5)) != 0) {  // /dev/zero
    GTEST_SKIP() << "mknod: " << std::strerror(errno) << " (no CAP_MKNOD here)";
  }
  RunResult r = BoundedDiscover(root);
  ExpectWarned(r, "/dev/zero at sriov_numvfs",
               "sriov_numvfs: a character device, not a regular file: refused");
}

TEST(HostileTreeTest, OversizedSysfsAttributeIsRefusedWithItsSize) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string attr = FindSysfsFile(root, "sriov_totalvfs");
  ASSERT_FALSE(attr.empty());
  WriteBytes(attr, std::string(100 * 1024, '7'));  // a sysfs attribute is at most a page
  RunResult r = BoundedDiscover(root);
  ExpectWarned(r, "100 KiB sriov_totalvfs", "sriov_totalvfs: larger than 65536 bytes");
  EXPECT_EQ(r.out.find(std::string(1000, '7')), std::string::npos) << "the 100 KiB value is echoed";
}

TEST(HostileTreeTest, OversizedProcFileIsRefusedWithItsSize) {
  const std::string root = ExtractHost("cx5-roce");
  std::string big;
  const std::string line = "mlx5_core 2207744 1 mlx5_ib, Live 0x0000000000000000\n";
  while (big.size() <= (17u << 20)) big += line;
  WriteBytes(root + "/proc/modules", big);
  RunResult r = BoundedDiscover(root);
  ExpectRefused(r, "17 MiB proc/modules");
  EXPECT_NE(r.err.find("/proc/modules: larger than 16777216 bytes"), std::string::npos) << r.err;
}

TEST(HostileTreeTest, ErrorsQuoteAShortEscapedExcerptOfALongBadLine) {
  const std::string root = ExtractHost("cx5-roce");
  // One 1 MiB line of proc/modules that is not "name size refcount ...",
  // with a terminal escape sequence at its start.
  std::string bad = "\x1b]0;owned\x07";
  bad += std::string(1 << 20, 'A');
  WriteBytes(root + "/proc/modules", bad + "\n");
  RunResult r = BoundedDiscover(root);
  ExpectRefused(r, "1 MiB bad proc/modules line");
  EXPECT_NE(r.err.find("expected \"name size refcount used_by state address\""), std::string::npos)
      << r.err.substr(0, 2000);
  EXPECT_NE(r.err.find("\\x1b]0;owned\\x07AAAA"), std::string::npos) << r.err.substr(0, 2000);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "a raw escape byte reached stderr";
  EXPECT_LT(r.err.size(), 4096u) << "the whole line is echoed";
}

TEST(HostileTreeTest, ErrorsQuoteAShortExcerptOfABadSysfsNumber) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string attr = FindSysfsFile(root, "sriov_numvfs");
  ASSERT_FALSE(attr.empty());
  WriteBytes(attr, "\x1b[2J" + std::string(60000, 'x') + "\n");
  RunResult r = BoundedDiscover(root);
  // Discovery may report the bad value as a warning or fail; either way the
  // message is short and inert.
  EXPECT_NE(r.exit_code, -1);
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << "a raw escape byte reached stderr";
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "a raw escape byte reached stdout";
  EXPECT_LT(r.err.size(), 4096u) << r.err.substr(0, 300);
  EXPECT_NE((r.err + r.out).find("\\x1b[2Jxxxx"), std::string::npos) << r.err.substr(0, 2000);
}

// ---------------------------------------------------------------- host.yaml
// The rest of the matrix (issue 18, item 9): each attack on the input ends
// with exit 1 and a message naming the file, in bounded time and memory.

const char kHead[] = "apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n";

struct YamlAttack {
  const char* name;
  std::string text;
  const char* expect;  // in stderr
};

std::vector<YamlAttack> YamlAttacks() {
  std::vector<YamlAttack> out;
  // Billion laughs: 9^12 nics through aliases.
  std::string bomb = std::string(kHead) + "  name: w1\nx0: &a0 [l, l, l, l, l, l, l, l, l]\n";
  for (int i = 1; i <= 12; ++i) {
    bomb += "x" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int k = 0; k < 9; ++k) bomb += std::string(k ? ", " : "") + "*a" + std::to_string(i - 1);
    bomb += "]\n";
  }
  bomb += "spec:\n  nics: *a12\n";
  out.push_back({"alias bomb", bomb, "host.yaml"});
  out.push_back({"deep nesting",
                 std::string(kHead) + "  name: w1\nspec: " + std::string(200000, '[') +
                     std::string(200000, ']') + "\n",
                 "host.yaml"});
  std::string big = std::string(kHead) + "  name: w1\nspec:\n  kernelModules:\n";
  while (big.size() < (20u << 20))
    big += "    - mlx5_ib_with_a_rather_long_name_to_fill_the_file\n";
  out.push_back({"20 MiB host.yaml", big, "host.yaml"});
  out.push_back({"NUL byte",
                 std::string(kHead) + "  name: w" + std::string(1, '\0') + "1\nspec: {}\n",
                 "host.yaml"});
  out.push_back({"invalid UTF-8",
                 std::string(kHead) + "  name: w\xff\xfe"
                                      "1\nspec: {}\n",
                 "host.yaml"});
  out.push_back({"not a Kubernetes name",
                 std::string(kHead) + "  name: Worker_1!\nspec:\n  ipPools:\n    - name: POOL_A\n"
                                      "      subnet: 10.0.0.0/24\n",
                 "is not a DNS-1123"});
  return out;
}

TEST(HostileInputTest, HostYamlAttacksAreExit1InBoundedTimeAndMemory) {
  const std::string root = ExtractHost("cx5-roce");
  for (const YamlAttack& a : YamlAttacks()) {
    SCOPED_TRACE(a.name);
    const std::string file = WriteTempFile("host.yaml", a.text);
    for (const char* cmd : {"validate", "plan", "manifests"}) {
      std::vector<std::string> args = {cmd, file};
      if (std::string(cmd) != "manifests") {
        args.push_back("--root");
        args.push_back(root);
      }
      RunResult r = Bounded(args);
      EXPECT_EQ(r.exit_code, 1) << cmd << "\n" << r.err.substr(0, 1000);
      EXPECT_NE(r.err.find(a.expect), std::string::npos) << cmd << "\n" << r.err.substr(0, 1000);
      EXPECT_LT(r.err.size(), 64u * 1024) << cmd;
    }
  }
}

// ------------------------------------------------------------ links in trees

TEST(HostileInputTest, SymlinkLoopInSysfsIsBounded) {
  const std::string root = ExtractHost("cx5-roce");
  ASSERT_EQ(::symlink("loop2", (root + "/sys/class/net/loop1").c_str()), 0);
  ASSERT_EQ(::symlink("loop1", (root + "/sys/class/net/loop2").c_str()), 0);
  const std::string pf = FindSysfsFile(root, "sriov_totalvfs");
  const std::string dir = pf.substr(0, pf.rfind('/'));
  ASSERT_EQ(::symlink("infiniband", (dir + "/infiniband_loop").c_str()), 0);
  const std::string self = "../" + dir.substr(dir.rfind('/') + 1) + "/self";
  ASSERT_EQ(::symlink(self.c_str(), (dir + "/self").c_str()), 0);
  RunResult r = BoundedDiscover(root);
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
}

// A captured tool output in run/provisioner that is a link leaving the root:
// never read (the firmware shown is not the outside file's).
TEST(HostileInputTest, RunProvisionerLinkLeavingTheRootIsNotRead) {
  const std::string root = ExtractHost("cx5-ib");
  const std::string q = root + "/run/provisioner/mstconfig/0000:86:00.0.query";
  std::string text = ReadFile(q);
  const std::string marker = "OUTSIDE_THE_ROOT_MARKER";
  const size_t at = text.find("ConnectX5");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 9, marker);
  const std::string outside = WriteTempFile("outside.query", text);
  ASSERT_EQ(::unlink(q.c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), q.c_str()), 0);
  RunResult r = BoundedDiscover(root);
  EXPECT_NE(r.exit_code, -1);
  EXPECT_EQ((r.out + r.err).find(marker), std::string::npos) << "read outside the root";
}

// ------------------------------------------------ issue 26: writes and locks

const std::string kKmodYaml = HostYaml(R"(  kernelModules:
    - mlx5_ib
    - rdma_ucm
)");

// Item 1: the temporary files of atomic writes (the modules-load.d file and
// the journal) had the name "<target>.provisioner-tmp.<pid>"; a link planted
// under it (the pid is that of `sh -c '...; exec provisioner'`) made apply
// truncate, overwrite and chmod a file outside the root.
TEST(HostileWriteTest, AtomicWritesFollowNoPlantedTempFileLink) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string yaml = WriteTempFile("host.yaml", kKmodYaml);
  const std::string outside = WriteTempFile("outside-secret", "the real host's file\n");
  ASSERT_EQ(::chmod(outside.c_str(), 0644), 0);
  fs::create_directories(root + "/etc/modules-load.d");
  fs::create_directories(root + "/run/provisioner");
  const std::string script =
      "for t in \"$1/etc/modules-load.d/provisioner.conf\" \"$1/run/provisioner/journal.json\"; do "
      "ln -s \"$2\" \"$t.provisioner-tmp.$$\" || exit 99; done; "
      "exec \"$3\" apply \"$4\" --root \"$1\"";
  RunResult r = provisioner::testing::Run({"/usr/bin/timeout", "-s", "KILL", "60", "/bin/sh", "-c",
                                           script, "sh", root, outside, ProvisionerBinary(), yaml});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(ReadFile(outside), "the real host's file\n") << "written through a planted link";
  struct stat st;
  ASSERT_EQ(::stat(outside.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u) << "chmod through a planted link";
  EXPECT_EQ(ReadFile(root + "/etc/modules-load.d/provisioner.conf"),
            "# Written by provisioner from host.yaml spec.kernelModules; do not edit.\n"
            "mlx5_ib\nrdma_ucm\n");
}

// Item 2: a FIFO at the lock file (or a link to one) hung apply forever,
// --lock-timeout included.
TEST(HostileWriteTest, FifoOrLinkAtTheLockIsRefusedInBoundedTime) {
  const std::string yaml = WriteTempFile("host.yaml", kKmodYaml);
  for (bool via_link : {false, true}) {
    SCOPED_TRACE(via_link ? "link to a FIFO" : "FIFO");
    const std::string root = ExtractHost("cx5-roce");
    fs::create_directories(root + "/run/provisioner");
    const std::string lock = root + "/run/provisioner/lock";
    if (via_link) {
      ASSERT_EQ(::mkfifo((root + "/run/fifo").c_str(), 0644), 0);
      ASSERT_EQ(::symlink("/run/fifo", lock.c_str()), 0);
    } else {
      ASSERT_EQ(::mkfifo(lock.c_str(), 0644), 0);
    }
    RunResult r = Bounded({"apply", yaml, "--root", root, "--lock-timeout", "1"});
    ExpectRefused(r, "lock");
    EXPECT_NE(r.err.find(via_link ? "a symbolic link, not a regular file: refused"
                                  : "a FIFO, not a regular file: refused"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(fs::exists(root + "/etc/modules-load.d/provisioner.conf")) << "applied anyway";
  }
}

// Item 3: libpci opened a function's vendor/device/class itself, following
// a link out of the tree; discover published the outside file's bytes as the
// function's IDs. A FIFO there blocked libpci's open(2).
TEST(HostileTreeTest, LibpciReadsNothingOutsideTheRoot) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string dev = fs::canonical(root + "/sys/bus/pci/devices/0000:af:00.0").string();
  const std::string outside = WriteTempFile("outside-vendor", "0xdead\n");
  for (const char* f : {"vendor", "device"}) {
    ASSERT_EQ(::unlink((dev + "/" + f).c_str()), 0);
    ASSERT_EQ(::symlink(outside.c_str(), (dev + "/" + f).c_str()), 0);
  }
  const std::string dev1 = fs::canonical(root + "/sys/bus/pci/devices/0000:af:00.1").string();
  ReplaceWithFifo(dev1 + "/class");
  RunResult r = BoundedDiscover(root);
  ASSERT_EQ(r.exit_code, 0) << r.err.substr(0, 2000);
  EXPECT_EQ(r.out.find("dead"), std::string::npos) << "an outside file's bytes as an ID";
  EXPECT_NE(r.out.find("PCI function 0000:af:00.0 skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0000:af:00.1/class: a FIFO, not a regular file: refused"),
            std::string::npos)
      << r.out;
}

// kKmodYaml with pf0's 4 VFs published as rdma_pf0, in host.yaml.
std::string PublishedPf0Yaml() {
  return WriteTempFile("host.yaml", std::string(kKmodYaml) + R"(  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 4
      resourceName: rdma_pf0
)");
}

// Item 8: with stdout on /dev/full or closed, manifests, plan and validate
// exited 0 with the output lost (a 3 MB manifest set cut at 4,096 bytes).
TEST(HostileOutputTest, FailedWritesToStdoutAreExit1) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string yaml = PublishedPf0Yaml();
  for (const char* redirect : {"> /dev/full", ">&-"}) {
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"validate", yaml},
                                               {"plan", yaml, "--root", root},
                                               {"discover", "--root", root, "-o", "json"},
                                               {"manifests", yaml}}) {
      SCOPED_TRACE(args[0] + " " + redirect);
      std::vector<std::string> argv = {"/bin/sh", "-c", std::string("exec \"$@\" ") + redirect,
                                       "sh", ProvisionerBinary()};
      argv.insert(argv.end(), args.begin(), args.end());
      RunResult r = provisioner::testing::Run(argv);
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_NE(r.err.find("stdout"), std::string::npos) << r.err;
    }
  }
  // The output whole on a working stdout: exit 0.
  RunResult ok = Provisioner({"plan", yaml, "--root", root});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

// Item 4: manifests --output-dir followed a link planted under a manifest's
// name and overwrote its target; an earlier run's files stayed unnoticed.
TEST(HostileOutputTest, ManifestsOutputDirFollowsNoLinkAndNamesStaleFiles) {
  const std::string yaml = PublishedPf0Yaml();
  const std::string dir = WriteTempFile("marker", "") + ".out";
  RunResult first = Provisioner({"manifests", yaml, "--output-dir", dir});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path().string());
  ASSERT_FALSE(files.empty());
  const std::string outside = WriteTempFile("outside-file", "not a manifest\n");
  for (const std::string& f : files) {
    ASSERT_EQ(::unlink(f.c_str()), 0);
    ASSERT_EQ(::symlink(outside.c_str(), f.c_str()), 0);
  }
  WriteBytes(dir + "/old-pool.yaml", "kind: SpiderIPPool\n");
  RunResult again = Provisioner({"manifests", yaml, "--output-dir", dir});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(ReadFile(outside), "not a manifest\n") << "written through a planted link";
  for (const std::string& f : files) {
    struct stat st;
    ASSERT_EQ(::lstat(f.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode)) << f;
  }
  EXPECT_NE(again.err.find(dir + "/old-pool.yaml was not written by this run"), std::string::npos)
      << again.err;
  for (const auto& e : fs::directory_iterator(dir)) {
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos) << "temp file left";
  }
}

}  // namespace
}  // namespace provisioner::testing
