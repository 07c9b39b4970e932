// dcbnl messages byte for byte (what the kernel's dcb_doit parses), replies
// parsed as net/dcb/dcbnl.c builds them, and the real kernel in a private
// network namespace: a veth has no dcbnl_ops, so the kernel answers
// EOPNOTSUPP, which the backend must report clearly.
#include "modules/roce/dcb_netlink.h"

#include <linux/dcbnl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "modules/roce/roce_backend.h"
#include "test/support/in_child.h"
#include "test/support/netlink_bytes.h"
#include "test/support/netns.h"

namespace provisioner::dcb {
namespace {

using testing::ErrorMessage;
using testing::FirstAttr;
using ::testing::HasSubstr;
using testing::Hdr;
using testing::Nest;
using testing::NetlinkMessage;
using testing::NextAttr;
using testing::Payload;
using testing::PutAttr;

// A message of `type` with dcbmsg{cmd} and the given attribute bytes.
std::vector<uint8_t> Message(uint16_t type, uint8_t cmd, const std::vector<uint8_t>& attrs) {
  dcbmsg d{};
  d.dcb_family = AF_UNSPEC;
  d.cmd = cmd;
  return NetlinkMessage(type, &d, sizeof d, attrs);
}

const dcbmsg* Dcb(const std::vector<uint8_t>& m) {
  return reinterpret_cast<const dcbmsg*>(m.data() + NLMSG_HDRLEN);
}

// The bytes of an ieee_pfc as DCB_CMD_IEEE_GET reads it: 8 PFC classes, the
// enabled bitmap, the delay (cable length) and mbc.
std::vector<uint8_t> PfcBytes(uint8_t pfc_en, uint16_t delay, uint8_t mbc = 0) {
  ieee_pfc read{};
  read.pfc_cap = 8;
  read.pfc_en = pfc_en;
  read.mbc = mbc;
  read.delay = delay;
  const auto* p = reinterpret_cast<const uint8_t*>(&read);
  return std::vector<uint8_t>(p, p + sizeof read);
}

// The ieee_pfc a DCB_CMD_IEEE_SET message `m` sends: DCB_ATTR_IEEE_PFC, of
// the kernel's policy length, first in the DCB_ATTR_IEEE nest after the ifname.
ieee_pfc SentPfc(const std::vector<uint8_t>& m) {
  ieee_pfc sent{};
  const nlattr* ifname = FirstAttr(m, sizeof(dcbmsg));
  EXPECT_EQ(ifname->nla_type, DCB_ATTR_IFNAME);
  const nlattr* ieee = NextAttr(ifname);
  EXPECT_EQ(ieee->nla_type & NLA_TYPE_MASK, DCB_ATTR_IEEE);
  const nlattr* pfc = reinterpret_cast<const nlattr*>(Payload(ieee));
  EXPECT_EQ(pfc->nla_type, DCB_ATTR_IEEE_PFC);
  EXPECT_EQ(pfc->nla_len, NLA_HDRLEN + sizeof(ieee_pfc));  // the kernel's policy length
  if (pfc->nla_len == NLA_HDRLEN + sizeof(ieee_pfc)) std::memcpy(&sent, Payload(pfc), sizeof sent);
  return sent;
}

TEST(DcbMessages, IeeeGetRequest) {
  std::vector<uint8_t> m = BuildIeeeGetRequest(7, "ens6f0np0");
  ASSERT_GE(m.size(), NLMSG_HDRLEN + 4u + NLA_HDRLEN + 10u);
  EXPECT_EQ(Hdr(m)->nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(Hdr(m)->nlmsg_flags, NLM_F_REQUEST);
  EXPECT_EQ(Hdr(m)->nlmsg_seq, 7u);
  EXPECT_EQ(Hdr(m)->nlmsg_len, m.size());
  EXPECT_EQ(Dcb(m)->dcb_family, AF_UNSPEC);
  EXPECT_EQ(Dcb(m)->cmd, DCB_CMD_IEEE_GET);
  const nlattr* a = FirstAttr(m, sizeof(dcbmsg));
  EXPECT_EQ(a->nla_type, DCB_ATTR_IFNAME);
  EXPECT_STREQ(reinterpret_cast<const char*>(Payload(a)), "ens6f0np0");  // NUL-terminated
}

TEST(DcbMessages, PfcSetKeepsTheReadStructAndReplacesTheBitmap) {
  std::vector<uint8_t> m = BuildPfcSetRequest(9, "eth0", PfcBytes(0x10, 0x1234, 1), 0x08);
  EXPECT_EQ(Hdr(m)->nlmsg_type, RTM_SETDCB);
  EXPECT_EQ(Hdr(m)->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(Dcb(m)->cmd, DCB_CMD_IEEE_SET);
  const ieee_pfc sent = SentPfc(m);
  EXPECT_EQ(sent.pfc_en, 0x08);
  EXPECT_EQ(sent.pfc_cap, 8);
  EXPECT_EQ(sent.mbc, 1);
  EXPECT_EQ(sent.delay, 0x1234);
}

TEST(DcbMessages, TrustDscpIsTheDefaultDscpMapInTheAppTable) {
  std::vector<AppEntry> map = DefaultDscpMap();
  ASSERT_EQ(map.size(), 64u);
  EXPECT_EQ(map[26].protocol, 26);
  EXPECT_EQ(map[26].priority, 3);
  EXPECT_EQ(map[63].priority, 7);
  std::vector<uint8_t> m = BuildAppRequest(1, "eth0", true, map);
  EXPECT_EQ(Dcb(m)->cmd, DCB_CMD_IEEE_SET);
  const nlattr* ieee = NextAttr(FirstAttr(m, sizeof(dcbmsg)));
  const nlattr* table = reinterpret_cast<const nlattr*>(Payload(ieee));
  EXPECT_EQ(table->nla_type & NLA_TYPE_MASK, DCB_ATTR_IEEE_APP_TABLE);
  EXPECT_EQ(table->nla_len, NLA_HDRLEN + 64 * NLA_ALIGN(NLA_HDRLEN + sizeof(dcb_app)));
  const nlattr* app = reinterpret_cast<const nlattr*>(Payload(table));
  for (int i = 0; i < 27; ++i, app = NextAttr(app)) {
    ASSERT_EQ(app->nla_type, DCB_ATTR_IEEE_APP);
    dcb_app a{};
    std::memcpy(&a, Payload(app), sizeof a);
    EXPECT_EQ(a.selector, IEEE_8021QAZ_APP_SEL_DSCP);
    EXPECT_EQ(a.protocol, i);
    EXPECT_EQ(a.priority, i >> 3);
  }
  EXPECT_EQ(Dcb(BuildAppRequest(1, "eth0", false, map))->cmd, DCB_CMD_IEEE_DEL);
}

std::vector<uint8_t> GetReply(uint8_t pfc_en, const std::vector<dcb_app>& apps) {
  std::vector<uint8_t> ieee;
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = pfc_en;
  PutAttr(ieee, DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
  std::vector<uint8_t> table;
  for (const dcb_app& a : apps) PutAttr(table, DCB_ATTR_IEEE_APP, &a, sizeof a);
  std::vector<uint8_t> t = Nest(DCB_ATTR_IEEE_APP_TABLE, table);
  ieee.insert(ieee.end(), t.begin(), t.end());
  std::vector<uint8_t> attrs;
  PutAttr(attrs, DCB_ATTR_IFNAME, "eth0", 5);
  std::vector<uint8_t> n = Nest(DCB_ATTR_IEEE, ieee);
  attrs.insert(attrs.end(), n.begin(), n.end());
  return Message(RTM_GETDCB, DCB_CMD_IEEE_GET, attrs);
}

TEST(DcbMessages, GetReplyGivesTrustAndPfc) {
  auto pcp = ParseIeeeGetReply(GetReply(0x00, {}));
  ASSERT_TRUE(pcp.ok()) << pcp.status().message();
  EXPECT_EQ(pcp->ToState().trust, "pcp");
  EXPECT_TRUE(pcp->ToState().pfc.empty());
  // An ethertype entry is not DSCP trust; a DSCP entry is.
  auto dscp = ParseIeeeGetReply(GetReply(
      0x88, {{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3, 0x8915}, {IEEE_8021QAZ_APP_SEL_DSCP, 3, 26}}));
  ASSERT_TRUE(dscp.ok()) << dscp.status().message();
  EXPECT_EQ(dscp->apps.size(), 2u);
  EXPECT_EQ(dscp->ToState().trust, "dscp");
  EXPECT_EQ(dscp->ToState().pfc, (std::vector<int>{3, 7}));
  auto ether = ParseIeeeGetReply(GetReply(0, {{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 3, 0x8915}}));
  EXPECT_EQ(ether->ToState().trust, "pcp");
}

// What dcbnl_ieee_fill sends for mlx5 with port buffer support: ieee_pfc
// with delay = the cable length, and DCB_ATTR_DCB_BUFFER (struct
// dcbnl_buffer) in DCB_ATTR_IEEE.
TEST(DcbMessages, GetReplyGivesCableLengthAndBuffers) {
  std::vector<uint8_t> ieee;
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = 0x08;
  pfc.delay = 30;
  PutAttr(ieee, DCB_ATTR_IEEE_PFC, &pfc, sizeof pfc);
  dcbnl_buffer buf{};
  buf.prio2buffer[3] = 1;
  buf.buffer_size[0] = 130944;
  buf.buffer_size[1] = 98304;
  buf.total_size = 524160;
  PutAttr(ieee, DCB_ATTR_DCB_BUFFER, &buf, sizeof buf);
  std::vector<uint8_t> attrs;
  PutAttr(attrs, DCB_ATTR_IFNAME, "eth0", 5);
  std::vector<uint8_t> n = Nest(DCB_ATTR_IEEE, ieee);
  attrs.insert(attrs.end(), n.begin(), n.end());
  auto got = ParseIeeeGetReply(Message(RTM_GETDCB, DCB_CMD_IEEE_GET, attrs));
  ASSERT_TRUE(got.ok()) << got.status().message();
  DcbState s = got->ToState();
  EXPECT_EQ(s.pfc, (std::vector<int>{3}));
  EXPECT_EQ(s.cable_length, 30);
  ASSERT_TRUE(s.buffer.has_value());
  EXPECT_EQ(s.buffer->prio2buffer, (std::vector<int>{0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(s.buffer->sizes, (std::vector<long long>{130944, 98304, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(s.buffer->total, 524160);

  // A driver without port buffers: delay 0 and no DCB_ATTR_DCB_BUFFER.
  auto plain = ParseIeeeGetReply(GetReply(0x08, {}));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->ToState().cable_length.has_value());
  EXPECT_FALSE(plain->ToState().buffer.has_value());

  // A short struct is an error, not a read past the attribute.
  std::vector<uint8_t> shortie;
  PutAttr(shortie, DCB_ATTR_DCB_BUFFER, &buf, 8);
  std::vector<uint8_t> a2;
  PutAttr(a2, DCB_ATTR_IFNAME, "eth0", 5);
  std::vector<uint8_t> n2 = Nest(DCB_ATTR_IEEE, shortie);
  a2.insert(a2.end(), n2.begin(), n2.end());
  auto bad = ParseIeeeGetReply(Message(RTM_GETDCB, DCB_CMD_IEEE_GET, a2));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("short DCB_ATTR_DCB_BUFFER"));
}

TEST(DcbMessages, CableLengthIsThePfcDelayWithTheBitmapKept) {
  std::vector<uint8_t> m = BuildCableLengthRequest(3, "eth0", PfcBytes(0x08, 7), 100);
  EXPECT_EQ(Hdr(m)->nlmsg_type, RTM_SETDCB);
  EXPECT_EQ(Dcb(m)->cmd, DCB_CMD_IEEE_SET);
  const ieee_pfc sent = SentPfc(m);
  EXPECT_EQ(sent.delay, 100);
  EXPECT_EQ(sent.pfc_en, 0x08);  // PFC stays as it is
  EXPECT_EQ(sent.pfc_cap, 8);
}

TEST(DcbMessages, BufferSetIsADcbnlBufferInTheIeeeNest) {
  DcbBuffer b;
  b.prio2buffer = {0, 0, 0, 1, 0, 0, 0, 0};
  b.sizes = {130944, 98304, 0, 0, 0, 0, 0, 0};
  b.total = 524160;
  std::vector<uint8_t> m = BuildBufferSetRequest(5, "ens6f0np0", b);
  EXPECT_EQ(Hdr(m)->nlmsg_type, RTM_SETDCB);
  EXPECT_EQ(Hdr(m)->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(Hdr(m)->nlmsg_len, m.size());
  EXPECT_EQ(Dcb(m)->cmd, DCB_CMD_IEEE_SET);
  const nlattr* ieee = NextAttr(FirstAttr(m, sizeof(dcbmsg)));
  EXPECT_EQ(ieee->nla_type & NLA_TYPE_MASK, DCB_ATTR_IEEE);
  const nlattr* buf = reinterpret_cast<const nlattr*>(Payload(ieee));
  ASSERT_EQ(buf->nla_type, DCB_ATTR_DCB_BUFFER);
  // dcbnl_ieee_policy: .len = sizeof(struct dcbnl_buffer), 44 bytes.
  ASSERT_EQ(sizeof(dcbnl_buffer), 44u);
  ASSERT_EQ(buf->nla_len, NLA_HDRLEN + sizeof(dcbnl_buffer));
  dcbnl_buffer sent{};
  std::memcpy(&sent, Payload(buf), sizeof sent);
  EXPECT_EQ(sent.prio2buffer[3], 1);
  EXPECT_EQ(sent.prio2buffer[0], 0);
  EXPECT_EQ(sent.buffer_size[0], 130944u);
  EXPECT_EQ(sent.buffer_size[1], 98304u);
  EXPECT_EQ(sent.buffer_size[7], 0u);
  EXPECT_EQ(sent.total_size, 524160u);
}

TEST(DcbMessages, MalformedRepliesAreErrors) {
  std::vector<uint8_t> m = GetReply(0x08, {});
  std::vector<uint8_t> truncated(m.begin(), m.begin() + 10);
  EXPECT_FALSE(ParseIeeeGetReply(truncated).ok());
  std::vector<uint8_t> lying = m;
  lying[0] = 0xff;  // nlmsg_len beyond the buffer
  EXPECT_FALSE(ParseIeeeGetReply(lying).ok());
  EXPECT_FALSE(ParseIeeeGetReply(Message(RTM_NEWLINK, 0, {})).ok());
}

TEST(DcbMessages, SetReplyCarriesTheDriversError) {
  std::vector<uint8_t> attrs;
  uint8_t ok = 0;
  PutAttr(attrs, DCB_ATTR_IEEE, &ok, 1);
  EXPECT_TRUE(ParseSetReply(Message(RTM_SETDCB, DCB_CMD_IEEE_SET, attrs)).ok());
  attrs.clear();
  uint8_t einval = static_cast<uint8_t>(-EINVAL);  // as nla_put_u8(skb, DCB_ATTR_IEEE, err)
  PutAttr(attrs, DCB_ATTR_IEEE, &einval, 1);
  Status s = ParseSetReply(Message(RTM_SETDCB, DCB_CMD_IEEE_SET, attrs));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err(), EINVAL);
  EXPECT_THAT(s.message(), HasSubstr("DCB_CMD_IEEE_SET"));
  EXPECT_FALSE(ParseSetReply(Message(RTM_SETDCB, DCB_CMD_IEEE_SET, {})).ok());
}

TEST(DcbMessages, ErrorReplyIsTheKernelErrno) {
  std::vector<uint8_t> m = ErrorMessage(EOPNOTSUPP);
  auto r = ParseIeeeGetReply(m);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().err(), EOPNOTSUPP);
}

// DCBX: GDCBX carries only the name; SDCBX the u8 DCB_ATTR_DCBX the kernel's
// policy wants (dcbnl_rtnl_policy: NLA_U8), HOST|VER_IEEE for host mode.
TEST(DcbMessages, DcbxRequests) {
  std::vector<uint8_t> get = BuildGetDcbxRequest(3, "ens6f0np0");
  EXPECT_EQ(Hdr(get)->nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(Hdr(get)->nlmsg_flags, NLM_F_REQUEST);
  EXPECT_EQ(Dcb(get)->cmd, DCB_CMD_GDCBX);
  EXPECT_EQ(FirstAttr(get, sizeof(dcbmsg))->nla_type, DCB_ATTR_IFNAME);
  EXPECT_EQ(Hdr(get)->nlmsg_len,
            NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(dcbmsg)) + NLA_ALIGN(NLA_HDRLEN + 10));

  std::vector<uint8_t> set = BuildSetDcbxRequest(4, "ens6f0np0", DcbxModeBits(kDcbxHost));
  EXPECT_EQ(Hdr(set)->nlmsg_type, RTM_SETDCB);
  EXPECT_EQ(Hdr(set)->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(Dcb(set)->cmd, DCB_CMD_SDCBX);
  const nlattr* a = NextAttr(FirstAttr(set, sizeof(dcbmsg)));
  EXPECT_EQ(a->nla_type, DCB_ATTR_DCBX);
  EXPECT_EQ(a->nla_len, NLA_HDRLEN + 1);
  EXPECT_EQ(Payload(a)[0], DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE);
  EXPECT_EQ(DcbxModeBits(kDcbxFirmware), 0);
}

// Replies as dcbnl_getdcbx/dcbnl_setdcbx build them: a u8 DCB_ATTR_DCBX
// holding getdcbx()'s capability bits, or setdcbx()'s u8 result.
TEST(DcbMessages, DcbxReplies) {
  std::vector<uint8_t> attrs;
  uint8_t cap = DCB_CAP_DCBX_HOST | DCB_CAP_DCBX_VER_IEEE | DCB_CAP_DCBX_VER_CEE;
  PutAttr(attrs, DCB_ATTR_DCBX, &cap, 1);
  auto got = ParseGetDcbxReply(Message(RTM_GETDCB, DCB_CMD_GDCBX, attrs));
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ(DcbxModeName(*got), kDcbxHost);
  EXPECT_EQ(DcbxModeName(DCB_CAP_DCBX_VER_IEEE | DCB_CAP_DCBX_VER_CEE), kDcbxFirmware);
  EXPECT_EQ(DcbxModeName(DCB_CAP_DCBX_LLD_MANAGED | DCB_CAP_DCBX_VER_IEEE), kDcbxLld);
  EXPECT_FALSE(ParseGetDcbxReply(Message(RTM_GETDCB, DCB_CMD_GDCBX, {})).ok());

  attrs.clear();
  uint8_t ok = 0;
  PutAttr(attrs, DCB_ATTR_DCBX, &ok, 1);
  EXPECT_TRUE(ParseSetDcbxReply(Message(RTM_SETDCB, DCB_CMD_SDCBX, attrs)).ok());
  attrs.clear();
  uint8_t refused = 1;  // mlx5e_dcbnl_setdcbx's "return 1"
  PutAttr(attrs, DCB_ATTR_DCBX, &refused, 1);
  Status s = ParseSetDcbxReply(Message(RTM_SETDCB, DCB_CMD_SDCBX, attrs));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("refused the DCBX mode"));
}

// The DSCP entries of the APP table become the map (trust dscp); a later
// entry for the same DSCP wins.
TEST(DcbMessages, AppTableGivesTheDscpMap) {
  IeeeState s;
  s.apps = {{kSelectorDscp, 3, 26}, {kSelectorDscp, 6, 48}, {1, 4, 0x8915}, {kSelectorDscp, 5, 26}};
  DcbState st = s.ToState();
  EXPECT_EQ(st.trust, kTrustDscp);
  EXPECT_EQ(st.dscp_map, (std::map<int, int>{{26, 5}, {48, 6}}));
}

// True when this process runs in the initial user namespace (the identity
// uid map), where root holds CAP_NET_ADMIN as netlink_capable checks it.
bool InitialUserNamespace() {
  FILE* f = std::fopen("/proc/self/uid_map", "r");
  if (f == nullptr) return false;
  unsigned long inside = 1, outside = 1, count = 0;
  const int n = std::fscanf(f, "%lu %lu %lu", &inside, &outside, &count);
  std::fclose(f);
  return n == 3 && inside == 0 && outside == 0 && count == 4294967295UL;
}

// Sends one request on a plain NETLINK_ROUTE socket and parses the answer
// as a SET reply.
Status SendRaw(const std::vector<uint8_t>& msg) {
  int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return ErrnoToStatus(errno, "socket");
  sockaddr_nl kernel{};
  kernel.nl_family = AF_NETLINK;
  if (sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) <
      0) {
    close(fd);
    return ErrnoToStatus(errno, "sendto");
  }
  std::vector<uint8_t> buf(8192);
  const ssize_t n = recv(fd, buf.data(), buf.size(), 0);
  close(fd);
  if (n < 0) return ErrnoToStatus(errno, "recv");
  buf.resize(static_cast<size_t>(n));
  return ParseSetReply(buf);
}

// The real kernel in a fresh network namespace with a veth pair: dcb_doit
// finds the netdev but no dcbnl_ops and answers EOPNOTSUPP; a missing netdev
// is ENODEV. Run in a child so the test process keeps its namespace.
TEST(DcbNetlink, RealKernelRefusesDcbOnVeth) {
  const std::string out = testing::RunInTestNetns(/*with_macvlan=*/false, []() -> std::string {
    auto dcb = NewNetlinkDcbBackend();
    auto got = dcb->Read("veth-a");
    Status pfc = dcb->SetPfc("veth-a", {3});
    Status trust = dcb->SetTrust("veth-a", "dscp");
    auto none = dcb->Read("nosuch0");
    Status dcbx = dcb->SetDcbx("veth-a", kDcbxHost);
    Status map = dcb->SetDscpMap("veth-a", {{26, 3}});
    Status cable = dcb->SetCableLength("veth-a", 30);
    Status buffer = dcb->SetBuffer("veth-a", DcbBuffer());
    // The SET messages themselves: the kernel parses them against its
    // policy (a malformed one is EINVAL) before it looks for dcbnl_ops.
    std::string raw, raw_messages;
    for (const auto& msg : {BuildPfcSetRequest(1, "veth-a", {}, 0x08),
                            BuildAppRequest(2, "veth-a", true, DefaultDscpMap()),
                            BuildAppRequest(3, "veth-a", false, DefaultDscpMap()),
                            BuildSetDcbxRequest(4, "veth-a", DcbxModeBits(kDcbxHost)),
                            BuildCableLengthRequest(5, "veth-a", {}, 30),
                            BuildBufferSetRequest(6, "veth-a", DcbBuffer())}) {
      Status st = SendRaw(msg);
      raw += std::to_string(st.err()) + ",";
      if (!st.ok()) raw_messages += st.message() + "; ";
    }
    return "READ " + std::to_string(got.ok() ? 0 : got.status().err()) + " " +
           (got.ok() ? "" : got.status().message()) + "\nPFC " + std::to_string(pfc.err()) + " " +
           pfc.message() + "\nTRUST " + std::to_string(trust.err()) + "\nNONE " +
           std::to_string(none.ok() ? 0 : none.status().err()) + " " + "\nDCBX " +
           std::to_string(dcbx.err()) + "\nMAP " + std::to_string(map.err()) + "\nCABLE " +
           std::to_string(cable.err()) + " " + cable.message() + "\nBUFFER " +
           std::to_string(buffer.err()) + "\n" + (none.ok() ? "" : none.status().message()) +
           "\nRAW " + raw + "\n" + raw_messages;
  });
  if (out.rfind("SKIP", 0) == 0) GTEST_SKIP() << out;
  const std::string eop = std::to_string(EOPNOTSUPP);
  EXPECT_THAT(out, HasSubstr("READ " + eop + " dcbnl DCB_CMD_IEEE_GET veth-a"));
  EXPECT_THAT(out, HasSubstr("has no DCB support"));
  EXPECT_THAT(out, HasSubstr("PFC " + eop));  // the GET before the SET already fails
  EXPECT_THAT(out, HasSubstr("TRUST " + eop));
  EXPECT_THAT(out, HasSubstr("NONE " + std::to_string(ENODEV) + " "));
  EXPECT_THAT(out, HasSubstr("no such netdev"));
  // RTM_SETDCB needs CAP_NET_ADMIN in the initial user namespace
  // (netlink_capable), checked before anything else: in a sandbox's user
  // namespace the kernel says EPERM; as real root it parses each message
  // against its policy (malformed: EINVAL) and then finds no dcbnl_ops.
  const std::string want = InitialUserNamespace() ? eop : std::to_string(EPERM);
  EXPECT_THAT(out, HasSubstr("RAW " + want + "," + want + "," + want + "," + want + "," + want +
                             "," + want + ","));
  EXPECT_THAT(out, HasSubstr("CABLE " + eop + " dcbnl DCB_CMD_IEEE_GET veth-a"));  // GET first
  EXPECT_THAT(out, HasSubstr("BUFFER " + want + "\n"));                            // sent as is
  EXPECT_THAT(out, HasSubstr("DCBX " + want + "\n"));  // SDCBX is sent as is
  EXPECT_THAT(out, HasSubstr("MAP " + eop + "\n"));    // the GET before it fails
}

}  // namespace
}  // namespace provisioner::dcb
