#include "modules/rdma/rdma_backend.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "engine/host/recording_host_fs.h"
#include "gtest/gtest.h"
#include "modules/rdma/rdma_sysfs.h"
#include "test/support/ttar.h"

namespace provisioner::rdma {
namespace {

// Counts what the factory asks of the live client: a tree must never.
class CountingClient : public NetnsModeClient {
 public:
  explicit CountingClient(int* calls) : calls_(calls) {}
  StatusOr<std::string> Get() override {
    ++*calls_;
    return std::string("exclusive");
  }
  Status Set(const std::string&) override {
    ++*calls_;
    return OkStatus();
  }

 private:
  int* calls_;
};

TEST(RdmaBackendFactory, NetlinkForTheLiveRootOnly) {
  int calls = 0;
  auto client = [&calls] { return std::make_unique<CountingClient>(&calls); };
  auto live = NewLocalHostFs("/");
  RdmaBackends l = NewRdmaBackends(*live, client, true);
  EXPECT_NE(l.netns->Source().find("RDMA netlink"), std::string::npos);
  EXPECT_TRUE(l.netns->RetryWhenBusy());
  EXPECT_TRUE(l.cross_check_rdma_core);
  ASSERT_TRUE(l.netns->Get().ok());
  bool refused = false;
  EXPECT_EQ(calls, 1);

  std::string tree = testing::MakeTempDir("rdmab");
  ASSERT_FALSE(tree.empty());
  auto fs = NewLocalHostFs(tree);
  ASSERT_TRUE(fs->WriteFileAtomic(kNetnsModeParam, "Y\n").ok());
  RdmaBackends t = NewRdmaBackends(*fs, client, true);
  EXPECT_EQ(t.netns->Source(), kNetnsModeParam);
  EXPECT_FALSE(t.netns->RetryWhenBusy());
  EXPECT_FALSE(t.cross_check_rdma_core);  // rdma-core reads this machine, not the tree
  auto m = t.netns->Get();
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(*m, "shared");
  ASSERT_TRUE(t.netns->Set("exclusive", &refused).ok());
  EXPECT_EQ(*fs->ReadFile(kNetnsModeParam), "N\n");
  EXPECT_EQ(calls, 1);  // the tree backends never asked the kernel
}

TEST(TreeNetnsBackend, RefusesLikeTheKernel) {
  std::string tree = testing::MakeTempDir("rdmab");
  ASSERT_FALSE(tree.empty());
  auto fs = NewLocalHostFs(tree);
  auto b = NewTreeNetnsBackend(*fs);
  bool refused = false;
  EXPECT_EQ(b->Get().status().err(), ENOENT);
  EXPECT_EQ(b->Set("exclusive", &refused).err(), ENOENT);
  EXPECT_TRUE(refused);
  ASSERT_TRUE(fs->WriteFileAtomic(kNetnsModeParam, "Y\n").ok());
  ASSERT_TRUE(fs->WriteFileAtomic("/run/netns/pod1", "").ok());
  EXPECT_EQ(b->Set("exclusive", &refused).err(), EBUSY);
  EXPECT_TRUE(refused);
  EXPECT_TRUE(b->Set("shared", &refused).ok());  // the current mode: no switch needed
}

TEST(AddressCapture, RenderParseRoundTrip) {
  std::string text = RenderAddressCapture(
      {{"lo", "127.0.0.1"}, {"eth0", "10.0.0.2"}, {"eth0", "fe80::1"}, {"lo", "::1"}});
  EXPECT_EQ(text, "lo inet 127.0.0.1\neth0 inet 10.0.0.2\neth0 inet6 fe80::1\nlo inet6 ::1\n");
  RdmaFacts f;
  ParseAddressCapture(text, f);
  EXPECT_EQ(f.addresses["eth0"].ipv4, std::vector<std::string>{"10.0.0.2"});
  EXPECT_EQ(f.addresses["eth0"].ipv6, std::vector<std::string>{"fe80::1"});
  EXPECT_EQ(f.addresses["lo"].ipv6, std::vector<std::string>{"::1"});
}

// Snapshot: what getifaddrs answered on the live root is recorded as a
// capture, and a tree holding it gives the very same addresses (no guess
// from /proc/net/fib_trie, which the tree below contradicts on purpose).
TEST(AddressBackend, SnapshotRecordsGetifaddrsAndTheTreeReplaysIt) {
  auto live = NewLocalHostFs("/");
  HostFsRecord record;
  auto recording = NewRecordingHostFs(live.get(), &record);
  RdmaFacts answered;
  NewGetifaddrsAddressBackend(*recording)->Read(answered);
  ASSERT_TRUE(answered.addresses_known);
  ASSERT_EQ(record.captures.count(kAddressCapture), 1u);

  std::string tree = testing::MakeTempDir("rdmab");
  ASSERT_FALSE(tree.empty());
  auto fs = NewLocalHostFs(tree);
  ASSERT_TRUE(fs->WriteFileAtomic(kAddressCapture, record.captures[kAddressCapture]).ok());
  ASSERT_TRUE(fs->WriteFileAtomic("/proc/net/if_inet6",
                                  "fe800000000000000000000000000099 05 40 20 80 guess0\n")
                  .ok());
  RdmaFacts replayed;
  NewTreeAddressBackend(*fs)->Read(replayed);
  EXPECT_TRUE(replayed.addresses_known);
  EXPECT_EQ(replayed.addresses.count("guess0"), 0u);
  ASSERT_EQ(replayed.addresses.size(), answered.addresses.size());
  for (const auto& [ifname, a] : answered.addresses) {
    EXPECT_EQ(replayed.addresses[ifname].ipv4, a.ipv4) << ifname;
    EXPECT_EQ(replayed.addresses[ifname].ipv6, a.ipv6) << ifname;
  }
}

TEST(AddressBackend, TreeWithoutCaptureReadsProc) {
  std::string tree = testing::MakeTempDir("rdmab");
  ASSERT_FALSE(tree.empty());
  auto fs = NewLocalHostFs(tree);
  ASSERT_TRUE(fs->WriteFileAtomic("/proc/net/if_inet6",
                                  "fe800000000000000000000000000099 05 40 20 80 eth9\n")
                  .ok());
  RdmaFacts f;
  NewTreeAddressBackend(*fs)->Read(f);
  EXPECT_TRUE(f.addresses_known);
  EXPECT_EQ(f.addresses["eth9"].ipv6, std::vector<std::string>{"fe80::99"});
}

}  // namespace
}  // namespace provisioner::rdma
