// ethtool netlink pause messages byte for byte (what the kernel's
// genetlink/ethnl parsers read: include/uapi/linux/ethtool_netlink.h,
// net/ethtool/pause.c), replies parsed as the kernel builds them, the
// capture format, and the real kernel in a private network namespace: the
// "ethtool" family resolves, a veth has no get_pauseparam (EOPNOTSUPP), a
// missing netdev is ENODEV.
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/roce/pause_backend.h"
#include "test/support/in_child.h"
#include "test/support/netlink_bytes.h"
#include "test/support/netns.h"

namespace provisioner {
namespace {

using testing::FirstAttr;
using ::testing::HasSubstr;
using testing::Hdr;
using testing::NetlinkMessage;
using testing::NextAttr;
using testing::Payload;
using testing::PutAttr;

std::vector<uint8_t> GenlMessage(uint16_t type, uint8_t cmd, const std::vector<uint8_t>& attrs) {
  genlmsghdr g{};
  g.cmd = cmd;
  g.version = 1;
  return NetlinkMessage(type, &g, sizeof g, attrs);
}

const genlmsghdr* Genl(const std::vector<uint8_t>& m) {
  return reinterpret_cast<const genlmsghdr*>(m.data() + NLMSG_HDRLEN);
}

TEST(PauseMessages, FamilyRequest) {
  std::vector<uint8_t> m = ethnl::BuildFamilyRequest(1);
  EXPECT_EQ(Hdr(m)->nlmsg_type, GENL_ID_CTRL);
  EXPECT_EQ(Genl(m)->cmd, CTRL_CMD_GETFAMILY);
  const nlattr* a = FirstAttr(m, GENL_HDRLEN);
  EXPECT_EQ(a->nla_type, CTRL_ATTR_FAMILY_NAME);
  EXPECT_STREQ(reinterpret_cast<const char*>(Payload(a)), "ethtool");
}

TEST(PauseMessages, GetAndSet) {
  std::vector<uint8_t> get = ethnl::BuildPauseGet(27, 5, "ens6f0np0");
  EXPECT_EQ(Hdr(get)->nlmsg_type, 27);
  EXPECT_EQ(Hdr(get)->nlmsg_flags, NLM_F_REQUEST);
  EXPECT_EQ(Hdr(get)->nlmsg_seq, 5u);
  EXPECT_EQ(Hdr(get)->nlmsg_len, get.size());
  EXPECT_EQ(Genl(get)->cmd, ETHTOOL_MSG_PAUSE_GET);
  EXPECT_EQ(Genl(get)->version, ETHTOOL_GENL_VERSION);
  const nlattr* hdr = FirstAttr(get, GENL_HDRLEN);
  EXPECT_EQ(hdr->nla_type & NLA_TYPE_MASK, ETHTOOL_A_PAUSE_HEADER);
  const auto* name = reinterpret_cast<const nlattr*>(Payload(hdr));
  EXPECT_EQ(name->nla_type, ETHTOOL_A_HEADER_DEV_NAME);
  EXPECT_STREQ(reinterpret_cast<const char*>(Payload(name)), "ens6f0np0");
  // Nothing after the header.
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(NextAttr(hdr)), get.data() + get.size());

  std::vector<uint8_t> set = ethnl::BuildPauseSet(27, 6, "ens6f0np0", {false, true});
  EXPECT_EQ(Hdr(set)->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(Genl(set)->cmd, ETHTOOL_MSG_PAUSE_SET);
  const nlattr* rx = NextAttr(FirstAttr(set, GENL_HDRLEN));
  const nlattr* tx = NextAttr(rx);
  EXPECT_EQ(rx->nla_type, ETHTOOL_A_PAUSE_RX);
  EXPECT_EQ(rx->nla_len, NLA_HDRLEN + 1);
  EXPECT_EQ(Payload(rx)[0], 0);
  EXPECT_EQ(tx->nla_type, ETHTOOL_A_PAUSE_TX);
  EXPECT_EQ(Payload(tx)[0], 1);
  // No ETHTOOL_A_PAUSE_AUTONEG: mlx5 refuses autoneg on, and an absent
  // attribute leaves the current value.
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(NextAttr(tx)), set.data() + set.size());
}

TEST(PauseMessages, Replies) {
  std::vector<uint8_t> attrs;
  uint16_t id = 21;
  PutAttr(attrs, CTRL_ATTR_FAMILY_ID, &id, sizeof id);
  auto family = ethnl::ParseFamilyReply(GenlMessage(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, attrs));
  ASSERT_TRUE(family.ok()) << family.status().message();
  EXPECT_EQ(*family, 21);

  attrs.clear();
  uint8_t autoneg = 0, rx = 1, tx = 0;
  PutAttr(attrs, ETHTOOL_A_PAUSE_AUTONEG, &autoneg, 1);
  PutAttr(attrs, ETHTOOL_A_PAUSE_RX, &rx, 1);
  PutAttr(attrs, ETHTOOL_A_PAUSE_TX, &tx, 1);
  auto got = ethnl::ParsePauseGetReply(GenlMessage(21, ETHTOOL_MSG_PAUSE_GET_REPLY, attrs));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_TRUE(got->rx);
  EXPECT_FALSE(got->tx);
  // Without RX/TX, another command, truncated: errors.
  EXPECT_FALSE(ethnl::ParsePauseGetReply(GenlMessage(21, ETHTOOL_MSG_PAUSE_GET_REPLY, {})).ok());
  EXPECT_FALSE(ethnl::ParsePauseGetReply(GenlMessage(21, ETHTOOL_MSG_PAUSE_NTF + 1, attrs)).ok());
  std::vector<uint8_t> cut = GenlMessage(21, ETHTOOL_MSG_PAUSE_GET_REPLY, attrs);
  cut.resize(NLMSG_HDRLEN + 2);
  EXPECT_FALSE(ethnl::ParsePauseGetReply(cut).ok());
}

TEST(PauseCapture, RoundTripAndRefusals) {
  EXPECT_EQ(RenderPauseCapture({true, false}), "{\"rx\":true,\"tx\":false}\n");
  auto p = ParsePauseCapture("{\"rx\":false,\"tx\":true}\n");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->rx);
  EXPECT_TRUE(p->tx);
  for (const char* bad : {"", "{}", "{\"rx\":1,\"tx\":0}", "{\"rx\":true}",
                          "{\"rx\":true,\"tx\":true,\"autoneg\":false}", "[true,true]"}) {
    EXPECT_FALSE(ParsePauseCapture(bad).ok()) << bad;
  }
}

// The real kernel: run in a child so the test process keeps its namespace.
TEST(PauseNetlink, RealKernelInANetns) {
  const std::string out = testing::RunInTestNetns(/*with_macvlan=*/false, []() -> std::string {
    auto b = NewNetlinkPauseBackend();
    auto veth = b->Read("veth-a");
    auto none = b->Read("nosuch0");
    Status set = b->Set("veth-a", {false, false});
    return "VETH " + std::to_string(veth.ok() ? 0 : veth.status().err()) + " " +
           (veth.ok() ? "" : veth.status().message()) + "\nNONE " +
           std::to_string(none.ok() ? 0 : none.status().err()) + " " +
           (none.ok() ? "" : none.status().message()) + "\nSET " + std::to_string(set.err()) + " " +
           set.message() + "\n";
  });
  if (out.rfind("SKIP", 0) == 0) GTEST_SKIP() << out;
  // The family resolved and the GET was parsed (no EINVAL): veth has no
  // get_pauseparam, so pause_prepare_data answers EOPNOTSUPP.
  EXPECT_THAT(out, HasSubstr("VETH " + std::to_string(EOPNOTSUPP) +
                             " ethtool netlink ETHTOOL_MSG_PAUSE_GET veth-a"));
  EXPECT_THAT(out, HasSubstr("has no pause frame settings"));
  EXPECT_THAT(out, HasSubstr("NONE " + std::to_string(ENODEV) + " "));
  EXPECT_THAT(out, HasSubstr("no such netdev"));
  // SET: EPERM without CAP_NET_ADMIN in the initial user namespace
  // (GENL_ADMIN_PERM), else EOPNOTSUPP (no set_pauseparam).
  EXPECT_THAT(out, ::testing::AnyOf(HasSubstr("SET " + std::to_string(EOPNOTSUPP) + " "),
                                    HasSubstr("SET " + std::to_string(EPERM) + " ")));
}

}  // namespace
}  // namespace provisioner
