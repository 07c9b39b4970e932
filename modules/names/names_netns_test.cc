// The names module's live backend against the real kernel: veth links
// renamed over rtnetlink in a private network namespace (unshare; root),
// and the RDMA netlink messages checked against the kernel's uapi
// (<rdma/rdma_netlink.h>, <linux/netlink.h>): this kernel has no RDMA.
#include <linux/netlink.h>
#include <net/if.h>
#include <rdma/rdma_netlink.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "modules/names/names_backend.h"
#include "test/support/netns.h"

namespace provisioner {
namespace {

[[maybe_unused]] ::testing::Environment* const kNetns =
    ::testing::AddGlobalTestEnvironment(new testing::NetnsEnvironment(/*with_macvlan=*/false));

// IFF_UP of a link by SIOCGIFFLAGS (this process's netns; the /sys mounted
// is the initial namespace's).
bool IsUp(const char* ifname) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ifreq req{};
  std::strncpy(req.ifr_name, ifname, IFNAMSIZ - 1);
  const bool ok = fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &req) == 0;
  if (fd >= 0) close(fd);
  return ok && (req.ifr_flags & IFF_UP) != 0;
}

void SetLinkUp(const char* ifname, bool up) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  ifreq req{};
  std::strncpy(req.ifr_name, ifname, IFNAMSIZ - 1);
  ASSERT_EQ(ioctl(fd, SIOCGIFFLAGS, &req), 0) << ifname;
  if (up) {
    req.ifr_flags |= IFF_UP;
  } else {
    req.ifr_flags &= ~IFF_UP;
  }
  ASSERT_EQ(ioctl(fd, SIOCSIFFLAGS, &req), 0) << ifname;
  close(fd);
}

TEST(NamesNetns, AnUpLinkIsRenamedAndBackUpThenRenamedBack) {
  SetLinkUp("veth-a", true);
  const unsigned index = if_nametoindex("veth-a");
  ASSERT_NE(index, 0u);
  auto live = NewNetlinkNamesBackend();
  Status s = live->RenameNetdev("veth-a", "rail1");
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(if_nametoindex("veth-a"), 0u);
  EXPECT_EQ(if_nametoindex("rail1"), index);  // the same link, renamed
  EXPECT_TRUE(IsUp("rail1"));
  // The inverse: the same call with the names swapped.
  ASSERT_TRUE(live->RenameNetdev("rail1", "veth-a").ok());
  EXPECT_EQ(if_nametoindex("veth-a"), index);
  EXPECT_TRUE(IsUp("veth-a"));
}

TEST(NamesNetns, ADownLinkStaysDown) {
  SetLinkUp("veth-b", false);
  auto live = NewNetlinkNamesBackend();
  ASSERT_TRUE(live->RenameNetdev("veth-b", "rail2").ok());
  EXPECT_FALSE(IsUp("rail2"));
  ASSERT_TRUE(live->RenameNetdev("rail2", "veth-b").ok());
}

TEST(NamesNetns, TheKernelsRefusalsComeBackWithTheirErrnoAndTheLinkUp) {
  SetLinkUp("veth-a", true);
  auto live = NewNetlinkNamesBackend();
  Status s = live->RenameNetdev("veth-a", "veth-b");  // in use
  EXPECT_EQ(s.err(), EEXIST) << s.message();
  EXPECT_TRUE(IsUp("veth-a"));              // brought back up under its old name
  s = live->RenameNetdev("veth-a", "a:b");  // dev_valid_name
  EXPECT_EQ(s.err(), EINVAL) << s.message();
  EXPECT_TRUE(IsUp("veth-a"));
  s = live->RenameNetdev("nosuch0", "rail3");
  EXPECT_EQ(s.err(), ENODEV) << s.message();
}

TEST(NamesNetns, NoRdmaNetlinkInThisKernelIsSaid) {
  auto live = NewNetlinkNamesBackend();
  Status s = live->RenameRdma("mlx5_0", "mlx5_rail1");
  EXPECT_FALSE(s.ok());
  // EPROTONOSUPPORT (no ib_core) or, with ib_core and no such device, ENODEV.
  EXPECT_TRUE(s.err() == EPROTONOSUPPORT || s.err() == ENODEV) << s.message();
}

// nlattr walking over the wire bytes with the uapi structures.
struct Attr {
  uint16_t type;
  std::vector<uint8_t> payload;
};
std::vector<Attr> Attrs(const std::vector<uint8_t>& msg) {
  std::vector<Attr> out;
  size_t at = NLMSG_HDRLEN;
  while (at + NLA_HDRLEN <= msg.size()) {
    nlattr a;
    std::memcpy(&a, msg.data() + at, sizeof a);
    if (a.nla_len < NLA_HDRLEN || at + a.nla_len > msg.size()) break;
    out.push_back({a.nla_type, std::vector<uint8_t>(msg.begin() + at + NLA_HDRLEN,
                                                    msg.begin() + at + a.nla_len)});
    at += NLA_ALIGN(a.nla_len);
  }
  return out;
}

TEST(NamesRdmaMessages, RenameIsNldevSetWithIndexAndNulTerminatedName) {
  std::vector<uint8_t> m = BuildRdmaRenameRequest(7, 3, "mlx5_rail1");
  ASSERT_GE(m.size(), sizeof(nlmsghdr));
  nlmsghdr h;
  std::memcpy(&h, m.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_len, m.size());
  EXPECT_EQ(h.nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_SET));
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK);
  EXPECT_EQ(h.nlmsg_seq, 7u);
  auto attrs = Attrs(m);
  ASSERT_EQ(attrs.size(), 2u);
  EXPECT_EQ(attrs[0].type, RDMA_NLDEV_ATTR_DEV_INDEX);
  ASSERT_EQ(attrs[0].payload.size(), 4u);  // u32
  uint32_t index = 0;
  std::memcpy(&index, attrs[0].payload.data(), 4);
  EXPECT_EQ(index, 3u);
  EXPECT_EQ(attrs[1].type, RDMA_NLDEV_ATTR_DEV_NAME);
  // NLA_NUL_STRING in nldev_policy: the name and its NUL.
  EXPECT_EQ(std::string(attrs[1].payload.begin(), attrs[1].payload.end()),
            std::string("mlx5_rail1\0", 11));
}

TEST(NamesRdmaMessages, TheDumpAndItsRepliesAndErrors) {
  std::vector<uint8_t> d = BuildRdmaDevDumpRequest(9);
  nlmsghdr h;
  std::memcpy(&h, d.data(), sizeof h);
  EXPECT_EQ(h.nlmsg_type, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET));
  EXPECT_EQ(h.nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_TRUE(Attrs(d).empty());

  // A reply as nldev_get_dumpit fills it (fill_dev_info: index, name first).
  std::vector<uint8_t> reply(NLMSG_HDRLEN);
  auto put = [&](uint16_t type, const void* data, size_t len) {
    nlattr a{static_cast<uint16_t>(NLA_HDRLEN + len), type};
    const size_t at = reply.size();
    reply.resize(at + NLA_ALIGN(NLA_HDRLEN + len), 0);
    std::memcpy(reply.data() + at, &a, sizeof a);
    std::memcpy(reply.data() + at + NLA_HDRLEN, data, len);
  };
  const uint32_t index = 5;
  put(RDMA_NLDEV_ATTR_DEV_INDEX, &index, 4);
  put(RDMA_NLDEV_ATTR_DEV_NAME, "mlx5_4", 7);
  const uint64_t guid = 0x1122334455667788ULL;
  put(RDMA_NLDEV_ATTR_NODE_GUID, &guid, 8);
  nlmsghdr rh{static_cast<uint32_t>(reply.size()),
              static_cast<uint16_t>(RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, RDMA_NLDEV_CMD_GET)),
              NLM_F_MULTI, 9, 0};
  std::memcpy(reply.data(), &rh, sizeof rh);
  auto e = ParseRdmaDevReply(reply);
  ASSERT_TRUE(e.ok()) << e.status().message();
  EXPECT_EQ(e->index, 5u);
  EXPECT_EQ(e->name, "mlx5_4");

  // The kernel's answer to a SET of a name in use (ib_device_rename: -EEXIST).
  std::vector<uint8_t> err(NLMSG_HDRLEN + sizeof(nlmsgerr));
  nlmsghdr eh{static_cast<uint32_t>(err.size()), NLMSG_ERROR, 0, 9, 0};
  nlmsgerr body{};
  body.error = -EEXIST;
  std::memcpy(err.data(), &eh, sizeof eh);
  std::memcpy(err.data() + NLMSG_HDRLEN, &body, sizeof body);
  EXPECT_EQ(ParseRdmaDevReply(err).status().err(), EEXIST);

  reply.resize(reply.size() - 2);  // cut short: its length no longer fits
  EXPECT_FALSE(ParseRdmaDevReply(reply).ok());
}

}  // namespace
}  // namespace provisioner
