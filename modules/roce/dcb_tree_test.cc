// The capture format, the tree backend (read, set, round trip through
// `snapshot`'s note), ECN files through the host layer, and the factory.
#include <cerrno>

#include "engine/host/host_fs.h"
#include "engine/host/recording_host_fs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/roce/roce_backend.h"
#include "modules/roce/roce_ecn.h"
#include "test/support/host_tree.h"
#include "test/support/ttar.h"

namespace provisioner {
namespace {

using ::testing::HasSubstr;

TEST(DcbCapture, RenderAndParse) {
  DcbState s;
  s.trust = "dscp";
  s.pfc = {4, 3, 3};
  EXPECT_EQ(RenderDcbCapture(s), "{\"pfc\":[3,4],\"trust\":\"dscp\"}\n");
  auto back = ParseDcbCapture(RenderDcbCapture(s));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->trust, "dscp");
  EXPECT_EQ(back->pfc, (std::vector<int>{3, 4}));
  EXPECT_EQ(ParseDcbCapture("{\"trust\":\"pcp\",\"pfc\":[]}")->trust, "pcp");
}

TEST(DcbCapture, BadCapturesAreErrorsSayingWhat) {
  EXPECT_THAT(ParseDcbCapture("trust=dscp").status().message(), HasSubstr("not a DCB capture"));
  EXPECT_THAT(ParseDcbCapture("{\"trust\":\"l2\",\"pfc\":[]}").status().message(),
              HasSubstr("\"trust\" must be"));
  EXPECT_THAT(ParseDcbCapture("{\"trust\":\"pcp\",\"pfc\":[8]}").status().message(),
              HasSubstr("not a priority 0..7"));
  EXPECT_THAT(ParseDcbCapture("{\"trust\":\"pcp\"}").status().message(),
              HasSubstr("\"pfc\" must be a list"));
  EXPECT_THAT(ParseDcbCapture("{\"trust\":\"pcp\",\"pfc\":[],\"ets\":1}").status().message(),
              HasSubstr("unknown key \"ets\""));
}

class TreeBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = testing::MakeTempDir("roce-tree");
    testing::TreeWriter w(root_);
    ASSERT_TRUE(w.MakeDir("/sys/class/net/ens6f0np0").ok());
    for (const char* point : {"roce_np", "roce_rp"}) {
      for (int p = 0; p < 8; ++p) {
        ASSERT_TRUE(w.WriteFile("/sys/class/net/ens6f0np0/ecn/" + std::string(point) + "/enable/" +
                                    std::to_string(p),
                                "0\n", 0644)
                        .ok());
      }
    }
    fs_ = NewLocalHostFs(root_);
  }
  std::string root_;
  std::unique_ptr<HostFs> fs_;
};

TEST_F(TreeBackendTest, SetThenReadRoundTrips) {
  auto dcb = NewDcbBackend(*fs_);
  EXPECT_EQ(dcb->Name(), "capture");
  // Not captured yet: a clear error naming the file and how to make one.
  auto missing = dcb->Read("ens6f0np0");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().err(), ENOENT);
  EXPECT_THAT(missing.status().message(), HasSubstr("/run/provisioner/dcb/ens6f0np0"));
  EXPECT_THAT(missing.status().message(), HasSubstr("snapshot"));
  ASSERT_TRUE(
      fs_->WriteFileAtomic(DcbCapturePath("ens6f0np0"), RenderDcbCapture(DcbState{"pcp", {}}))
          .ok());
  ASSERT_TRUE(dcb->SetTrust("ens6f0np0", "dscp").ok());
  ASSERT_TRUE(dcb->SetPfc("ens6f0np0", {3}).ok());
  auto got = dcb->Read("ens6f0np0");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->trust, "dscp");
  EXPECT_EQ(got->pfc, (std::vector<int>{3}));
  EXPECT_EQ(*fs_->ReadFile(DcbCapturePath("ens6f0np0")), "{\"pfc\":[3],\"trust\":\"dscp\"}\n");
  // No such netdev.
  auto none = dcb->Read("nosuch0");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().err(), ENODEV);
}

TEST_F(TreeBackendTest, EcnFilesReadAndWrite) {
  EXPECT_TRUE(HasEcn(*fs_, "ens6f0np0"));
  ASSERT_TRUE(WriteEcn(*fs_, "ens6f0np0", kEcnRp, 3, true).ok());
  auto rp = ReadEcn(*fs_, "ens6f0np0", kEcnRp);
  ASSERT_TRUE(rp.ok());
  EXPECT_EQ(rp->size(), 8u);
  EXPECT_TRUE(rp->at(3));
  EXPECT_FALSE(rp->at(4));
  EXPECT_EQ(*fs_->ReadFile(EcnPath("ens6f0np0", kEcnRp, 3)), "1\n");
  testing::TreeWriter w(root_);
  ASSERT_TRUE(w.WriteFile(EcnPath("ens6f0np0", kEcnNp, 5), "yes\n", 0644).ok());
  auto bad = ReadEcn(*fs_, "ens6f0np0", kEcnNp);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("ecn/roce_np/enable/5: \"yes\" is not 0 or 1"));
}

// What the live backend notes for snapshot (NoteCapture of the rendered
// state at DcbCapturePath), written by WriteSnapshot, is what the tree
// backend reads on the snapshot.
TEST(DcbSnapshot, ACapturedLiveAnswerReplaysUnderTheSnapshot) {
  const std::string host = testing::MakeTempDir("roce-host");
  testing::TreeWriter w(host);
  ASSERT_TRUE(w.WriteFile("/sys/class/net/eth0/mtu", "1500\n").ok());
  auto inner = NewLocalHostFs(host);
  HostFsRecord rec;
  auto recording = NewRecordingHostFs(inner.get(), &rec);
  ASSERT_TRUE(recording->Exists("/sys/class/net/eth0"));
  const DcbState live{"dscp", {3}};
  recording->NoteCapture(DcbCapturePath("eth0"), RenderDcbCapture(live));
  const std::string out = testing::MakeTempDir("roce-snap");
  auto written = WriteSnapshot(*inner, rec, out);
  ASSERT_TRUE(written.ok()) << written.status().message();
  auto snap = NewLocalHostFs(out);
  auto got = NewDcbBackend(*snap)->Read("eth0");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(got->trust, live.trust);
  EXPECT_EQ(got->pfc, live.pfc);
}

TEST(DcbBackendFactory, NetlinkForTheLiveRootOnly) {
  auto live = NewLocalHostFs("/");
  EXPECT_EQ(NewDcbBackend(*live)->Name(), "dcbnl");
  auto tree = NewLocalHostFs(testing::MakeTempDir("roce-factory"));
  EXPECT_EQ(NewDcbBackend(*tree)->Name(), "capture");
}

}  // namespace
}  // namespace provisioner
