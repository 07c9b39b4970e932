// devlink notifications: the lines the live source makes of messages built
// here as the kernel builds them (net/devlink dev.c devlink_nl_fill, port.c
// devlink_nl_port_fill: the handle, then the port's attributes), the family
// answer that names the "config" group, and the live source on a kernel
// without devlink (this VM's: the family is absent) or with the group given.
#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <string>
#include <vector>

#include "engine/agent/devlink_events.h"
#include "engine/agent/event_source.h"
#include "engine/netlink/netlink_socket.h"
#include "gtest/gtest.h"

namespace provisioner::agent {
namespace {

constexpr uint16_t kFamily = 0x1d;  // the id the controller gave devlink

// A devlink notification: the handle (bus/dev), then `port` and `netdev`
// when given, as devlink_nl_port_fill puts them.
std::vector<uint8_t> Notification(uint8_t cmd, int port = -1, const char* netdev = nullptr,
                                  uint16_t family = kFamily) {
  NlMsg m = NewGenlMessage(family, cmd, DEVLINK_GENL_VERSION, 0);
  EXPECT_TRUE(m);
  nla_put_string(m.get(), DEVLINK_ATTR_BUS_NAME, "pci");
  nla_put_string(m.get(), DEVLINK_ATTR_DEV_NAME, "0000:af:00.0");
  if (port >= 0) nla_put_u32(m.get(), DEVLINK_ATTR_PORT_INDEX, static_cast<uint32_t>(port));
  if (netdev != nullptr) nla_put_string(m.get(), DEVLINK_ATTR_PORT_NETDEV_NAME, netdev);
  return NetlinkMessageBytes(m.get(), 0);
}

std::string Line(const std::vector<uint8_t>& msg) {
  auto line = DescribeDevlinkNotification(msg, kFamily);
  if (!line.ok()) return "error: " + line.status().message();
  return line->has_value() ? **line : "(none)";
}

TEST(DevlinkEvents, InstanceRegisteredAndRemoved) {
  EXPECT_EQ(Line(Notification(DEVLINK_CMD_NEW)), "devlink pci/0000:af:00.0: new");
  EXPECT_EQ(Line(Notification(DEVLINK_CMD_DEL)), "devlink pci/0000:af:00.0: removed");
}

TEST(DevlinkEvents, PortsWithTheirNetdev) {
  EXPECT_EQ(Line(Notification(DEVLINK_CMD_PORT_NEW, 131073, "pf0vf1")),
            "devlink pci/0000:af:00.0 port 131073: new (pf0vf1)");
  EXPECT_EQ(Line(Notification(DEVLINK_CMD_PORT_DEL, 131073)),
            "devlink pci/0000:af:00.0 port 131073: removed");
}

TEST(DevlinkEvents, EswitchModeWhenAKernelSendsIt) {
  NlMsg m = NewGenlMessage(kFamily, DEVLINK_CMD_ESWITCH_GET, DEVLINK_GENL_VERSION, 0);
  nla_put_string(m.get(), DEVLINK_ATTR_BUS_NAME, "pci");
  nla_put_string(m.get(), DEVLINK_ATTR_DEV_NAME, "0000:af:00.1");
  nla_put_u16(m.get(), DEVLINK_ATTR_ESWITCH_MODE, DEVLINK_ESWITCH_MODE_SWITCHDEV);
  EXPECT_EQ(Line(NetlinkMessageBytes(m.get(), 0)),
            "devlink pci/0000:af:00.1: eswitch mode switchdev");
}

TEST(DevlinkEvents, OtherNotificationsAreNotEvents) {
  // Traps, params, health: nothing the agent restores.
  EXPECT_EQ(Line(Notification(DEVLINK_CMD_TRAP_NEW)), "(none)");
  EXPECT_EQ(Line(Notification(DEVLINK_CMD_PARAM_NEW)), "(none)");
  EXPECT_EQ(Line(Notification(DEVLINK_CMD_HEALTH_REPORTER_RECOVER)), "(none)");
  // Another family's message on the socket.
  EXPECT_EQ(Line(Notification(DEVLINK_CMD_NEW, -1, nullptr, kFamily + 1)), "(none)");
}

TEST(DevlinkEvents, TruncatedOrBadMessagesAreErrors) {
  std::vector<uint8_t> msg = Notification(DEVLINK_CMD_PORT_NEW, 1, "p0");
  // Only the netlink header: no genlmsghdr.
  std::vector<uint8_t> bare(msg.begin(), msg.begin() + NLMSG_HDRLEN);
  reinterpret_cast<nlmsghdr*>(bare.data())->nlmsg_len = NLMSG_HDRLEN;
  EXPECT_EQ(Line(bare), "error: devlink: truncated notification");
  // An attribute whose length runs past the message.
  std::vector<uint8_t> bad = msg;
  auto* first = reinterpret_cast<nlattr*>(bad.data() + NLMSG_HDRLEN + GENL_HDRLEN);
  first->nla_len = 0xfff0;
  EXPECT_EQ(Line(bad), "error: devlink: notification 7 without its handle (bus and device name)");
  // A length field larger than the bytes.
  std::vector<uint8_t> cut(msg.begin(), msg.end() - 8);
  EXPECT_NE(Line(cut).find("error: devlink: message length"), std::string::npos) << Line(cut);
}

// The controller's answer to CTRL_CMD_GETFAMILY "devlink" (genetlink.c
// ctrl_fill_info): the id and the multicast groups, "config" among them.
TEST(DevlinkEvents, FamilyAnswerNamesTheConfigGroup) {
  NlMsg m = NewGenlMessage(GENL_ID_CTRL, CTRL_CMD_NEWFAMILY, 2, 0);
  nla_put_string(m.get(), CTRL_ATTR_FAMILY_NAME, DEVLINK_GENL_NAME);
  nla_put_u16(m.get(), CTRL_ATTR_FAMILY_ID, kFamily);
  nlattr* groups = nla_nest_start(m.get(), CTRL_ATTR_MCAST_GROUPS);
  nlattr* g = nla_nest_start(m.get(), 1);
  nla_put_u32(m.get(), CTRL_ATTR_MCAST_GRP_ID, 7);
  nla_put_string(m.get(), CTRL_ATTR_MCAST_GRP_NAME, DEVLINK_GENL_MCGRP_CONFIG_NAME);
  nla_nest_end(m.get(), g);
  nla_nest_end(m.get(), groups);
  auto family = ParseGenlFamilyAnswer(NetlinkMessageBytes(m.get(), 1), DEVLINK_GENL_NAME);
  ASSERT_TRUE(family.ok()) << family.status().message();
  EXPECT_EQ(family->id, kFamily);
  ASSERT_EQ(family->mcast_groups.count("config"), 1u);
  EXPECT_EQ(family->mcast_groups.at("config"), 7u);
}

// The kernel of this machine: no devlink family (ENOENT), or one with its
// "config" group; either way the live source opens.
TEST(LiveEventSourceDevlink, TheRealKernelEitherWay) {
  auto family = ResolveGenlFamily(DEVLINK_GENL_NAME);
  if (family.ok()) {
    EXPECT_EQ(family->mcast_groups.count(DEVLINK_GENL_MCGRP_CONFIG_NAME), 1u);
  } else {
    EXPECT_EQ(family.status().err(), ENOENT) << family.status().message();
  }
  auto source = NewLiveEventSource();
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->kind(), family.ok() ? "netlink+udev+devlink" : "netlink+udev");
}

TEST(LiveEventSourceDevlink, NoFamilyOrNoGroupIsNotAnError) {
  auto absent = NewLiveEventSource([](const std::string& name) -> StatusOr<GenlFamily> {
    return Status(StatusCode::kFailedPrecondition,
                  "genetlink CTRL_CMD_GETFAMILY " + name + ": ENOENT", ENOENT);
  });
  ASSERT_TRUE(absent.ok()) << absent.status().message();
  EXPECT_EQ((*absent)->kind(), "netlink+udev");
  auto no_group = NewLiveEventSource([](const std::string&) -> StatusOr<GenlFamily> {
    GenlFamily f;
    f.id = kFamily;
    return f;
  });
  ASSERT_TRUE(no_group.ok()) << no_group.status().message();
  EXPECT_EQ((*no_group)->kind(), "netlink+udev");
}

TEST(LiveEventSourceDevlink, OtherResolverErrorsAreReported) {
  auto source = NewLiveEventSource([](const std::string& name) -> StatusOr<GenlFamily> {
    return ErrnoToStatus(EPERM, "genetlink CTRL_CMD_GETFAMILY " + name);
  });
  ASSERT_FALSE(source.ok());
  EXPECT_NE(source.status().message().find("devlink notifications"), std::string::npos)
      << source.status().message();
}

// The subscription path on the real kernel: a family that exists here
// (nlctrl, whose "notify" group stands in for devlink's "config").
TEST(LiveEventSourceDevlink, JoinsTheGroupTheResolverNames) {
  auto source = NewLiveEventSource([](const std::string&) -> StatusOr<GenlFamily> {
    ASSIGN_OR_RETURN(GenlFamily nlctrl, ResolveGenlFamily("nlctrl"));
    GenlFamily f;
    f.id = nlctrl.id;
    f.mcast_groups["config"] = nlctrl.mcast_groups.at("notify");
    return f;
  });
  ASSERT_TRUE(source.ok()) << source.status().message();
  EXPECT_EQ((*source)->kind(), "netlink+udev+devlink");
  std::vector<std::string> events;
  EXPECT_TRUE((*source)->Read(&events).ok());
}

}  // namespace
}  // namespace provisioner::agent
