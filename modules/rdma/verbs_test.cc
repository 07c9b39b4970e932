#include "modules/rdma/verbs.h"

#include <endian.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/rdma/rdma_sysfs.h"
#include "test/support/in_child.h"
#include "test/support/ttar.h"

namespace provisioner::rdma {
namespace {

using ::testing::HasSubstr;

TEST(Verbs, TextForms) {
  const uint8_t raw[16] = {0xfe, 0x80, 0,    0,    0,    0,    0,    0,
                           0x0e, 0x42, 0xa1, 0xff, 0xfe, 0x5b, 0x7c, 0x2e};
  EXPECT_EQ(GidText(raw), "fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e");
  EXPECT_EQ(GuidText(htobe64(0x0c42a103005b7c2eULL)), "0c42:a103:005b:7c2e");
  EXPECT_EQ(GidTypeName(2 /*IBV_GID_TYPE_ROCE_V2*/, true), "RoCE v2");
  EXPECT_EQ(GidTypeName(1 /*IBV_GID_TYPE_ROCE_V1*/, true), "IB/RoCE v1");
  EXPECT_EQ(GidTypeName(0 /*IBV_GID_TYPE_IB*/, false), "IB/RoCE v1");
}

RdmaDevice SysfsDevice() {
  RdmaDevice d;
  d.name = "mlx5_0";
  d.node_guid = "0c42:a103:005b:7c2e";
  RdmaPort p;
  p.gids = {{0, "fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e", "IB/RoCE v1", "eth0"},
            {3, "0000:0000:0000:0000:0000:ffff:ac51:0077", "RoCE v2", "eth0"}};
  d.ports = {p};
  return d;
}

TEST(Verbs, CompareAgreesAndFindsDifferences) {
  VerbsDevice v;
  v.name = "mlx5_0";
  v.node_guid = "0c42:a103:005b:7c2e";
  v.gids_queried = true;
  v.gids = {{1, {0, "fe80:0000:0000:0000:0e42:a1ff:fe5b:7c2e", "IB/RoCE v1", "eth0"}},
            {1, {3, "0000:0000:0000:0000:0000:ffff:ac51:0077", "RoCE v2", "eth0"}}};
  EXPECT_TRUE(CompareWithSysfs({v}, {SysfsDevice()}).empty());

  VerbsDevice bad = v;
  bad.node_guid = "0000:0000:0000:0001";
  bad.gids[1].gid.type = "IB/RoCE v1";
  bad.gids.push_back({1, {5, "0000:0000:0000:0000:0000:ffff:0a00:0001", "RoCE v2", "eth0"}});
  std::vector<std::string> d =
      CompareWithSysfs({bad}, {SysfsDevice(), RdmaDevice{"mlx5_9", "", false, "", "", "", {}}});
  std::string all;
  for (const auto& x : d) all += x + "\n";
  EXPECT_THAT(all, HasSubstr("node GUID rdma-core 0000:0000:0000:0001, sysfs 0c42:a103:005b:7c2e"));
  EXPECT_THAT(all, HasSubstr("mlx5_0 port 1 GID 3: type rdma-core IB/RoCE v1, sysfs RoCE v2"));
  EXPECT_THAT(all, HasSubstr("mlx5_0 port 1 GID 5: only rdma-core has it"));
  EXPECT_THAT(all, HasSubstr("mlx5_9: in /sys/class/infiniband, not listed by rdma-core"));
}

// rdma-core on a host tree: libibverbs reads $SYSFS_PATH (the tree's sys)
// and lists a device only when /dev/infiniband/uverbsN exists, a path it
// does not take from SYSFS_PATH. So, in a child with its own mount
// namespace, /dev becomes a tmpfs holding those device files. Opening
// them needs the kernel's uverbs driver (absent here), so GIDs cannot come
// from rdma-core on a tree: the device list and node GUIDs are compared.
TEST(Verbs, RdmaCoreAgreesWithSysfsOnHostTree) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (mount namespace, mknod)";
  for (const std::string tree : {"cx5-roce", "cx5-roce-vfs", "cx5-ib"}) {
    std::string root = provisioner::testing::MakeTempDir(tree);
    ASSERT_TRUE(
        provisioner::testing::ExtractTtar(provisioner::testing::HostTreePath(tree), root).ok());
    auto fs = NewLocalHostFs(root);
    auto sysfs = ReadRdmaDevices(*fs);
    ASSERT_TRUE(sysfs.ok());
    auto uverbs = fs->ListDir("/sys/class/infiniband_verbs");
    ASSERT_TRUE(uverbs.ok());
    // The device numbers, read before /dev is covered below (the tree may
    // itself live under /dev: TEST_TMPDIR on /dev/shm, scripts/test.sh).
    std::vector<std::pair<std::string, std::string>> devs;  // uverbsN, "maj:min"
    for (const auto& u : *uverbs) {
      if (u.rfind("uverbs", 0) != 0) continue;
      auto dev = fs->ReadAttr("/sys/class/infiniband_verbs/" + u + "/dev");
      devs.emplace_back(u, dev.ok() ? *dev : "");
    }
    const std::string out = provisioner::testing::RunInChild([&]() -> std::string {
      auto skip = [](const std::string& what) { return "SKIP " + what + ": " + strerror(errno); };
      // The tree may itself be under /dev (TEST_TMPDIR on /dev/shm): the
      // tmpfs on /dev hides it then, so rdma-core reads it through a
      // descriptor opened before the mount.
      const int tree = open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      if (tree < 0) return skip("open " + root);
      if (unshare(CLONE_NEWNS) != 0) return skip("unshare(CLONE_NEWNS)");
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        return skip("make / private");
      }
      if (mount("tmpfs", "/dev", "tmpfs", 0, "mode=0755") != 0) return skip("mount tmpfs on /dev");
      mkdir("/dev/infiniband", 0755);
      for (const auto& [u, dev] : devs) {
        unsigned maj = 0, min = 0;
        if (sscanf(dev.c_str(), "%u:%u", &maj, &min) != 2) return skip("read dev of " + u);
        // The character device when we may create one; else (a sandbox
        // without CAP_MKNOD) a regular file: listing only stat()s the path.
        std::string path = "/dev/infiniband/" + u;
        if (mknod(path.c_str(), S_IFCHR | 0666, makedev(maj, min)) != 0 &&
            mknod(path.c_str(), S_IFREG | 0666, 0) != 0) {
          return skip("create " + path);
        }
      }
      setenv("SYSFS_PATH", ("/proc/self/fd/" + std::to_string(tree) + "/sys").c_str(), 1);
      auto verbs = QueryRdmaCore(/*with_gids=*/true);
      if (!verbs.ok()) return "ERROR " + verbs.status().message();
      std::string out = "DEVICES " + std::to_string(verbs->size()) + "\n";
      for (const auto& v : *verbs)
        out += "OPEN " + v.name + " " + (v.gids_queried ? "gids" : v.open_error) + "\n";
      for (const auto& d : CompareWithSysfs(*verbs, *sysfs)) out += "DIFF " + d + "\n";
      return out;
    });
    if (out.rfind("SKIP", 0) == 0) GTEST_SKIP() << out;
    EXPECT_THAT(out, HasSubstr("DEVICES " + std::to_string(sysfs->size()) + "\n")) << tree << "\n"
                                                                                   << out;
    EXPECT_THAT(out, ::testing::Not(HasSubstr("DIFF"))) << tree << "\n" << out;
    EXPECT_THAT(out, ::testing::Not(HasSubstr("ERROR"))) << out;
    // Why GIDs cannot come from rdma-core here: the device does not open.
    EXPECT_THAT(out, HasSubstr("OPEN mlx5_0 ibv_open_device mlx5_0")) << out;
  }
}

}  // namespace
}  // namespace provisioner::rdma
