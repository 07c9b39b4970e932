// devlink messages byte for byte against the kernel's structures
// (include/uapi/linux/devlink.h, linux/genetlink.h, linux/netlink.h), replies
// parsed, and the live backend against the real kernel in a private network
// namespace (unshare(CLONE_NEWNET); root). No devlink device exists there (no
// netdevsim): the kernel answers ENODEV for pci/<bdf> (devlink_get_from_attrs),
// or, in a kernel built without CONFIG_NET_DEVLINK, the generic netlink
// controller has no "devlink" family (ENOENT). Either answer must come back
// as its own clear error.
#include "modules/eswitch/devlink_netlink.h"

#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "modules/eswitch/eswitch_backend.h"
#include "test/support/netns.h"

namespace provisioner {
namespace {

[[maybe_unused]] ::testing::Environment* const kNetns =
    ::testing::AddGlobalTestEnvironment(new testing::NetnsEnvironment(/*with_macvlan=*/false));

constexpr uint16_t kFamily = 0x1d;
constexpr char kBdf[] = "0000:af:00.0";

// A message as the kernel lays it out, built from its structures.
class Msg {
 public:
  Msg(uint16_t type, uint16_t flags, uint32_t seq, uint8_t cmd) {
    nlmsghdr h{};
    h.nlmsg_type = type;
    h.nlmsg_flags = flags;
    h.nlmsg_seq = seq;
    Append(&h, sizeof h);
    genlmsghdr g{};
    g.cmd = cmd;
    g.version = DEVLINK_GENL_VERSION;
    Append(&g, sizeof g);
  }
  Msg& Attr(uint16_t type, const void* data, size_t len) {
    nlattr a{};
    a.nla_len = static_cast<uint16_t>(NLA_HDRLEN + len);
    a.nla_type = type;
    Append(&a, sizeof a);
    Append(data, len);
    Pad();
    return *this;
  }
  Msg& Str(uint16_t type, const std::string& s) { return Attr(type, s.c_str(), s.size() + 1); }
  Msg& U8(uint16_t type, uint8_t v) { return Attr(type, &v, 1); }
  Msg& U16(uint16_t type, uint16_t v) { return Attr(type, &v, 2); }
  // A nest: its attributes built by `inner` (a Msg without headers).
  size_t Begin(uint16_t type) {
    const size_t at = bytes_.size();
    nlattr a{};
    a.nla_type = NLA_F_NESTED | type;
    Append(&a, sizeof a);
    return at;
  }
  void End(size_t at) {
    auto* a = reinterpret_cast<nlattr*>(&bytes_[at]);
    a->nla_len = static_cast<uint16_t>(bytes_.size() - at);
  }
  std::vector<uint8_t> Bytes() {
    std::vector<uint8_t> out = bytes_;
    reinterpret_cast<nlmsghdr*>(out.data())->nlmsg_len = static_cast<uint32_t>(out.size());
    return out;
  }

 private:
  void Append(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  void Pad() {
    while (bytes_.size() % NLA_ALIGNTO != 0) bytes_.push_back(0);
  }
  std::vector<uint8_t> bytes_;
};

// The bytes past the header's length, pid and... compared field by field
// except nlmsg_pid (the socket fills it).
void ExpectSame(std::vector<uint8_t> got, std::vector<uint8_t> want) {
  ASSERT_GE(got.size(), sizeof(nlmsghdr));
  reinterpret_cast<nlmsghdr*>(got.data())->nlmsg_pid = 0;
  EXPECT_EQ(got, want);
}

TEST(DevlinkMessageTest, EswitchGetNamesTheDeviceByBusAndName) {
  ExpectSame(devlink::BuildEswitchGet(kFamily, 7, kBdf),
             Msg(kFamily, NLM_F_REQUEST | NLM_F_ACK, 7, DEVLINK_CMD_ESWITCH_GET)
                 .Str(DEVLINK_ATTR_BUS_NAME, "pci")
                 .Str(DEVLINK_ATTR_DEV_NAME, kBdf)
                 .Bytes());
}

TEST(DevlinkMessageTest, EswitchSetCarriesTheModeAsU16) {
  ExpectSame(devlink::BuildEswitchSet(kFamily, 8, kBdf, DEVLINK_ESWITCH_MODE_SWITCHDEV),
             Msg(kFamily, NLM_F_REQUEST | NLM_F_ACK, 8, DEVLINK_CMD_ESWITCH_SET)
                 .Str(DEVLINK_ATTR_BUS_NAME, "pci")
                 .Str(DEVLINK_ATTR_DEV_NAME, kBdf)
                 .U16(DEVLINK_ATTR_ESWITCH_MODE, DEVLINK_ESWITCH_MODE_SWITCHDEV)
                 .Bytes());
  EXPECT_EQ(devlink::ModeValue("legacy"), DEVLINK_ESWITCH_MODE_LEGACY);
  EXPECT_EQ(devlink::ModeValue("switchdev"), DEVLINK_ESWITCH_MODE_SWITCHDEV);
  EXPECT_FALSE(devlink::ModeValue("offloads").has_value());
}

TEST(DevlinkMessageTest, ParamSetIsAStringInTheRuntimeCmode) {
  ExpectSame(devlink::BuildParamSet(kFamily, 9, kBdf, "flow_steering_mode", "smfs"),
             Msg(kFamily, NLM_F_REQUEST | NLM_F_ACK, 9, DEVLINK_CMD_PARAM_SET)
                 .Str(DEVLINK_ATTR_BUS_NAME, "pci")
                 .Str(DEVLINK_ATTR_DEV_NAME, kBdf)
                 .Str(DEVLINK_ATTR_PARAM_NAME, "flow_steering_mode")
                 .U8(DEVLINK_ATTR_PARAM_TYPE, 5 /* NLA_STRING */)
                 .U8(DEVLINK_ATTR_PARAM_VALUE_CMODE, DEVLINK_PARAM_CMODE_RUNTIME)
                 .Str(DEVLINK_ATTR_PARAM_VALUE_DATA, "smfs")
                 .Bytes());
  ExpectSame(devlink::BuildParamGet(kFamily, 10, kBdf, "flow_steering_mode"),
             Msg(kFamily, NLM_F_REQUEST | NLM_F_ACK, 10, DEVLINK_CMD_PARAM_GET)
                 .Str(DEVLINK_ATTR_BUS_NAME, "pci")
                 .Str(DEVLINK_ATTR_DEV_NAME, kBdf)
                 .Str(DEVLINK_ATTR_PARAM_NAME, "flow_steering_mode")
                 .Bytes());
}

// The kernel's reply (devlink_nl_eswitch_fill): the device, then the mode,
// inline mode and encap mode.
TEST(DevlinkReplyTest, EswitchGetReplyGivesTheMode) {
  auto reply = Msg(kFamily, 0, 7, DEVLINK_CMD_ESWITCH_GET)
                   .Str(DEVLINK_ATTR_BUS_NAME, "pci")
                   .Str(DEVLINK_ATTR_DEV_NAME, kBdf)
                   .U16(DEVLINK_ATTR_ESWITCH_MODE, DEVLINK_ESWITCH_MODE_SWITCHDEV)
                   .U8(DEVLINK_ATTR_ESWITCH_INLINE_MODE, DEVLINK_ESWITCH_INLINE_MODE_NONE)
                   .U8(DEVLINK_ATTR_ESWITCH_ENCAP_MODE, DEVLINK_ESWITCH_ENCAP_MODE_BASIC)
                   .Bytes();
  auto mode = devlink::ParseEswitchGetReply(reply);
  ASSERT_TRUE(mode.ok()) << mode.status().message();
  EXPECT_EQ(*mode, "switchdev");
  // Without the mode (a driver with only inline mode), or a mode this
  // build does not know: an error, not a guess.
  auto none = Msg(kFamily, 0, 7, DEVLINK_CMD_ESWITCH_GET).Str(DEVLINK_ATTR_DEV_NAME, kBdf).Bytes();
  EXPECT_FALSE(devlink::ParseEswitchGetReply(none).ok());
  auto odd = Msg(kFamily, 0, 7, DEVLINK_CMD_ESWITCH_GET).U16(DEVLINK_ATTR_ESWITCH_MODE, 9).Bytes();
  EXPECT_FALSE(devlink::ParseEswitchGetReply(odd).ok());
}

TEST(DevlinkReplyTest, AnErrorReplyIsItsErrno) {
  std::vector<uint8_t> msg(NLMSG_HDRLEN + sizeof(nlmsgerr));
  auto* h = reinterpret_cast<nlmsghdr*>(msg.data());
  h->nlmsg_len = static_cast<uint32_t>(msg.size());
  h->nlmsg_type = NLMSG_ERROR;
  reinterpret_cast<nlmsgerr*>(msg.data() + NLMSG_HDRLEN)->error = -ENODEV;
  auto mode = devlink::ParseEswitchGetReply(msg);
  ASSERT_FALSE(mode.ok());
  EXPECT_EQ(mode.status().err(), ENODEV);
  EXPECT_FALSE(devlink::ParseEswitchGetReply({1, 2, 3}).ok());  // truncated
}

// devlink_nl_param_fill: DEVLINK_ATTR_PARAM { NAME, TYPE, VALUES_LIST {
// VALUE { CMODE, DATA } ... } }; the runtime one is the one that counts.
TEST(DevlinkReplyTest, ParamGetReplyGivesTheRuntimeValue) {
  Msg m(kFamily, 0, 10, DEVLINK_CMD_PARAM_GET);
  m.Str(DEVLINK_ATTR_BUS_NAME, "pci").Str(DEVLINK_ATTR_DEV_NAME, kBdf);
  const size_t param = m.Begin(DEVLINK_ATTR_PARAM);
  m.Str(DEVLINK_ATTR_PARAM_NAME, "flow_steering_mode").U8(DEVLINK_ATTR_PARAM_TYPE, 5);
  const size_t list = m.Begin(DEVLINK_ATTR_PARAM_VALUES_LIST);
  const size_t v1 = m.Begin(DEVLINK_ATTR_PARAM_VALUE);
  m.U8(DEVLINK_ATTR_PARAM_VALUE_CMODE, DEVLINK_PARAM_CMODE_DRIVERINIT)
      .Str(DEVLINK_ATTR_PARAM_VALUE_DATA, "hmfs");
  m.End(v1);
  const size_t v2 = m.Begin(DEVLINK_ATTR_PARAM_VALUE);
  m.U8(DEVLINK_ATTR_PARAM_VALUE_CMODE, DEVLINK_PARAM_CMODE_RUNTIME)
      .Str(DEVLINK_ATTR_PARAM_VALUE_DATA, "dmfs");
  m.End(v2);
  m.End(list);
  m.End(param);
  auto value = devlink::ParseParamGetReply(m.Bytes());
  ASSERT_TRUE(value.ok()) << value.status().message();
  EXPECT_EQ(*value, "dmfs");
  auto empty = Msg(kFamily, 0, 10, DEVLINK_CMD_PARAM_GET).Str(DEVLINK_ATTR_DEV_NAME, kBdf).Bytes();
  EXPECT_FALSE(devlink::ParseParamGetReply(empty).ok());
}

// Whether this kernel has the devlink family at all.
bool KernelHasDevlink() {
  nl_sock* sk = nl_socket_alloc();
  if (sk == nullptr || genl_connect(sk) < 0) {
    if (sk != nullptr) nl_socket_free(sk);
    return false;
  }
  const int id = genl_ctrl_resolve(sk, DEVLINK_GENL_NAME);
  nl_socket_free(sk);
  return id > 0;
}

// The real kernel: no devlink device pci/0000:99:00.0 in a fresh namespace.
TEST(DevlinkKernelTest, NoSuchDeviceIsAClearError) {
  auto backend = NewNetlinkDevlinkBackend();
  auto state = backend->Read("0000:99:00.0");
  ASSERT_FALSE(state.ok());
  Status set = backend->SetMode("0000:99:00.0", "switchdev");
  ASSERT_FALSE(set.ok());
  Status param = backend->SetParam("0000:99:00.0", "flow_steering_mode", "smfs");
  ASSERT_FALSE(param.ok());
  if (KernelHasDevlink()) {
    // devlink_get_from_attrs: no such device.
    for (const Status& s : {state.status(), set, param}) {
      EXPECT_EQ(s.err(), ENODEV) << s.message();
      EXPECT_EQ(s.code(), StatusCode::kNotFound) << s.message();
      EXPECT_NE(s.message().find("pci/0000:99:00.0"), std::string::npos) << s.message();
      EXPECT_NE(s.message().find("no such devlink device"), std::string::npos) << s.message();
    }
  } else {
    // CONFIG_NET_DEVLINK off (this CI's kernel): the family is missing.
    for (const Status& s : {state.status(), set, param}) {
      EXPECT_EQ(s.err(), ENOENT) << s.message();
      EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.message();
      EXPECT_NE(s.message().find("CONFIG_NET_DEVLINK"), std::string::npos) << s.message();
    }
  }
  // A malformed address never reaches the kernel.
  EXPECT_EQ(backend->Read("../x").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace provisioner
