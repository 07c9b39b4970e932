#include "engine/host/host_fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

class HostFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string base = testing::MakeTempDir("hostfs");
    ASSERT_NE(base, "");
    outside_ = base + "/outside";
    root_ = base + "/root";
    ::mkdir(outside_.c_str(), 0755);
    ::mkdir(root_.c_str(), 0755);
    Write(outside_ + "/secret", "real host\n");
    MkDir("/sys");
    MkDir("/sys/devices");
    MkDir("/sys/devices/pci0000:00");
    MkDir("/sys/devices/pci0000:00/0000:00:01.0");
    MkDir("/sys/bus");
    MkDir("/sys/bus/pci");
    MkDir("/sys/bus/pci/devices");
    MkDir("/sys/bus/pci/drivers");
    MkDir("/sys/bus/pci/drivers/mlx5_core");
    Write(root_ + "/sys/devices/pci0000:00/0000:00:01.0/vendor", "0x15b3\n");
    Link("../../../devices/pci0000:00/0000:00:01.0", "/sys/bus/pci/devices/0000:00:01.0");
    Link("../../../bus/pci/drivers/mlx5_core", "/sys/devices/pci0000:00/0000:00:01.0/driver");
    Link("/sys/devices/pci0000:00", "/sys/abs");     // absolute: re-rooted
    Link("../../outside/secret", "/sys/escape");     // leaves the root
    Link(outside_ + "/secret", "/sys/abs_outside");  // absolute, re-rooted: missing
    Link("loop2", "/sys/loop1");
    Link("loop1", "/sys/loop2");
    fs_ = NewLocalHostFs(root_);
  }

  // Reading `path` fails with `err`, its message holding `says`.
  ::testing::AssertionResult ReadFails(const std::string& path, int err,
                                       const std::string& says = "") {
    auto v = fs_->ReadFile(path);
    if (v.ok()) return ::testing::AssertionFailure() << path << " read: " << *v;
    if (v.status().err() != err || v.status().message().find(says) == std::string::npos) {
      return ::testing::AssertionFailure() << path << ": errno " << v.status().err() << " (want "
                                           << err << "): " << v.status().message();
    }
    return ::testing::AssertionSuccess();
  }

  void MkDir(const std::string& p) { ASSERT_EQ(::mkdir((root_ + p).c_str(), 0755), 0) << p; }
  void Write(const std::string& fs, const std::string& c) { std::ofstream(fs) << c; }
  static std::string ReadWhole(const std::string& fs) {
    std::ifstream in(fs, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  void Link(const std::string& target, const std::string& p) {
    if (::access(root_.c_str(), F_OK) != 0) ::mkdir(root_.c_str(), 0755);
    ASSERT_EQ(::symlink(target.c_str(), (root_ + p).c_str()), 0) << p;
  }

  std::string root_, outside_;
  std::unique_ptr<HostFs> fs_;
};

// Issue 25 item 12: "is a missing file absent, or not captured?" is one
// question of the host layer. A tree answers from what it holds; the live
// root holds everything.
TEST_F(HostFsTest, CapturedIsWhatATreeHoldsAndEverythingOnTheLiveRoot) {
  EXPECT_TRUE(fs_->Captured("/sys/bus/pci/devices"));
  EXPECT_TRUE(fs_->Captured("/sys/bus/pci/devices/0000:00:01.0/vendor"));
  EXPECT_FALSE(fs_->Captured("/sys/kernel/iommu_groups"));
  EXPECT_FALSE(fs_->Captured("/dev/infiniband"));
  std::unique_ptr<HostFs> live = NewLocalHostFs("/");
  EXPECT_TRUE(live->Captured("/sys/kernel/no-such-provisioner-dir"));
}

TEST_F(HostFsTest, ReadsThroughRelativeLinksInsideRoot) {
  auto v = fs_->ReadAttr("/sys/bus/pci/devices/0000:00:01.0/vendor");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(*v, "0x15b3");
  auto r = fs_->Resolve("/sys/bus/pci/devices/0000:00:01.0");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "/sys/devices/pci0000:00/0000:00:01.0");
  auto d = fs_->LinkBasename("/sys/bus/pci/devices/0000:00:01.0/driver");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(*d, "mlx5_core");
}

TEST_F(HostFsTest, AbsoluteLinksAreReRooted) {
  auto v = fs_->ReadAttr("/sys/abs/0000:00:01.0/vendor");
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(*v, "0x15b3");
  EXPECT_TRUE(ReadFails("/sys/abs_outside", ENOENT));
}

TEST_F(HostFsTest, LinkEscapingRootIsAnError) {
  EXPECT_TRUE(ReadFails("/sys/escape", EXDEV, "leaves the root"));
  EXPECT_FALSE(fs_->ReadFile("/../outside/secret").ok());
}

TEST_F(HostFsTest, LinkLoopIsEloop) { EXPECT_TRUE(ReadFails("/sys/loop1", ELOOP)); }

TEST_F(HostFsTest, MissingFileNamesPathAndErrno) {
  const std::string path = "/sys/bus/pci/devices/0000:00:01.0/sriov_numvfs";
  EXPECT_TRUE(ReadFails(path, ENOENT, path + ": ENOENT"));
}

// net/<name> shows before /sys/class/net/<name> (device_add()): only the
// registered one counts.
TEST_F(HostFsTest, RegisteredNetdevsAreTheOnesSysClassNetLists) {
  const std::string dev = "/sys/bus/pci/devices/0000:00:01.0";
  EXPECT_TRUE(ListDirIfPresent(*fs_, dev + "/net").empty());  // no net/: none, no error
  EXPECT_TRUE(RegisteredNetdevs(*fs_, dev).empty());
  MkDir("/sys/devices/pci0000:00/0000:00:01.0/net");
  MkDir("/sys/devices/pci0000:00/0000:00:01.0/net/ens1");
  MkDir("/sys/devices/pci0000:00/0000:00:01.0/net/ens1v0");
  EXPECT_EQ(ListDirIfPresent(*fs_, dev + "/net"), (std::vector<std::string>{"ens1", "ens1v0"}));
  EXPECT_TRUE(RegisteredNetdevs(*fs_, dev).empty());
  MkDir("/sys/class");
  MkDir("/sys/class/net");
  Link("../../devices/pci0000:00/0000:00:01.0/net/ens1v0", "/sys/class/net/ens1v0");
  EXPECT_EQ(RegisteredNetdevs(*fs_, dev), std::vector<std::string>{"ens1v0"});
}

TEST_F(HostFsTest, LinkBasenameIfPresent) {
  const std::string dev = "/sys/bus/pci/devices/0000:00:01.0";
  EXPECT_EQ(LinkBasenameIfPresent(*fs_, dev + "/driver"), "mlx5_core");
  EXPECT_EQ(LinkBasenameIfPresent(*fs_, dev), "0000:00:01.0");
  EXPECT_EQ(LinkBasenameIfPresent(*fs_, dev + "/vendor"), "");  // a file, not a link
  EXPECT_EQ(LinkBasenameIfPresent(*fs_, dev + "/physfn"), "");  // missing
}

TEST_F(HostFsTest, ListDirSortedAndCounted) {
  auto l = fs_->ListDir("/sys/bus/pci/drivers/mlx5_core/../../devices");
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->size(), 1u);
  EXPECT_EQ((*l)[0], "0000:00:01.0");
  EXPECT_EQ(fs_->stats().dirs_listed, 1u);
}

// Issue 38 item 12: names come in natural order, as people read them
// (virtfn2 before virtfn10, eth2 before eth10), PCI addresses in address
// order (0000:19 before 0000:1a).
TEST_F(HostFsTest, ListDirInNaturalOrder) {
  MkDir("/sys/x");
  for (const char* n :
       {"eth10", "eth2", "eth1", "virtfn10", "virtfn2", "0000:1a:00.0", "0000:19:00.0"}) {
    Write(root_ + "/sys/x/" + n, "");
  }
  auto l = fs_->ListDir("/sys/x");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(*l, (std::vector<std::string>{"0000:19:00.0", "0000:1a:00.0", "eth1", "eth2", "eth10",
                                          "virtfn2", "virtfn10"}));
}

TEST_F(HostFsTest, WriteAttrAndAtomicWrite) {
  ASSERT_TRUE(fs_->WriteAttr("/sys/bus/pci/devices/0000:00:01.0/vendor", "7\n").ok());
  EXPECT_EQ(*fs_->ReadFile("/sys/bus/pci/devices/0000:00:01.0/vendor"), "7\n");
  ASSERT_TRUE(fs_->WriteFileAtomic("/etc/modprobe.d/x.conf", "options a b=1\n").ok());
  EXPECT_EQ(*fs_->ReadFile("/etc/modprobe.d/x.conf"), "options a b=1\n");
  EXPECT_EQ(fs_->stats().files_opened_for_write, 2u);
  auto l = fs_->ListDir("/etc/modprobe.d");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->size(), 1u);  // no temp file left
  Status s = fs_->WriteAttr("/sys/nothing/here", "1");
  EXPECT_EQ(s.err(), ENOENT);
}

// Issue 26 item 1: a link planted in the tree under the temporary file's
// name (the old one was "<target>.provisioner-tmp.<pid>", and the pid is
// predictable) or at the target itself is never followed out of the root.
TEST_F(HostFsTest, AtomicWriteFollowsNoPlantedLinkOutOfTheRoot) {
  MkDir("/etc");
  MkDir("/etc/modules-load.d");
  const std::string target = "/etc/modules-load.d/provisioner.conf";
  for (const std::string& planted :
       {target + ".provisioner-tmp." + std::to_string(::getpid()), target + ".tmp",
        std::string("/etc/modules-load.d/.provisioner.conf.provisioner-tmp.") +
            std::to_string(::getpid())}) {
    ASSERT_EQ(::symlink((outside_ + "/secret").c_str(), (root_ + planted).c_str()), 0) << planted;
  }
  ASSERT_TRUE(fs_->WriteFileAtomic(target, "mlx5_ib\n", 0600).ok());
  EXPECT_EQ(ReadWhole(outside_ + "/secret"), "real host\n");
  struct stat st;
  ASSERT_EQ(::stat((outside_ + "/secret").c_str(), &st), 0);
  EXPECT_NE(st.st_mode & 0777, 0600u) << "chmod followed the link";
  EXPECT_EQ(*fs_->ReadFile(target), "mlx5_ib\n");
  ASSERT_EQ(::lstat((root_ + target).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // The target itself a link out of the root: the link is replaced.
  Link(outside_ + "/secret", "/etc/modules-load.d/other.conf");
  ASSERT_TRUE(fs_->WriteFileAtomic("/etc/modules-load.d/other.conf", "x\n").ok());
  EXPECT_EQ(ReadWhole(outside_ + "/secret"), "real host\n");
  ASSERT_EQ(::lstat((root_ + "/etc/modules-load.d/other.conf").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));

  // A parent directory that is a link out of the root: refused (EXDEV).
  Link("../../outside", "/etc/escape");
  Status s = fs_->WriteFileAtomic("/etc/escape/secret", "owned\n");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(ReadWhole(outside_ + "/secret"), "real host\n");

  // RemoveFile removes a link, never its target.
  ASSERT_TRUE(fs_->RemoveFile("/sys/escape").ok());
  EXPECT_EQ(ReadWhole(outside_ + "/secret"), "real host\n");
}

// MakeDir / RemoveDir (configfs groups: rdma_cm/<dev>): one directory,
// confined like every write; a parent that is a link out of the root is
// refused and nothing is made outside it.
TEST_F(HostFsTest, MakeDirAndRemoveDirStayInTheRoot) {
  Status made = fs_->MakeDir("/sys/newdir");
  ASSERT_TRUE(made.ok()) << made.message();
  EXPECT_TRUE(fs_->IsDir("/sys/newdir"));
  EXPECT_EQ(fs_->MakeDir("/sys/newdir").err(), EEXIST);
  EXPECT_FALSE(fs_->MakeDir("/sys/no/such").ok());
  ASSERT_TRUE(fs_->RemoveDir("/sys/newdir").ok());
  EXPECT_FALSE(fs_->Exists("/sys/newdir"));
  Link("../../outside", "/sys/escape2");
  EXPECT_FALSE(fs_->MakeDir("/sys/escape2/made").ok());
  EXPECT_NE(::access((outside_ + "/made").c_str(), F_OK), 0);
}

TEST_F(HostFsTest, KernelResolvesRelativeLinksWithoutUserSpaceWalk) {
  HostFsStats before = ProcessHostFsStats();
  ASSERT_TRUE(fs_->ReadAttr("/sys/bus/pci/devices/0000:00:01.0/vendor").ok());
  ASSERT_TRUE(fs_->IsDir("/sys/bus/pci/devices/0000:00:01.0"));
  ASSERT_TRUE(fs_->IsSymlink("/sys/bus/pci/devices/0000:00:01.0/driver"));
  ASSERT_EQ(*fs_->ReadLink("/sys/bus/pci/devices/0000:00:01.0/driver"),
            "../../../bus/pci/drivers/mlx5_core");
  ASSERT_EQ(*fs_->Resolve("/sys/bus/pci/devices/0000:00:01.0/driver"),
            "/sys/bus/pci/drivers/mlx5_core");
  EXPECT_FALSE(fs_->Exists("/sys/bus/pci/devices/0000:00:01.0/missing"));
  EXPECT_EQ(fs_->stats().resolve_steps, 0u);  // all through openat2(RESOLVE_BENEATH)
  EXPECT_EQ(fs_->stats().files_read, 1u);
  EXPECT_EQ(fs_->stats().bytes_read, 7u);
  EXPECT_EQ(fs_->stats().lookups, 5u);
  // An absolute link still takes the walk, and is re-rooted.
  ASSERT_TRUE(fs_->ReadAttr("/sys/abs/0000:00:01.0/vendor").ok());
  EXPECT_GT(fs_->stats().resolve_steps, 0u);
  // Process totals include this HostFs, also after it is gone.
  fs_.reset();
  HostFsStats after = ProcessHostFsStats();
  EXPECT_EQ(after.files_read - before.files_read, 2u);
  EXPECT_EQ(after.lookups - before.lookups, 5u);
}

TEST_F(HostFsTest, ReadFilesInResolvesTheDirectoryOnceAndAnswersLikeReadFile) {
  Write(root_ + "/sys/devices/pci0000:00/0000:00:01.0/device", "0x1017\n");
  Link("../../../../../outside/secret", "/sys/devices/pci0000:00/0000:00:01.0/out");
  Link("vendor", "/sys/devices/pci0000:00/0000:00:01.0/alias");
  const std::string dir = "/sys/bus/pci/devices/0000:00:01.0";  // through a link
  std::vector<std::string> names = {"vendor", "missing", "device",
                                    "out",    "alias",   "../0000:00:01.0/vendor"};
  auto got = fs_->ReadFilesIn(dir, names);
  ASSERT_EQ(got.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    auto want = fs_->ReadFile(dir + "/" + names[i]);
    ASSERT_EQ(got[i].ok(), want.ok()) << names[i];
    if (want.ok()) {
      EXPECT_EQ(*got[i], *want) << names[i];
    } else {
      EXPECT_EQ(got[i].status().err(), want.status().err()) << names[i];
      EXPECT_EQ(got[i].status().message(), want.status().message()) << names[i];
    }
  }
  EXPECT_EQ(*got[0], "0x15b3\n");
  EXPECT_EQ(got[1].status().err(), ENOENT);
  EXPECT_EQ(got[3].status().err(), EXDEV);  // the link leaves the root: refused
  EXPECT_EQ(*got[4], "0x15b3\n");           // a link beside it: followed
  // A missing directory: every name fails as ReadFile would.
  auto none = fs_->ReadFilesIn("/sys/nothing", {"a", "b"});
  ASSERT_EQ(none.size(), 2u);
  EXPECT_EQ(none[1].status().err(), ENOENT);
}

// The counters' read (the agent's scrape): one bounded read a file, no
// fstat; what a small file holds, the first bytes of a longer one, and a
// FIFO in the tree answered at once (empty: no writer), never waited on.
TEST_F(HostFsTest, ReadSmallFilesInReadsEachOnceWithoutStat) {
  const std::string dir = "/sys/class/infiniband/mlx5_0/ports/1/hw_counters";
  std::filesystem::create_directories(root_ + dir);
  Write(root_ + dir + "/np_cnp_sent", "18446744073709551615\n");
  Write(root_ + dir + "/long", std::string(1000, '7'));
  ASSERT_EQ(::mkfifo((root_ + dir + "/fifo").c_str(), 0600), 0);
  Link("../../../../../../../../outside/secret", dir + "/out");
  const std::vector<std::string> names = {"np_cnp_sent", "missing", "long", "fifo", "out"};
  const uint64_t before = fs_->stats().files_read;
  auto got = fs_->ReadSmallFilesIn(dir, names, 64);
  ASSERT_EQ(got.size(), names.size());
  EXPECT_EQ(*got[0], "18446744073709551615\n");
  EXPECT_EQ(got[1].status().err(), ENOENT);
  EXPECT_EQ(*got[2], std::string(64, '7'));
  ASSERT_TRUE(got[3].ok()) << got[3].status().message();
  EXPECT_EQ(*got[3], "");
  EXPECT_EQ(got[4].status().err(), EXDEV);  // beneath the root, as ReadFilesIn
  EXPECT_EQ(fs_->stats().files_read - before, 3u);
  // More than kMaxSmallRead asked: kMaxSmallRead given.
  auto capped = fs_->ReadSmallFilesIn(dir, {"long"}, 100000);
  EXPECT_EQ(capped[0]->size(), HostFs::kMaxSmallRead);
}

TEST_F(HostFsTest, FailedReadIsCounted) {
  EXPECT_FALSE(fs_->ReadFile("/sys/nothing").ok());
  EXPECT_FALSE(fs_->ListDir("/sys/nothing").ok());
  EXPECT_EQ(fs_->stats().failed_opens, 2u);
  EXPECT_EQ(fs_->stats().files_read, 0u);
}

TEST(PathTest, Helpers) {
  EXPECT_EQ(JoinPath("/sys/class", "net"), "/sys/class/net");
  EXPECT_EQ(JoinPath("/sys/class/", "/net"), "/sys/class/net");
  EXPECT_EQ(Basename("/a/b/c"), "c");
  EXPECT_EQ(Dirname("/a/b/c"), "/a/b");
  EXPECT_EQ(Dirname("/a"), "/");
}

}  // namespace
}  // namespace provisioner
