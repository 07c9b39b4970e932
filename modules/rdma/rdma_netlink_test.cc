#include "modules/rdma/rdma_netlink.h"

#include <linux/netlink.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test/support/in_child.h"
#include "test/support/netlink_bytes.h"

namespace provisioner::rdma {
namespace {

nlmsghdr Header(const std::vector<uint8_t>& m) {
  nlmsghdr h{};
  std::memcpy(&h, m.data(), sizeof h);
  return h;
}

// A reply as the kernel builds it: nlmsghdr, then attributes (no family header).
std::vector<uint8_t> Reply(uint16_t type, std::vector<std::pair<uint16_t, uint8_t>> u8_attrs) {
  std::vector<uint8_t> m(NLMSG_HDRLEN, 0);
  for (auto [t, v] : u8_attrs) {
    nlattr a{};
    a.nla_len = NLA_HDRLEN + 1;
    a.nla_type = t;
    size_t at = m.size();
    m.resize(at + NLA_ALIGN(a.nla_len), 0);
    std::memcpy(m.data() + at, &a, sizeof a);
    m[at + NLA_HDRLEN] = v;
  }
  nlmsghdr h{};
  h.nlmsg_len = static_cast<uint32_t>(m.size());
  h.nlmsg_type = type;
  std::memcpy(m.data(), &h, sizeof h);
  return m;
}

TEST(RdmaNetlink, Constants) {
  EXPECT_EQ(NldevMsgType(kNldevCmdSysGet), 0x1406);
  EXPECT_EQ(NldevMsgType(kNldevCmdSysSet), 0x1407);
}

TEST(RdmaNetlink, SysGetRequest) {
  std::vector<uint8_t> m = BuildSysGetRequest(42);
  ASSERT_EQ(m.size(), NLMSG_HDRLEN);  // no attributes
  nlmsghdr h = Header(m);
  EXPECT_EQ(h.nlmsg_len, m.size());
  EXPECT_EQ(h.nlmsg_type, 0x1406);
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(h.nlmsg_seq, 42u);
}

TEST(RdmaNetlink, SysSetRequestCarriesTheModeAttribute) {
  for (auto [mode, value] : {std::pair<std::string, uint8_t>{"exclusive", 0}, {"shared", 1}}) {
    std::vector<uint8_t> m = BuildSysSetRequest(7, mode);
    ASSERT_EQ(m.size(), NLMSG_HDRLEN + NLA_ALIGN(NLA_HDRLEN + 1)) << mode;
    nlmsghdr h = Header(m);
    EXPECT_EQ(h.nlmsg_type, 0x1407);
    EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
    nlattr a{};
    std::memcpy(&a, m.data() + NLMSG_HDRLEN, sizeof a);
    EXPECT_EQ(a.nla_type, kNldevSysAttrNetnsMode);
    EXPECT_EQ(a.nla_len, NLA_HDRLEN + 1);
    EXPECT_EQ(m[NLMSG_HDRLEN + NLA_HDRLEN], value) << mode;
  }
  EXPECT_TRUE(BuildSysSetRequest(1, "bogus").empty());
}

TEST(RdmaNetlink, ParseReplies) {
  EXPECT_EQ(ParseSysGetReply(Reply(0x1406, {{kNldevSysAttrNetnsMode, 1}})).value(), "shared");
  EXPECT_EQ(ParseSysGetReply(Reply(0x1406, {{93, 1}, {kNldevSysAttrNetnsMode, 0}})).value(),
            "exclusive");
  auto missing = ParseSysGetReply(Reply(0x1406, {{93, 1}}));
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), ::testing::HasSubstr("NETNS_MODE"));
  auto wrong = ParseSysGetReply(Reply(0x1405, {}));
  EXPECT_FALSE(wrong.ok());
  std::vector<uint8_t> shorty = Reply(0x1406, {{kNldevSysAttrNetnsMode, 1}});
  shorty.resize(10);
  EXPECT_FALSE(ParseSysGetReply(shorty).ok());
  std::vector<uint8_t> lying = Reply(0x1406, {{kNldevSysAttrNetnsMode, 1}});
  lying[0] = 200;  // nlmsg_len beyond the buffer
  EXPECT_FALSE(ParseSysGetReply(lying).ok());
}

TEST(RdmaNetlink, ErrorReplyIsTheKernelErrno) {
  std::vector<uint8_t> m = provisioner::testing::ErrorMessage(EBUSY);
  auto r = ParseSysGetReply(m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().err(), EBUSY);
  EXPECT_THAT(r.status().message(), ::testing::HasSubstr("EBUSY"));
}

// The real kernel, in a fresh network namespace (what a container sees).
// These machines have no RDMA: the client must say so clearly, not hang or
// crash. A kernel with ib_core would answer with a mode instead.
TEST(RdmaNetlink, RealKernelInNetworkNamespace) {
  const std::string out = provisioner::testing::RunInChild([&]() -> std::string {
    std::string out;
    if (unshare(CLONE_NEWNET) != 0) {
      out = "SKIP unshare(CLONE_NEWNET): " + std::string(strerror(errno));
    } else {
      auto client = NewNetlinkNetnsModeClient();
      auto got = client->Get();
      Status set = client->Set("exclusive");
      out = got.ok() ? "MODE " + *got
                     : "GET " + std::to_string(got.status().err()) + " " + got.status().message();
      out += "\nSET " + std::to_string(set.err()) + " " + set.message();
    }
    return out;
  });
  if (out.rfind("SKIP", 0) == 0) GTEST_SKIP() << out;
  if (out.rfind("MODE", 0) == 0) {
    // A kernel with RDMA: the mode reads, and a set in a non-initial
    // namespace is refused (EBUSY: this namespace exists) or not permitted.
    EXPECT_THAT(out, ::testing::AnyOf(::testing::HasSubstr("MODE shared"),
                                      ::testing::HasSubstr("MODE exclusive")));
    return;
  }
  EXPECT_THAT(out, ::testing::HasSubstr("GET " + std::to_string(EPROTONOSUPPORT)));
  EXPECT_THAT(out, ::testing::HasSubstr("EPROTONOSUPPORT"));
  EXPECT_THAT(out, ::testing::HasSubstr("no RDMA netlink in this kernel (ib_core not loaded)"));
  EXPECT_THAT(out, ::testing::HasSubstr("SET " + std::to_string(EPROTONOSUPPORT)));
}

}  // namespace
}  // namespace provisioner::rdma
