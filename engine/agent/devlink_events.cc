#include "engine/agent/devlink_events.h"

#include <linux/devlink.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <cstring>

#include "engine/netlink/netlink_socket.h"

namespace provisioner::agent {
namespace {

std::string StringAttr(nlattr* a) {
  if (a == nullptr) return "";
  const char* p = static_cast<const char*>(nla_data(a));
  return std::string(p, ::strnlen(p, static_cast<size_t>(nla_len(a))));
}

}  // namespace

StatusOr<std::optional<std::string>> DescribeDevlinkNotification(nlmsghdr* h, uint16_t family) {
  if (h->nlmsg_type != family) return std::optional<std::string>();
  if (nlmsg_datalen(h) < static_cast<int>(GENL_HDRLEN)) {
    return InvalidArgumentError("devlink: truncated notification");
  }
  const uint8_t cmd = static_cast<const genlmsghdr*>(nlmsg_data(h))->cmd;
  const char* what = nullptr;
  bool port = false;
  switch (cmd) {
    case DEVLINK_CMD_NEW:
      what = "new";
      break;
    case DEVLINK_CMD_DEL:
      what = "removed";
      break;
    case DEVLINK_CMD_PORT_NEW:
      what = "new";
      port = true;
      break;
    case DEVLINK_CMD_PORT_DEL:
      what = "removed";
      port = true;
      break;
    case DEVLINK_CMD_ESWITCH_GET:
    case DEVLINK_CMD_ESWITCH_SET:
      what = "eswitch";
      break;
    default:
      return std::optional<std::string>();
  }
  nlattr* tb[DEVLINK_ATTR_MAX + 1] = {};
  RETURN_IF_ERROR(ParseGenlAttributes(h, tb, DEVLINK_ATTR_MAX, "devlink",
                                      "notification " + std::to_string(cmd)));
  // The handle every devlink message carries (devlink_nl_put_handle); libnl
  // stops at a malformed attribute without an error, so a message cut there
  // has none.
  const std::string bus = StringAttr(tb[DEVLINK_ATTR_BUS_NAME]);
  const std::string dev = StringAttr(tb[DEVLINK_ATTR_DEV_NAME]);
  if (bus.empty() || dev.empty()) {
    return InvalidArgumentError("devlink: notification " + std::to_string(cmd) +
                                " without its handle (bus and device name)");
  }
  std::string line = "devlink " + bus + "/" + dev;
  if (port) {
    if (nlattr* a = tb[DEVLINK_ATTR_PORT_INDEX]; a != nullptr && nla_len(a) >= 4) {
      line += " port " + std::to_string(nla_get_u32(a));
    }
  }
  line += std::string(": ") + what;
  if (cmd == DEVLINK_CMD_ESWITCH_GET || cmd == DEVLINK_CMD_ESWITCH_SET) {
    if (nlattr* a = tb[DEVLINK_ATTR_ESWITCH_MODE]; a != nullptr && nla_len(a) >= 2) {
      const uint16_t mode = nla_get_u16(a);
      line += mode == DEVLINK_ESWITCH_MODE_SWITCHDEV ? " mode switchdev"
              : mode == DEVLINK_ESWITCH_MODE_LEGACY  ? " mode legacy"
                                                     : " mode " + std::to_string(mode);
    }
  }
  if (std::string netdev = StringAttr(tb[DEVLINK_ATTR_PORT_NETDEV_NAME]); !netdev.empty()) {
    line += " (" + netdev + ")";
  }
  return std::optional<std::string>(line);
}

StatusOr<std::optional<std::string>> DescribeDevlinkNotification(const std::vector<uint8_t>& msg,
                                                                 uint16_t family) {
  ASSIGN_OR_RETURN(nlmsghdr * h, NetlinkHeader(msg, "devlink"));
  return DescribeDevlinkNotification(h, family);
}

}  // namespace provisioner::agent
