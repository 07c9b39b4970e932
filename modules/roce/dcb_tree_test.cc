// The capture format, the tree backend (read, set, round trip through
// `snapshot`'s note), ECN files through the host layer, and the factory.
#include <cerrno>

#include "engine/host/host_fs.h"
#include "engine/host/recording_host_fs.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/roce/roce_backend.h"
#include "modules/roce/roce_ecn.h"
#include "test/support/backend_by_root.h"
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

TEST(DcbCapture, CableLengthAndBuffersRoundTripAndOldCapturesStillParse) {
  DcbState s;
  s.trust = "dscp";
  s.pfc = {3};
  s.cable_length = 30;
  s.buffer = DcbBuffer{{0, 0, 0, 1, 0, 0, 0, 0}, {130944, 98304, 0, 0, 0, 0, 0, 0}, 524160};
  const std::string text = RenderDcbCapture(s);
  EXPECT_EQ(text,
            "{\"buffer\":{\"prio2buffer\":[0,0,0,1,0,0,0,0],\"sizes\":[130944,98304,0,0,0,0,0,0],"
            "\"total\":524160},\"cableLength\":30,\"pfc\":[3],\"trust\":\"dscp\"}\n");
  auto back = ParseDcbCapture(text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->cable_length, 30);
  ASSERT_TRUE(back->buffer.has_value());
  EXPECT_EQ(*back->buffer, *s.buffer);
  // A capture from before these keys: neither is known.
  auto old = ParseDcbCapture("{\"trust\":\"pcp\",\"pfc\":[3],\"dcbx\":\"host\"}");
  ASSERT_TRUE(old.ok());
  EXPECT_FALSE(old->cable_length.has_value());
  EXPECT_FALSE(old->buffer.has_value());
  EXPECT_THAT(
      ParseDcbCapture("{\"trust\":\"pcp\",\"pfc\":[],\"cableLength\":0}").status().message(),
      HasSubstr("\"cableLength\" must be meters"));
  EXPECT_THAT(ParseDcbCapture("{\"trust\":\"pcp\",\"pfc\":[],\"buffer\":{\"prio2buffer\":"
                              "[0,0,0,8,0,0,0,0],\"sizes\":[0,0,0,0,0,0,0,0],\"total\":1}}")
                  .status()
                  .message(),
              HasSubstr("\"buffer\" must be"));
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

// The tree refuses what mlx5 refuses (en_dcbnl.c, en/port_buffer.c), with
// its errno, and changes nothing then. No speed/mtu files: mlx5's 40 Gb/s
// floor and MTU 1500, so a lossless buffer needs xoff + 9978 + 128 bytes:
// 26826 at 7 m, 69426 at 500 m.
TEST_F(TreeBackendTest, BuffersAndCableLengthAsMlx5TakesThem) {
  auto dcb = NewDcbBackend(*fs_);
  DcbState start{"dscp", {3}};
  ASSERT_TRUE(fs_->WriteFileAtomic(DcbCapturePath("ens6f0np0"), RenderDcbCapture(start)).ok());
  // No port buffer support (no "buffer" captured): EOPNOTSUPP; a cable
  // length is taken and not reported, as mlx5e_dcbnl_ieee_getpfc does.
  Status none = dcb->SetBuffer("ens6f0np0", DcbBuffer());
  EXPECT_EQ(none.err(), EOPNOTSUPP) << none.message();
  EXPECT_TRUE(dcb->SetCableLength("ens6f0np0", 30).ok());
  EXPECT_FALSE(dcb->Read("ens6f0np0")->cable_length.has_value());

  start.cable_length = 7;
  start.buffer = DcbBuffer{{0, 0, 0, 0, 0, 0, 0, 0}, {130944, 0, 0, 0, 0, 0, 0, 0}, 262144};
  ASSERT_TRUE(fs_->WriteFileAtomic(DcbCapturePath("ens6f0np0"), RenderDcbCapture(start)).ok());
  const std::string before = *fs_->ReadFile(DcbCapturePath("ens6f0np0"));
  // Priority 3 (PFC) moved to buffer 1, empty now: mlx5 checks the new
  // mapping against the sizes the port has before it takes new sizes
  // (update_buffer_lossy): ENOMEM, even with a size in the same message.
  DcbBuffer b{{0, 0, 0, 1, 0, 0, 0, 0}, {130944, 65536, 0, 0, 0, 0, 0, 0}, 0};
  Status order = dcb->SetBuffer("ens6f0np0", b);
  EXPECT_EQ(order.err(), ENOMEM) << order.message();
  EXPECT_THAT(order.message(), HasSubstr("lossless buffer 1 of 0 bytes"));
  // Sizes with the mapping as it is: buffer 0 (priority 3) cannot be 0.
  DcbBuffer sizes{{0, 0, 0, 0, 0, 0, 0, 0}, {0, 65536, 0, 0, 0, 0, 0, 0}, 0};
  Status zero = dcb->SetBuffer("ens6f0np0", sizes);
  EXPECT_EQ(zero.err(), EINVAL) << zero.message();
  EXPECT_THAT(zero.message(), HasSubstr("lossless buffer 0 size cannot be zero"));
  sizes.sizes = {130944, 140000, 0, 0, 0, 0, 0, 0};  // 270944 > 262144
  Status big = dcb->SetBuffer("ens6f0np0", sizes);
  EXPECT_EQ(big.err(), EINVAL) << big.message();
  sizes.sizes = {20000, 65536, 0, 0, 0, 0, 0, 0};  // below 26826
  Status small = dcb->SetBuffer("ens6f0np0", sizes);
  EXPECT_EQ(small.err(), ENOMEM) << small.message();
  EXPECT_THAT(small.message(), HasSubstr("lossless buffer 0 of 20000 bytes"));
  EXPECT_EQ(*fs_->ReadFile(DcbCapturePath("ens6f0np0")), before);  // nothing changed
  b.prio2buffer[7] = 9;
  EXPECT_EQ(dcb->SetBuffer("ens6f0np0", b).err(), EINVAL);  // dcbnl: >= DCBX_MAX_BUFFERS
  b.prio2buffer[7] = 0;

  // Sizes first, then the mapping: taken.
  sizes.sizes = b.sizes;
  ASSERT_TRUE(dcb->SetBuffer("ens6f0np0", sizes).ok());
  ASSERT_TRUE(dcb->SetBuffer("ens6f0np0", b).ok());
  auto got = dcb->Read("ens6f0np0");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->buffer->prio2buffer, b.prio2buffer);
  EXPECT_EQ(got->buffer->sizes, b.sizes);
  EXPECT_EQ(got->buffer->total, 262144);  // read-only, kept
  // 500 m needs 69426 bytes in buffer 1: ENOMEM, the old length kept.
  Status far = dcb->SetCableLength("ens6f0np0", 500);
  EXPECT_EQ(far.err(), ENOMEM) << far.message();
  EXPECT_EQ(dcb->Read("ens6f0np0")->cable_length, 7);
  ASSERT_TRUE(dcb->SetCableLength("ens6f0np0", 100).ok());
  EXPECT_EQ(dcb->Read("ens6f0np0")->cable_length, 100);
  // 0 and >= 1000 are ignored by mlx5 without an error.
  EXPECT_TRUE(dcb->SetCableLength("ens6f0np0", 1000).ok());
  EXPECT_EQ(dcb->Read("ens6f0np0")->cable_length, 100);
}

// Issue 35 item 6, as mlx5 does it: sizes kept in 128-byte cells (65500
// reads back 65408); the kernel's capacity (total - internal - 4 shared
// cells); a cable length reaches the buffers only in manual buffer mode,
// which only a changing buffer write enters.
TEST_F(TreeBackendTest, BufferCellsCapacityAndManualMode) {
  auto dcb = NewDcbBackend(*fs_);
  DcbState start{"dscp", {3}};
  start.cable_length = 7;
  start.xoff_cable_length = 7;
  start.buffer = DcbBuffer{{0, 0, 0, 1, 0, 0, 0, 0}, {65536, 130944, 0, 0, 0, 0, 0, 0}, 262144};
  start.buffer->internal = 65536;
  ASSERT_TRUE(fs_->WriteFileAtomic(DcbCapturePath("ens6f0np0"), RenderDcbCapture(start)).ok());
  auto back = ParseDcbCapture(RenderDcbCapture(start));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->buffer->internal, 65536);
  EXPECT_EQ(back->xoff_cable_length, 7);
  EXPECT_FALSE(back->manual_buffer);

  // Not in manual mode: the length is kept, the thresholds are not touched.
  ASSERT_TRUE(dcb->SetCableLength("ens6f0np0", 30).ok());
  EXPECT_EQ(dcb->Read("ens6f0np0")->cable_length, 30);
  EXPECT_EQ(dcb->Read("ens6f0np0")->xoff_cable_length, 7);
  // An unchanged buffer write does not enter manual mode.
  ASSERT_TRUE(dcb->SetBuffer("ens6f0np0", *start.buffer).ok());
  EXPECT_FALSE(dcb->Read("ens6f0np0")->manual_buffer);
  // 262144 - 65536 internal = 196608 = 1536 cells; 4 stay shared.
  DcbBuffer big = *start.buffer;
  big.sizes = {65536, 131072, 0, 0, 0, 0, 0, 0};
  Status full = dcb->SetBuffer("ens6f0np0", big);
  EXPECT_EQ(full.err(), EINVAL) << full.message();
  // 65500 is 511 cells: the driver keeps 65408; manual mode, thresholds for 30 m.
  big.sizes = {65500, 130560, 0, 0, 0, 0, 0, 0};
  ASSERT_TRUE(dcb->SetBuffer("ens6f0np0", big).ok());
  auto got = dcb->Read("ens6f0np0");
  EXPECT_EQ(got->buffer->sizes, (std::vector<long long>{65408, 130560, 0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(got->manual_buffer);
  EXPECT_EQ(got->xoff_cable_length, 30);
  ASSERT_TRUE(dcb->SetCableLength("ens6f0np0", 40).ok());
  EXPECT_EQ(dcb->Read("ens6f0np0")->xoff_cable_length, 40);
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
  testing::ExpectBackendByRoot([](HostFs& fs) { return NewDcbBackend(fs)->Name(); }, "dcbnl",
                               "capture");
}

}  // namespace
}  // namespace provisioner
