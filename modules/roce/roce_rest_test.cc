// The rest of lossless RoCE below the module: the default-RoCE-ToS files
// (formats, paths, writes through the kernel simulator, which answers as
// mlx5_ib's traffic_class_store and cma_configfs.c do), and the DCB
// capture's dcbx / dscpMap with the tree backend's SetDscpMap / SetDcbx.
#include <cerrno>

#include "engine/host/host_fs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/roce/roce_backend.h"
#include "modules/roce/roce_tos.h"
#include "test/sim/sim_host_fs.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using ::testing::HasSubstr;

constexpr char kDev[] = "/sys/devices/pci0000:ae/0000:ae:00.0/0000:af:00.0/infiniband/mlx5_0";
constexpr char kTc[] = "/sys/class/infiniband/mlx5_0/tc/1/traffic_class";
constexpr char kCm[] = "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos";

std::string Tree(bool traffic_class, bool rdma_cm) {
  std::string root = testing::MakeTempDir("roce-tos");
  testing::TreeWriter w(root);
  EXPECT_TRUE(w.MakeDir(std::string(kDev) + "/ports/1").ok());
  EXPECT_TRUE(w.MakeDir("/sys/class/infiniband").ok());
  EXPECT_TRUE(w.Link("/sys/class/infiniband/mlx5_0", kDev).ok());
  if (traffic_class) {
    EXPECT_TRUE(w.WriteFile(std::string(kDev) + "/tc/1/traffic_class", "", 0644).ok());
  }
  if (rdma_cm) {
    EXPECT_TRUE(w.WriteFile(kCm, "0\n", 0644).ok());
  }
  return root;
}

TEST(RoceTos, PathsAndWhichFileWins) {
  EXPECT_TRUE(IsTosPath(kTc));
  EXPECT_TRUE(IsTosPath(kCm));
  for (const char* bad : {"/sys/class/infiniband/../tc/1/traffic_class",
                          "/sys/class/infiniband/mlx5_0/tc/1/../../traffic_class", "/etc/passwd",
                          "/sys/class/infiniband/mlx5_0/tc/x/traffic_class",
                          "/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_mode"}) {
    EXPECT_FALSE(IsTosPath(bad)) << bad;
  }
  auto both = NewLocalHostFs(Tree(true, true));
  EXPECT_EQ(TosFile(*both, "mlx5_0", 1), kTc);  // mlx5_ib's covers NCCL's verbs QPs too
  auto cm = NewLocalHostFs(Tree(false, true));
  EXPECT_EQ(TosFile(*cm, "mlx5_0", 1), kCm);
  auto none = NewLocalHostFs(Tree(false, false));
  EXPECT_EQ(TosFile(*none, "mlx5_0", 1), "");
  EXPECT_EQ(TosFile(*none, "../x", 1), "");
}

TEST(RoceTos, ReadFormats) {
  const std::string root = Tree(true, true);
  testing::TreeWriter w(root);
  auto fs = NewLocalHostFs(root);
  auto read = [&](const std::string& text) {
    EXPECT_TRUE(w.WriteFile(std::string(kDev) + "/tc/1/traffic_class", text, 0644).ok());
    return ReadTos(*fs, kTc);
  };
  EXPECT_EQ(*read(""), std::nullopt);  // unset
  EXPECT_EQ(*read("Global tclass=106\n"), 106);
  // A rule line after the global value, as traffic_class_show prints it.
  EXPECT_EQ(*read("Global tclass=106\ndst_ip=10.0.0.0/8,tclass=32\n"), 106);
  EXPECT_EQ(*read("dst_ip=10.0.0.0/8,tclass=32\n"), std::nullopt);  // rules only
  EXPECT_EQ(*read("106\n"), 106);  // a tree root after apply wrote the kernel's input
  EXPECT_EQ(*read("-1\n"), std::nullopt);
  auto bad = read("Global tclass=300\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr(kTc));
  ASSERT_TRUE(w.WriteFile(kCm, "96\n", 0644).ok());
  EXPECT_EQ(*ReadTos(*fs, kCm), 96);
  ASSERT_TRUE(w.WriteFile(kCm, "x\n", 0644).ok());
  EXPECT_THAT(ReadTos(*fs, kCm).status().message(), HasSubstr("is not a ToS 0..255"));
}

// Through the kernel simulator: what the file reads after each write, and
// the errnos of input the kernel refuses.
TEST(RoceTos, WritesAsTheKernelAnswersThem) {
  const std::string root = Tree(true, true);
  auto fs = testing::NewSimulatedHostFs(root, {});
  ASSERT_TRUE(WriteTos(*fs, kTc, 106).ok());
  EXPECT_EQ(*fs->ReadFile(kTc), "Global tclass=106\n");
  EXPECT_EQ(*ReadTos(*fs, kTc), 106);
  ASSERT_TRUE(WriteTos(*fs, kTc, std::nullopt).ok());  // "-1": unset
  EXPECT_EQ(*fs->ReadFile(kTc), "");
  EXPECT_EQ(*ReadTos(*fs, kTc), std::nullopt);
  EXPECT_TRUE(fs->WriteAttr(kTc, "tclass=96").ok());
  EXPECT_EQ(*ReadTos(*fs, kTc), 96);
  Status s = fs->WriteAttr(kTc, "Global tclass=106");
  EXPECT_EQ(s.err(), EINVAL);
  EXPECT_EQ(fs->WriteAttr(kTc, "256").err(), EINVAL);
  EXPECT_EQ(*ReadTos(*fs, kTc), 96);  // a refused write changes nothing

  ASSERT_TRUE(WriteTos(*fs, kCm, 106).ok());
  EXPECT_EQ(*fs->ReadFile(kCm), "106\n");
  EXPECT_EQ(fs->WriteAttr(kCm, "300").err(), ERANGE);
  EXPECT_EQ(fs->WriteAttr(kCm, "abc").err(), EINVAL);
  EXPECT_FALSE(WriteTos(*fs, kCm, std::nullopt).ok());  // configfs has no unset
}

TEST(DcbCaptureRest, DcbxAndDscpMap) {
  DcbState s;
  s.trust = "dscp";
  for (int d = 0; d < 64; ++d) s.dscp_map[d] = d >> 3;
  s.dscp_map[26] = 5;
  s.dcbx = "host";
  const std::string text = RenderDcbCapture(s);
  EXPECT_EQ(text, "{\"dcbx\":\"host\",\"dscpMap\":{\"26\":5},\"pfc\":[],\"trust\":\"dscp\"}\n");
  auto back = ParseDcbCapture(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->dscp_map, s.dscp_map);
  EXPECT_EQ(back->dcbx, "host");
  // Trust dscp without dscpMap: the default map; trust pcp: none.
  EXPECT_EQ(ParseDcbCapture("{\"pfc\":[],\"trust\":\"dscp\"}")->dscp_map.at(26), 3);
  EXPECT_TRUE(ParseDcbCapture("{\"pfc\":[],\"trust\":\"pcp\"}")->dscp_map.empty());
  EXPECT_FALSE(ParseDcbCapture("{\"pfc\":[],\"trust\":\"pcp\"}")->dcbx.has_value());
  for (const char* bad : {"{\"pfc\":[],\"trust\":\"pcp\",\"dscpMap\":{\"26\":5}}",
                          "{\"pfc\":[],\"trust\":\"dscp\",\"dscpMap\":{\"64\":5}}",
                          "{\"pfc\":[],\"trust\":\"dscp\",\"dscpMap\":{\"26\":8}}",
                          "{\"pfc\":[],\"trust\":\"dscp\",\"dcbx\":\"auto\"}"}) {
    EXPECT_FALSE(ParseDcbCapture(bad).ok()) << bad;
  }
}

TEST(DcbCaptureRest, TreeBackendSetsAsMlx5Does) {
  const std::string root = testing::MakeTempDir("roce-dcb");
  testing::TreeWriter w(root);
  ASSERT_TRUE(w.MakeDir("/sys/class/net/ens6f0np0").ok());
  ASSERT_TRUE(w.WriteFile("/run/provisioner/dcb/ens6f0np0",
                          "{\"dcbx\":\"firmware\",\"pfc\":[],\"trust\":\"pcp\"}\n", 0644)
                  .ok());
  auto fs = NewLocalHostFs(root);
  auto dcb = NewTreeDcbBackend(*fs);
  ASSERT_TRUE(dcb->SetDcbx("ens6f0np0", "host").ok());
  EXPECT_FALSE(dcb->SetDcbx("ens6f0np0", "lld").ok());
  ASSERT_TRUE(dcb->SetTrust("ens6f0np0", "dscp").ok());
  ASSERT_TRUE(dcb->SetDscpMap("ens6f0np0", {{26, 5}, {48, std::nullopt}}).ok());
  auto s = dcb->Read("ens6f0np0");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->dcbx, "host");
  EXPECT_EQ(s->dscp_map.at(26), 5);
  EXPECT_EQ(s->dscp_map.at(48), 6);  // deleted: the capture holds the default again
  EXPECT_EQ(*fs->ReadFile("/run/provisioner/dcb/ens6f0np0"),
            "{\"dcbx\":\"host\",\"dscpMap\":{\"26\":5},\"pfc\":[],\"trust\":\"dscp\"}\n");
  // Trust pcp deletes every DSCP entry.
  ASSERT_TRUE(dcb->SetTrust("ens6f0np0", "pcp").ok());
  EXPECT_TRUE(dcb->Read("ens6f0np0")->dscp_map.empty());
}

}  // namespace
}  // namespace provisioner
