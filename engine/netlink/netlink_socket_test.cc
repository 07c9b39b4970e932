#include "engine/netlink/netlink_socket.h"

#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <cerrno>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

TEST(NetlinkSocket, LibnlCodesMapBackToErrno) {
  EXPECT_EQ(ErrnoOfNle(-NLE_BUSY), EBUSY);
  EXPECT_EQ(ErrnoOfNle(NLE_OPNOTSUPP), EOPNOTSUPP);
  EXPECT_EQ(ErrnoOfNle(-NLE_OBJ_NOTFOUND), ENODEV);
  EXPECT_EQ(ErrnoOfNle(-NLE_PROTO_MISMATCH), EPROTONOSUPPORT);
  EXPECT_EQ(ErrnoOfNle(-NLE_MSGTYPE_NOSUPPORT), EIO);
  Status s = NlError(-NLE_BUSY, "netlink RTM_SETLINK eth0 mtu 9000");
  EXPECT_EQ(s.err(), EBUSY);
  EXPECT_NE(s.message().find("libnl: "), std::string::npos) << s.message();
}

TEST(NetlinkSocket, ConnectsToRouteNetlink) {
  auto sk = ConnectNetlink(NETLINK_ROUTE, "NETLINK_ROUTE");
  ASSERT_TRUE(sk.ok()) << sk.status().message();
  EXPECT_NE(sk->get(), nullptr);
}

TEST(NetlinkSocket, UnknownFamilyIsProtocolNotSupported) {
  auto sk = ConnectNetlink(31, "family 31");  // MAX_LINKS - 1: no family registered
  ASSERT_FALSE(sk.ok());
  EXPECT_EQ(sk.status().err(), EPROTONOSUPPORT) << sk.status().message();
}

// The kernel's answer to RTM_GETLINK by name (linux/rtnetlink.h), with ACK
// asked: a reply for "lo" (ifindex 1 in every network namespace) and the ACK;
// an NLMSG_ERROR for a name no link has.
NlMsg GetLinkRequest(const char* name) {
  NlMsg m(nlmsg_alloc_simple(RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK));
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  if (nlmsg_append(m.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO) < 0 ||
      nla_put_string(m.get(), IFLA_IFNAME, name) < 0) {
    m.reset();
  }
  return m;
}

TEST(NetlinkSocket, TransactGivesEachReplyThenTheAck) {
  NlMsg m = GetLinkRequest("lo");
  std::vector<int> indexes;
  Status s = NetlinkTransact(
      NETLINK_ROUTE, "NETLINK_ROUTE", m.get(), "RTM_GETLINK lo", [&](const nlmsghdr* h) {
        if (h->nlmsg_type != RTM_NEWLINK) return;
        const auto* ifi = static_cast<const ifinfomsg*>(nlmsg_data(const_cast<nlmsghdr*>(h)));
        indexes.push_back(ifi->ifi_index);
      });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(indexes, std::vector<int>{1});
}

TEST(NetlinkSocket, TransactReturnsTheKernelsErrno) {
  NlMsg m = GetLinkRequest("no-such-link0");
  int replies = 0;
  Status s = NetlinkTransact(NETLINK_ROUTE, "NETLINK_ROUTE", m.get(), "RTM_GETLINK no-such-link0",
                             [&](const nlmsghdr*) { ++replies; });
  EXPECT_EQ(s.err(), ENODEV) << s.message();
  EXPECT_EQ(s.message().rfind("RTM_GETLINK no-such-link0", 0), 0u) << s.message();
  EXPECT_EQ(replies, 0);
  // No message (a failed build): said, nothing sent.
  EXPECT_EQ(
      NetlinkTransact(NETLINK_ROUTE, "NETLINK_ROUTE", nullptr, "x", [](const nlmsghdr*) {}).code(),
      StatusCode::kInternal);
}

// A request answered by its reply alone (no NLM_F_ACK: dcbnl's GETs, a
// generic netlink GET): the exchange ends when the caller's reply_complete
// says so, not after a receive timeout waiting for an ACK.
TEST(NetlinkSocket, TransactEndsAtACompleteReplyWithoutAck) {
  NlMsg m(nlmsg_alloc_simple(RTM_GETLINK, NLM_F_REQUEST));
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ASSERT_GE(nlmsg_append(m.get(), &ifi, sizeof ifi, NLMSG_ALIGNTO), 0);
  ASSERT_GE(nla_put_string(m.get(), IFLA_IFNAME, "lo"), 0);
  std::vector<int> indexes;
  Status s = NetlinkTransact(
      NETLINK_ROUTE, "NETLINK_ROUTE", m.get(), "RTM_GETLINK lo",
      [&](const nlmsghdr* h) {
        if (h->nlmsg_type != RTM_NEWLINK) return;
        const auto* i = static_cast<const ifinfomsg*>(nlmsg_data(const_cast<nlmsghdr*>(h)));
        indexes.push_back(i->ifi_index);
      },
      4, [&] { return !indexes.empty(); });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(indexes, std::vector<int>{1});
}

TEST(NetlinkSocket, GenlFamilyIdAsksTheController) {
  // The controller's own family is in every kernel with generic netlink.
  auto ctrl = GenlFamilyId("nlctrl");
  ASSERT_TRUE(ctrl.ok()) << ctrl.status().message();
  EXPECT_EQ(*ctrl, GENL_ID_CTRL);
  auto none = GenlFamilyId("no-such-family");
  EXPECT_EQ(none.status().err(), ENOENT) << none.status().message();
  EXPECT_EQ(none.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(none.status().message().find("genetlink CTRL_CMD_GETFAMILY no-such-family"),
            std::string::npos)
      << none.status().message();
}

}  // namespace
}  // namespace provisioner
