#include "engine/netlink/netlink_socket.h"

#include <linux/netlink.h>
#include <netlink/errno.h>

#include <cerrno>

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

}  // namespace
}  // namespace provisioner
