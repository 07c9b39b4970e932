#include "engine/host/recording_host_fs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "engine/host/forwarding_host_fs.h"
#include "gtest/gtest.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

void MkDirs(const std::string& p) {
  std::string cur;
  std::stringstream ss(p);
  std::string part;
  while (std::getline(ss, part, '/')) {
    if (part.empty()) continue;
    cur += "/" + part;
    ::mkdir(cur.c_str(), 0755);
  }
}

void Write(const std::string& p, const std::string& s) { std::ofstream(p) << s; }

std::string ReadOut(const std::string& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string LinkText(const std::string& p) {
  char buf[4096];
  ssize_t n = ::readlink(p.c_str(), buf, sizeof buf);
  return n < 0 ? "" : std::string(buf, static_cast<size_t>(n));
}

class RecordingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("rec_root");
    out_ = testing::MakeTempDir("rec_out");
    ASSERT_FALSE(root_.empty());
    ASSERT_FALSE(out_.empty());
    const std::string dev = root_ + "/sys/devices/pci0000:00/0000:00:01.0";
    MkDirs(dev + "/net/eth0");
    MkDirs(root_ + "/sys/class/net");
    MkDirs(root_ + "/etc");
    Write(dev + "/vendor", "0x15b3\n");
    Write(dev + "/net/eth0/mtu", "1500\n");
    Write(dev + "/net/eth0/address", "aa:bb\n");  // listed, never read
    Write(root_ + "/etc/unread", "not read\n");   // neither listed nor read
    ASSERT_EQ(::symlink("../../devices/pci0000:00/0000:00:01.0/net/eth0",
                        (root_ + "/sys/class/net/eth0").c_str()),
              0);
    // An absolute link: the copy keeps the text, the tree re-roots it.
    ASSERT_EQ(::symlink("/sys/devices/pci0000:00", (root_ + "/sys/abs").c_str()), 0);
    // A driver link that is only read as a link (its target is not in the tree).
    ASSERT_EQ(::symlink("../../../bus/pci/drivers/mlx5_core", (dev + "/driver").c_str()), 0);
  }
  std::string root_, out_;
};

TEST_F(RecordingTest, CopiesWhatWasReadWithTheSameShape) {
  auto inner = NewLocalHostFs(root_);
  HostFsRecord rec;
  auto fs = NewRecordingHostFs(inner.get(), &rec);
  ASSERT_TRUE(fs->ListDir("/sys/class/net").ok());
  EXPECT_EQ(*fs->ReadAttr("/sys/class/net/eth0/mtu"), "1500");
  ASSERT_TRUE(fs->ListDir("/sys/class/net/eth0").ok());
  EXPECT_EQ(*fs->ReadAttr("/sys/abs/0000:00:01.0/vendor"), "0x15b3");
  EXPECT_EQ(*fs->LinkBasename("/sys/abs/0000:00:01.0/driver"), "mlx5_core");
  EXPECT_FALSE(fs->ReadFile("/sys/missing").ok());  // failures are not recorded
  fs->NoteCapture("/run/provisioner/tool.out", "captured\n");
  EXPECT_FALSE(fs->WriteAttr("/sys/abs/x", "1").ok());  // recording never writes

  auto stats = WriteSnapshot(*inner, rec, out_);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(LinkText(out_ + "/sys/class/net/eth0"),
            "../../devices/pci0000:00/0000:00:01.0/net/eth0");
  EXPECT_EQ(LinkText(out_ + "/sys/abs"), "/sys/devices/pci0000:00");
  EXPECT_EQ(LinkText(out_ + "/sys/devices/pci0000:00/0000:00:01.0/driver"),
            "../../../bus/pci/drivers/mlx5_core");
  EXPECT_EQ(ReadOut(out_ + "/sys/devices/pci0000:00/0000:00:01.0/net/eth0/mtu"), "1500\n");
  EXPECT_EQ(ReadOut(out_ + "/sys/devices/pci0000:00/0000:00:01.0/vendor"), "0x15b3\n");
  // Listed but not read: present and empty.
  struct stat st;
  ASSERT_EQ(::stat((out_ + "/sys/devices/pci0000:00/0000:00:01.0/net/eth0/address").c_str(), &st),
            0);
  EXPECT_EQ(st.st_size, 0);
  EXPECT_EQ(stats->placeholders, 1u);
  EXPECT_NE(::stat((out_ + "/etc/unread").c_str(), &st), 0);
  EXPECT_NE(::lstat((out_ + "/sys/missing").c_str(), &st), 0);
  EXPECT_EQ(ReadOut(out_ + "/run/provisioner/tool.out"), "captured\n");

  // The copy reads back the same through a HostFs rooted at it.
  auto copy = NewLocalHostFs(out_);
  EXPECT_EQ(*copy->ReadAttr("/sys/class/net/eth0/mtu"), "1500");
  EXPECT_EQ(*copy->ListDir("/sys/class/net/eth0"), *inner->ListDir("/sys/class/net/eth0"));
  EXPECT_EQ(*copy->Resolve("/sys/class/net/eth0"), *inner->Resolve("/sys/class/net/eth0"));
}

// A sysfs attribute whose read fails (EINVAL, like unused GID slot types):
// forwards to a local tree except for reads of `bad`.
class FailingReadFs final : public ForwardingHostFs {
 public:
  FailingReadFs(std::unique_ptr<HostFs> inner, std::string bad)
      : ForwardingHostFs(std::move(inner)), bad_(std::move(bad)) {}
  StatusOr<std::string> ReadFile(std::string_view path) const override {
    if (path == bad_) return ErrnoToStatus(EINVAL, "read " + std::string(path));
    return inner()->ReadFile(path);
  }

 private:
  std::string bad_;
};

TEST_F(RecordingTest, FailedReadsStayFailingInTheCopy) {
  const std::string dir = "/sys/devices/pci0000:00/0000:00:01.0/net/eth0";
  FailingReadFs inner(NewLocalHostFs(root_), dir + "/address");
  HostFsRecord rec;
  auto fs = NewRecordingHostFs(&inner, &rec);
  ASSERT_TRUE(fs->ListDir(dir).ok());
  auto got = fs->ReadFilesIn(dir, {"mtu", "address"});
  ASSERT_TRUE(got[0].ok());
  ASSERT_FALSE(got[1].ok());
  ASSERT_TRUE(WriteSnapshot(inner, rec, out_).ok());
  struct stat st;
  EXPECT_EQ(::stat((out_ + dir + "/mtu").c_str(), &st), 0);
  // Not an empty placeholder (that would read as ""): absent, so the read fails.
  EXPECT_NE(::stat((out_ + dir + "/address").c_str(), &st), 0);
}

}  // namespace
}  // namespace provisioner
