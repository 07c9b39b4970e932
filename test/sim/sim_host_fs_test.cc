#include "test/sim/sim_host_fs.h"

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "test/support/host_presets.h"
#include "test/support/host_tree.h"
#include "test/support/tree_diff.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

const std::string kPf0 = "/sys/bus/pci/devices/0000:af:00.0";

std::string NewRoceTree() {
  std::string dir = MakeTempDir("roce");
  Status s = BuildHostTree(Cx5RoceHost(), dir);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return dir;
}

// The simulator on a fresh cx5-roce tree whose VF netdevs appear
// `settle_reads` reads after a numVfs write.
std::unique_ptr<HostFs> NewRoceSim(int settle_reads) {
  SimOptions o;
  o.settle_reads = settle_reads;
  return NewSimulatedHostFs(NewRoceTree(), o);
}

TEST(SimHostFsTest, KernelErrnosComeBackAsStatus) {
  std::string root = NewRoceTree();
  auto fs = NewSimulatedHostFs(root);
  Status s = fs->WriteAttr(kPf0 + "/sriov_numvfs", "abc");
  EXPECT_EQ(s.err(), EINVAL);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("write " + kPf0 + "/sriov_numvfs: EINVAL"), std::string::npos)
      << s.message();
  EXPECT_EQ(fs->WriteAttr(kPf0 + "/sriov_numvfs", "128").err(), ERANGE);
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "4").ok());
  s = fs->WriteAttr(kPf0 + "/sriov_numvfs", "8");
  EXPECT_EQ(s.err(), EBUSY);
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
  EXPECT_EQ(fs->ReadAttr(kPf0 + "/sriov_numvfs").value_or(""), "4");
}

TEST(SimHostFsTest, NetdevsAppearAfterSomeReads) {
  auto fs = NewRoceSim(3);
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "2\n").ok());
  // VF functions exist when the write returns...
  EXPECT_TRUE(fs->IsSymlink(kPf0 + "/virtfn1"));                                // read 1
  EXPECT_EQ(fs->LinkBasename(kPf0 + "/virtfn1").value_or(""), "0000:af:00.3");  // read 2
  // ... their netdevs a little later.
  EXPECT_FALSE(fs->Exists("/sys/class/net/ens6f0v0"));  // read 3
  EXPECT_TRUE(fs->Exists("/sys/class/net/ens6f0v0"));   // read 4
  auto ib = fs->ListDir("/sys/bus/pci/devices/0000:af:00.3/infiniband");
  ASSERT_TRUE(ib.ok());
  EXPECT_EQ(*ib, std::vector<std::string>{"mlx5_3"});
  EXPECT_EQ(fs->ReadAttr("/sys/bus/pci/devices/0000:af:00.3/net/ens6f0v1/type").value_or(""), "1");
}

// dev_set_mtu on a VF netdev: kstrtoul, min 68, the VF's max_mtu (mlx5
// 9978), and never above its PF's MTU; a refusal changes nothing.
TEST(SimHostFsTest, VfNetdevMtuIsRefusedAboveThePfsOrTheMaximum) {
  auto fs = NewRoceSim(0);
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "2\n").ok());
  const std::string vf = "/sys/class/net/ens6f0v0/mtu";
  ASSERT_EQ(fs->ReadAttr(vf).value_or(""), "1500");  // a new mlx5 VF netdev, whatever its PF's
  ASSERT_EQ(fs->ReadAttr("/sys/class/net/ens6f0np0/mtu").value_or(""), "1500");
  Status s = fs->WriteAttr(vf, "9000\n");
  EXPECT_EQ(s.err(), EINVAL) << s.ToString();
  EXPECT_EQ(fs->ReadAttr(vf).value_or(""), "1500");
  EXPECT_EQ(fs->WriteAttr(vf, "1400\n").err(), 0);
  EXPECT_EQ(fs->ReadAttr(vf).value_or(""), "1400");
  // The PF raised first (a PF netdev's mtu is a plain file here).
  ASSERT_TRUE(fs->WriteAttr("/sys/class/net/ens6f0np0/mtu", "9000\n").ok());
  EXPECT_EQ(fs->WriteAttr(vf, "9000\n").err(), 0);
  EXPECT_EQ(fs->ReadAttr(vf).value_or(""), "9000");
  EXPECT_EQ(fs->ReadAttr("/sys/class/net/ens6f0v1/mtu").value_or(""), "1500");
  ASSERT_TRUE(fs->WriteAttr("/sys/class/net/ens6f0np0/mtu", "12000\n").ok());
  EXPECT_EQ(fs->WriteAttr(vf, "9979\n").err(), EINVAL);  // above max_mtu
  EXPECT_EQ(fs->WriteAttr(vf, "67").err(), EINVAL);      // below ETH_MIN_MTU
  EXPECT_EQ(fs->WriteAttr(vf, "nine").err(), EINVAL);
  EXPECT_EQ(fs->WriteAttr(vf, "0x2328").err(), 0);  // kstrtoul base 0
  EXPECT_EQ(fs->ReadAttr(vf).value_or(""), "9000");
}

TEST(SimHostFsTest, ZeroSettleAndNeverSettle) {
  auto fs = NewRoceSim(0);
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "1").ok());
  EXPECT_TRUE(fs->Exists("/sys/class/net/ens6f0v0"));
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "0").ok());

  SimOptions never;
  never.settle_reads = -1;
  SimulatedHostFs sfs(fs->root(), never);
  ASSERT_TRUE(sfs.WriteAttr(kPf0 + "/sriov_numvfs", "1").ok());
  for (int i = 0; i < 20; ++i) EXPECT_FALSE(sfs.Exists("/sys/class/net/ens6f0v0"));
  EXPECT_EQ(sfs.pending(), 1u);
  ASSERT_TRUE(sfs.FlushPending().ok());
  EXPECT_TRUE(sfs.Exists("/sys/class/net/ens6f0v0"));
}

TEST(SimHostFsTest, ZeroRestoresTheTree) {
  std::string root = NewRoceTree();
  std::string pristine = NewRoceTree();
  auto fs = NewSimulatedHostFs(root);
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "5").ok());
  for (int i = 0; i < 5; ++i) fs->Exists("/");
  EXPECT_TRUE(fs->Exists("/sys/class/net/ens6f0v4"));
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "0").ok());
  EXPECT_EQ(DiffTreesText(pristine, root), "");
}

TEST(SimHostFsTest, FaultInjectionByNumberAndPath) {
  std::string root = NewRoceTree();
  std::string pristine = NewRoceTree();
  SimOptions o;
  o.faults.push_back({2, "", ENOMEM, -1});                       // the 2nd write
  o.faults.push_back({0, "0000:af:00.1/sriov_numvfs", EIO, 1});  // once
  SimulatedHostFs fs(root, o);
  EXPECT_TRUE(fs.WriteAttr("/etc/some.conf", "x").ok() || true);  // write 1 (file missing is fine)
  Status s = fs.WriteAttr(kPf0 + "/sriov_numvfs", "4");           // write 2
  EXPECT_EQ(s.err(), ENOMEM);
  EXPECT_EQ(fs.ReadAttr(kPf0 + "/sriov_numvfs").value_or(""), "0");  // no effect
  s = fs.WriteAttr("/sys/bus/pci/devices/0000:af:00.1/sriov_numvfs", "1");
  EXPECT_EQ(s.err(), EIO);
  EXPECT_TRUE(fs.WriteAttr("/sys/bus/pci/devices/0000:af:00.1/sriov_numvfs", "0").ok());
  // Resolved paths match too.
  fs.AddFault({0, "pci0000:ae/0000:ae:00.0/0000:af:00.0/sriov_numvfs", EPERM, -1});
  s = fs.WriteAttr(kPf0 + "/sriov_numvfs", "1");
  EXPECT_EQ(s.err(), EPERM);
  EXPECT_EQ(s.code(), StatusCode::kPermissionDenied);
  fs.AddFault({0, "modprobe.d", EBUSY, -1});
  EXPECT_EQ(fs.WriteFileAtomic("/etc/modprobe.d/ib_core.conf", "x\n", 0644).err(), EBUSY);
  EXPECT_EQ(fs.writes(), 6);
  EXPECT_EQ(DiffTreesText(pristine, root), "");
}

TEST(SimHostFsTest, EmptyGidSlotsAttrsAreEinval) {
  std::string root = NewRoceTree();
  auto fs = NewSimulatedHostFs(root);
  const std::string port = "/sys/class/infiniband/mlx5_0/ports/1";
  EXPECT_EQ(fs->ReadAttr(port + "/gid_attrs/types/3").value_or(""), "RoCE v2");
  EXPECT_EQ(fs->ReadAttr(port + "/gids/9").value_or(""), "0000:0000:0000:0000:0000:0000:0000:0000");
  EXPECT_EQ(fs->ReadAttr(port + "/gid_attrs/types/9").status().err(), EINVAL);
  EXPECT_EQ(fs->ReadAttr(port + "/gid_attrs/ndevs/9").status().err(), EINVAL);
  EXPECT_EQ(fs->ReadAttr(port + "/gid_attrs/ndevs/999").status().err(), ENOENT);  // no such slot
}

TEST(SimHostFsTest, CountsWritesInStats) {
  std::string root = NewRoceTree();
  auto fs = NewSimulatedHostFs(root);
  EXPECT_EQ(fs->stats().files_opened_for_write, 0u);
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_numvfs", "1").ok());
  ASSERT_TRUE(fs->WriteAttr(kPf0 + "/sriov_drivers_autoprobe", "1").ok());
  EXPECT_EQ(fs->stats().files_opened_for_write, 2u);
  EXPECT_EQ(fs->root(), root);
}

// ib_ipoib's sysfs writes (ipoib_sim.h) on the cx5-ib tree's ibs5f0.
TEST(SimHostFsTest, IpoibChildrenAndModeAsTheKernel) {
  std::string root = MakeTempDir("ib");
  ASSERT_TRUE(BuildHostTree(Cx5IbHost(), root).ok());
  const std::string pristine = MakeTempDir("ib-pristine");
  ASSERT_TRUE(BuildHostTree(Cx5IbHost(), pristine).ok());
  auto fs = NewSimulatedHostFs(root);
  const std::string ib = "/sys/class/net/ibs5f0";
  EXPECT_EQ(fs->WriteAttr(ib + "/create_child", "0x8000").err(), EINVAL);
  EXPECT_EQ(fs->WriteAttr(ib + "/create_child", "0").err(), EINVAL);
  EXPECT_EQ(fs->WriteAttr(ib + "/create_child", "pkey").err(), EINVAL);
  EXPECT_EQ(fs->WriteAttr(ib + "/create_child", "0xffff").err(), ENOTUNIQ);  // its own
  ASSERT_TRUE(fs->WriteAttr(ib + "/create_child", "32769\n").ok());          // %i: decimal 0x8001
  const std::string child = "/sys/class/net/ibs5f0.8001";
  EXPECT_EQ(fs->ReadAttr(child + "/pkey").value_or(""), "0x8001");
  EXPECT_EQ(fs->ReadAttr(child + "/parent").value_or(""), "ibs5f0");
  EXPECT_EQ(fs->ReadAttr(child + "/type").value_or(""), "32");
  EXPECT_EQ(fs->ReadAttr(child + "/flags").value_or(""), "0x1002");  // down
  EXPECT_FALSE(fs->Exists(child + "/create_child"));
  EXPECT_EQ(fs->ReadLink(child + "/device").value_or(""), "../../../0000:86:00.0");
  EXPECT_EQ(fs->WriteAttr(ib + "/create_child", "0x8001").err(), ENOTUNIQ);
  // Modes: exactly the kernel's words; no connected mode without the RC flag.
  EXPECT_EQ(fs->WriteAttr(ib + "/mode", "connected").err(), EINVAL);
  EXPECT_EQ(fs->WriteAttr(ib + "/mode", "connected\n").err(), EINVAL);
  EXPECT_EQ(fs->ReadAttr(ib + "/mode").value_or(""), "datagram");
  ASSERT_TRUE(fs->WriteAttr(ib + "/mode", "datagram\n").ok());
  EXPECT_EQ(fs->WriteAttr(ib + "/delete_child", "0x8002").err(), ENODEV);
  ASSERT_TRUE(fs->WriteAttr(ib + "/delete_child", "0x8001").ok());
  EXPECT_FALSE(fs->Exists(child));
  // Nothing is left of it: the tree is as generated.
  EXPECT_EQ(DiffTreesText(pristine, root), "");
}

TEST(SimHostFsTest, IpoibConnectedModeSetsTheMtu) {
  std::string root = MakeTempDir("ib-rc");
  ASSERT_TRUE(BuildHostTree(Cx5IbHost(), root).ok());
  auto fs = NewSimulatedHostFs(root);
  const std::string ib = "/sys/class/net/ibs5f0";
  // An RC-capable QPN (ipoib_enhanced=0): flag 0x80 in the first byte.
  ASSERT_TRUE(fs->WriteFileAtomic(ib + "/address",
                                  "80:00:10:87:fe:80:00:00:00:00:00:00:ec:0d:9a:03:00:8a:bc:de\n")
                  .ok());
  ASSERT_TRUE(fs->WriteAttr(ib + "/mode", "connected\n").ok());
  EXPECT_EQ(fs->ReadAttr(ib + "/mode").value_or(""), "connected");
  EXPECT_EQ(fs->ReadAttr(ib + "/mtu").value_or(""), "65520");
  ASSERT_TRUE(fs->WriteAttr(ib + "/mode", "datagram\n").ok());
  EXPECT_EQ(fs->ReadAttr(ib + "/mtu").value_or(""), "4092");
}

// Firmware latency (issue 27): under a tree root the firmware module's
// `mstconfig query` is a read of the card's capture and `mstconfig set` a
// write of it (modules/firmware/firmware_tool.h); each takes its latency,
// outside the simulator's lock, so cards answer at once. Nothing else waits,
// and the default is no wait at all.
TEST(SimHostFsTest, FirmwareQueryAndSetTakeTheirLatencyPerCardConcurrently) {
  using Clock = std::chrono::steady_clock;
  using std::chrono::milliseconds;
  EXPECT_TRUE(IsFirmwareCapture("/run/provisioner/mstconfig/0000:1a:00.0.query"));
  EXPECT_FALSE(IsFirmwareCapture("/run/provisioner/mstconfig/0000:1a:00.0.query.tmp"));
  EXPECT_FALSE(IsFirmwareCapture("/run/provisioner/mstconfig/x/0000:1a:00.0.query"));
  EXPECT_FALSE(IsFirmwareCapture("/run/provisioner/mstconfig/.query"));
  EXPECT_FALSE(IsFirmwareCapture("/sys/bus/pci/devices/0000:86:00.0/vendor"));

  // The cx5-ib tree's captured query, as if three cards had answered it.
  const std::vector<std::string> cards = {"0000:86:00.0", "0000:87:00.0", "0000:88:00.0"};
  auto capture = [](const std::string& card) {
    return "/run/provisioner/mstconfig/" + card + ".query";
  };
  HostSpec spec = Cx5IbHost();
  std::string answer;
  for (const auto& [path, content] : spec.files) {
    if (path == capture(cards[0])) answer = content;
  }
  ASSERT_FALSE(answer.empty());
  spec.files.push_back({capture(cards[1]), answer});
  spec.files.push_back({capture(cards[2]), answer});
  std::string root = MakeTempDir("fw-latency");
  ASSERT_TRUE(BuildHostTree(spec, root).ok());
  auto ms_since = [](Clock::time_point t) {
    return std::chrono::duration_cast<milliseconds>(Clock::now() - t).count();
  };
  const milliseconds query(400), set(300);
  SimOptions o;
  o.latency.firmware_query = query;
  o.latency.firmware_set = set;
  auto fs = NewSimulatedHostFs(root, o);

  // One query: the capture's text, after the card's time.
  auto t = Clock::now();
  auto text = fs->ReadFile(capture(cards[0]));
  EXPECT_GE(ms_since(t), query.count());
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text->find("LINK_TYPE_P1"), std::string::npos);
  // A set: the write after its own query.
  t = Clock::now();
  ASSERT_TRUE(fs->WriteFileAtomic(capture(cards[0]), *text, 0644).ok());
  EXPECT_GE(ms_since(t), set.count());

  // Three cards queried on three threads: one card's time, not three (1.2 s).
  t = Clock::now();
  std::vector<std::thread> threads;
  std::vector<bool> ok(cards.size());
  for (size_t i = 0; i < cards.size(); ++i) {
    threads.emplace_back([&, i] { ok[i] = fs->ReadFile(capture(cards[i])).ok(); });
  }
  for (auto& th : threads) th.join();
  const auto together = ms_since(t);
  EXPECT_GE(together, query.count());
  EXPECT_LT(together, 1000) << "the cards' queries ran one after the other";
  for (size_t i = 0; i < cards.size(); ++i) EXPECT_TRUE(ok[i]) << cards[i];

  // Any other file is read without the card's time: 20 reads in less than
  // one query.
  t = Clock::now();
  for (int i = 0; i < 20; ++i) {
    EXPECT_TRUE(fs->ReadFile("/sys/bus/pci/devices/0000:86:00.0/vendor").ok());
  }
  EXPECT_LT(ms_since(t), query.count());

  // The default (unit tests, the fault matrix): no firmware latency.
  EXPECT_EQ(SimLatencies{}.firmware_query.count(), 0);
  EXPECT_EQ(SimLatencies{}.firmware_set.count(), 0);
  EXPECT_EQ(Mlx5Latencies().firmware_query, std::chrono::seconds(1));
  EXPECT_EQ(Mlx5Latencies().firmware_set, std::chrono::seconds(1));
}

}  // namespace
}  // namespace provisioner::testing
