// Issue 26, "done when": under `strace -f -e trace=%file`, discover, plan,
// apply, doctor, snapshot and manifests --output-dir on a tree full of
// planted links (temporary-file names, lock, journal, the attributes libpci
// reads, modprobe.d, output files) open nothing outside --root, the output
// directories and the process's own scratch directories, and leave every
// file outside them byte-identical.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

namespace fs = std::filesystem;

const char kStrace[] = "/usr/bin/strace";

const std::string kYaml = HostYaml(R"(  kernelModules: [mlx5_ib, rdma_ucm]
  nics:
    - name: pf0
      nicSelector: { rootDevices: ["0000:af:00.0"] }
      numVfs: 0
      resourceName: rdma_pf0
)");

bool StartsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

// Paths a process may open that hold no host data: the dynamic loader's and
// libc's, its own /proc/self, /dev/null and the like. The one known read of
// the machine's own files that remains is listed separately (kKnown) and
// reported in docs/hostile-input.md; /proc/cmdline (libkmod's kmod_new())
// was the other until libkmod stopped running for a tree root.
const std::vector<std::string> kSystem = {"/lib/",
                                          "/lib64/",
                                          "/usr/lib/",
                                          "/etc/ld.so.",
                                          "/proc/self/",
                                          "/dev/null",
                                          "/dev/full",
                                          "/dev/urandom",
                                          "/sys/devices/system/cpu/",
                                          "/usr/lib/locale/",
                                          "/etc/localtime",
                                          "/proc/sys/kernel/random/",
                                          "/usr/share/zoneinfo/"};
const std::vector<std::string> kKnown = {
    // libnl-route 3.7's library constructor (lib/route/classid.c
    // classid_init), before main: tc class names only, which nothing here
    // uses (LibnlClassidFileDoesNotChangeTheOutput below).
    "/etc/libnl/classid",
};

struct Violation {
  std::string line;
};

// The absolute paths of the traced calls (the first quoted argument that
// starts with '/', for calls by path or relative to AT_FDCWD). Calls relative
// to another descriptor resolve beneath a directory opened earlier, which
// this check saw when it was opened.
std::vector<std::string> AbsolutePaths(const std::string& trace, std::vector<std::string>* lines) {
  std::vector<std::string> out;
  std::istringstream in(trace);
  static const std::regex kCall(
      R"(^(?:\[pid +\d+\] |\d+ +)?([a-z0-9_]+)\((AT_FDCWD(?:<[^>]*>)?, )?\"(/[^\"]*)\")");
  for (std::string line; std::getline(in, line);) {
    // strace -y: the file a returned descriptor really is (links followed),
    // for every call, by path or relative to a descriptor.
    static const std::regex kOpened(R"(= \d+<(/[^>]*)>$)");
    std::smatch opened;
    if (std::regex_search(line, opened, kOpened)) {
      out.push_back(opened[1]);
      lines->push_back(line);
    }
    std::smatch m;
    if (!std::regex_search(line, m, kCall)) continue;
    const std::string call = m[1];
    if (call == "execve") continue;  // the binary itself, by its runfiles path
    std::string path = m[3];
    if (call == "symlink" || call == "symlinkat") {
      // symlink(TARGET, LINKPATH): the target is text, not opened; the
      // link is made at the last path.
      static const std::regex kLast(R"(, (?:AT_FDCWD(?:<[^>]*>)?, )?\"(/[^\"]*)\"\))");
      std::smatch last;
      if (!std::regex_search(line, last, kLast)) continue;
      path = last[1];
    }
    out.push_back(path);
    lines->push_back(line);
  }
  return out;
}

std::string call_of(const std::string& line) {
  static const std::regex kName(R"(^(?:\[pid +\d+\] |\d+ +)?([a-z0-9_]+)\()");
  std::smatch m;
  return std::regex_search(line, m, kName) ? std::string(m[1]) : std::string();
}

std::string Snapshot(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  struct stat st;
  ::lstat(path.c_str(), &st);
  return ss.str() + "|mode=" + std::to_string(st.st_mode);
}

TEST(StraceConfinementTest, NothingOutsideTheRootAndOutputIsOpened) {
  if (::access(kStrace, X_OK) != 0) GTEST_SKIP() << "no " << kStrace << " (scripts/setup.sh)";
  NoLeakCheckUnderTracer no_lsan;
  const std::string root = ExtractHost("cx5-roce");
  const std::string work = fs::path(WriteTempFile("marker", "")).parent_path().string();
  const std::string outside_dir = work + "/outside";
  fs::create_directories(outside_dir);
  // Outside files, each a target of links planted in the tree.
  std::map<std::string, std::string> outside;
  auto plant = [&](const std::string& in_tree, const std::string& name, const std::string& text) {
    const std::string target = outside_dir + "/" + name;
    std::ofstream(target, std::ios::binary) << text;
    ::chmod(target.c_str(), 0644);
    outside[target] = Snapshot(target);
    fs::create_directories(fs::path(in_tree).parent_path());
    ::unlink(in_tree.c_str());
    ASSERT_EQ(::symlink(target.c_str(), in_tree.c_str()), 0) << in_tree;
  };
  // Temporary-file names of atomic writes, for many pids.
  for (int pid = 2; pid < 40000; pid += 997) {
    plant(root + "/etc/modules-load.d/provisioner.conf.provisioner-tmp." + std::to_string(pid),
          "tmp" + std::to_string(pid), "not yours\n");
    plant(root + "/run/provisioner/journal.json.provisioner-tmp." + std::to_string(pid),
          "jtmp" + std::to_string(pid), "not yours\n");
  }
  // Every attribute libpci reads, of one function (absolute links, re-rooted
  // by the host layer: they then name nothing inside the tree).
  const std::string dev = fs::canonical(root + "/sys/bus/pci/devices/0000:af:00.1").string();
  for (const char* f : {"vendor", "device", "class", "irq", "resource", "config", "revision",
                        "subsystem_vendor", "subsystem_device", "label", "numa_node"}) {
    plant(dev + "/" + f, std::string("pci-") + f, "0xdead\n");
  }
  plant(root + "/etc/modprobe.d/evil.conf", "modprobe.conf", "options mlx5_core evil=1\n");
  plant(root + "/usr/share/misc/pci.ids", "pci.ids", "15b3  Outside Vendor\n");
  const std::string yaml = WriteTempFile("host.yaml", kYaml);
  const std::string manifests_dir = work + "/manifests-out";
  fs::create_directories(manifests_dir);
  plant(manifests_dir + "/sriovnetworknodepolicy-kube-system-rdma_pf0.yaml", "manifest1",
        "not yours\n");
  const std::string snapshot_dir = work + "/snapshot-out";

  const std::vector<std::vector<std::string>> commands = {
      {"discover", "--root", root, "-o", "json"},
      {"plan", yaml, "--root", root},
      {"apply", yaml, "--root", root},
      {"doctor", yaml, "--root", root},
      {"snapshot", "--root", root, "--output", snapshot_dir},
      {"manifests", yaml, "--root", root, "--output-dir", manifests_dir},
  };
  const std::string tmpdir = std::getenv("TMPDIR") != nullptr ? std::getenv("TMPDIR") : "/tmp";
  for (const auto& args : commands) {
    SCOPED_TRACE(args[0]);
    const std::string trace = work + "/trace-" + args[0];
    std::vector<std::string> argv = {
        kStrace, "-f", "-qq", "-y", "-e", "trace=%file", "-o", trace, ProvisionerBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult r = provisioner::testing::Run(argv);
    EXPECT_NE(r.exit_code, -1) << r.err.substr(0, 2000);
    if (r.err.find("ptrace") != std::string::npos && r.exit_code != 0 && !fs::exists(trace)) {
      GTEST_SKIP() << "strace cannot trace here: " << r.err.substr(0, 300);
    }
    std::vector<std::string> lines;
    const std::vector<std::string> paths = AbsolutePaths(ReadFile(trace), &lines);
    ASSERT_FALSE(paths.empty()) << "no file calls traced";
    std::set<std::string> bad;
    for (size_t i = 0; i < paths.size(); ++i) {
      const std::string& p = paths[i];
      // The ancestors of --root: realpath(3) of the root itself.
      auto ancestor_of = [&](const std::string& dir) {
        return StartsWith(dir, p) && (p.size() == dir.size() || dir[p.size()] == '/');
      };
      // mkdir -p of the snapshot's parents.
      bool ok = ancestor_of(root) || (call_of(lines[i]) == "mkdir" && ancestor_of(snapshot_dir)) ||
                StartsWith(p, root) || StartsWith(p, manifests_dir) ||
                StartsWith(p, snapshot_dir) || p == yaml || StartsWith(p, tmpdir + "/provisioner-");
      for (const auto& s : kSystem) ok = ok || StartsWith(p, s);
      for (const auto& s : kKnown) ok = ok || p == s;
      // The process's own /proc/<pid>/ is its /proc/self/ (strace -y shows
      // it resolved; the sanitizer runtime reads cmdline, environ, maps).
      static const std::regex kOwnProc(R"(^(?:\[pid +)?(\d+)[\] ].*)");
      std::smatch pid;
      if (!ok && std::regex_match(lines[i], pid, kOwnProc)) {
        ok = StartsWith(p, "/proc/" + pid[1].str() + "/");
      }
      if (!ok) bad.insert(lines[i]);
    }
    std::string report;
    for (const auto& b : bad) report += b + "\n";
    EXPECT_TRUE(bad.empty()) << "file calls outside the root and the output:\n" << report;
  }
  for (const auto& [path, before] : outside) {
    EXPECT_EQ(Snapshot(path), before) << path << " changed";
  }
}

// Issue 26, item 14: libnl-route reads $NLSYSCONFDIR/classid (default
// /etc/libnl/classid) in a library constructor, before main, on every run.
// What it reads names tc classes; nothing here asks for one, and under a
// tree root no netlink socket is opened at all. Proof: the same commands
// with NLSYSCONFDIR at a classid file of other content (read: the trace
// shows it) print the same bytes.
TEST(StraceConfinementTest, LibnlClassidFileDoesNotChangeTheOutput) {
  if (::access(kStrace, X_OK) != 0) GTEST_SKIP() << "no " << kStrace << " (scripts/setup.sh)";
  NoLeakCheckUnderTracer no_lsan;
  const std::string root = ExtractHost("cx5-roce");
  const std::string yaml = WriteTempFile("host.yaml", kYaml);
  const std::string conf_dir =
      fs::path(WriteTempFile("classid", "1:0 evil\n")).parent_path().string();
  {
    std::ofstream classid(conf_dir + "/classid", std::ios::trunc);
    classid << "# not the system's\n1:0 evil\n1:1 \x1b[2Jclass\nffff:ffff root_of_all\n";
    for (int i = 0; i < 2000; ++i) classid << "10:" << std::hex << i << " c" << i << "\n";
  }
  const std::vector<std::vector<std::string>> commands = {
      {"discover", "--root", root, "-o", "json"},
      {"plan", yaml, "--root", root, "-o", "json"},
      {"manifests", yaml, "--root", root},
  };
  for (const auto& args : commands) {
    SCOPED_TRACE(args[0]);
    RunResult plain = Provisioner(args);
    const std::string trace = conf_dir + "/trace-" + args[0];
    std::vector<std::string> argv = {
        "/usr/bin/env", "NLSYSCONFDIR=" + conf_dir, kStrace, "-f",  "-qq",
        "-e",           "trace=open,openat",        "-o",    trace, ProvisionerBinary()};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult other = provisioner::testing::Run(argv);
    if (other.err.find("ptrace") != std::string::npos && !fs::exists(trace)) {
      GTEST_SKIP() << "strace cannot trace here: " << other.err.substr(0, 300);
    }
    EXPECT_NE(ReadFile(trace).find(conf_dir + "/classid\""), std::string::npos)
        << "libnl did not read $NLSYSCONFDIR/classid: the test proves nothing";
    EXPECT_EQ(plain.exit_code, other.exit_code) << plain.err << "\n---\n" << other.err;
    EXPECT_FALSE(plain.out.empty());
    EXPECT_EQ(plain.out, other.out);
    EXPECT_EQ(plain.err, other.err);
  }
}

}  // namespace
}  // namespace provisioner::testing
