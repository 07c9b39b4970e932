// The live event source: what the kernel announces itself.
//  - rtnetlink multicast, RTNLGRP_LINK (a netdev added, removed, renamed,
//    its MTU, flags or VF table changed: include/uapi/linux/rtnetlink.h,
//    net/core/rtnetlink.c rtmsg_ifinfo) and RTNLGRP_DCB (dcbnl_notify after
//    a DCB set: trust, PFC, ETS; net/dcb/dcbnl.c);
//  - a udev monitor (libudev, systemd 252) of the pci, net and infiniband
//    subsystems: a PCI function bound, unbound, added or removed (a driver
//    reload, a hot-plug, an AER recovery's re-probe), an RDMA device that
//    comes or goes;
//  - devlink notifications, when the kernel has the "devlink" generic
//    netlink family: its "config" multicast group (devlink_events.h: an
//    instance or a port new or removed). Without the family (or the group)
//    the source runs without them; kind() says which.
// The sockets sit in one epoll set whose fd is this source's fd.
#include <errno.h>
#include <libudev.h>
#include <linux/devlink.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "engine/agent/devlink_events.h"
#include "engine/agent/event_source.h"

namespace provisioner::agent {
namespace {

// An RTM_NEWLINK/RTM_DELLINK message as a line: "link ens1f0 (index 4,
// mtu 9000, up)" (IFLA_IFNAME, IFLA_MTU, ifi_flags).
std::string DescribeLink(const struct nlmsghdr* h) {
  const auto* ifi = static_cast<const struct ifinfomsg*>(NLMSG_DATA(h));
  std::string name, mtu;
  int len = static_cast<int>(h->nlmsg_len) - static_cast<int>(NLMSG_LENGTH(sizeof(*ifi)));
  for (const struct rtattr* a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len)) {
    if (a->rta_type == IFLA_IFNAME) {
      name.assign(static_cast<const char*>(RTA_DATA(a)),
                  ::strnlen(static_cast<const char*>(RTA_DATA(a)), RTA_PAYLOAD(a)));
    } else if (a->rta_type == IFLA_MTU && RTA_PAYLOAD(a) >= sizeof(uint32_t)) {
      uint32_t v;
      std::memcpy(&v, RTA_DATA(a), sizeof v);
      mtu = ", mtu " + std::to_string(v);
    }
  }
  return std::string(h->nlmsg_type == RTM_NEWLINK ? "link " : "link removed ") + name +
         " (index " + std::to_string(ifi->ifi_index) + mtu +
         ((ifi->ifi_flags & IFF_UP) != 0 ? ", up)" : ", down)");
}

// A netlink socket of `protocol`, non-blocking, bound, in `groups`.
StatusOr<int> OpenMulticastSocket(int protocol, const std::string& name,
                                  const std::vector<uint32_t>& groups) {
  const int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol);
  if (fd < 0) return ErrnoToStatus(errno, "socket(" + name + ")");
  struct sockaddr_nl sa = {};
  sa.nl_family = AF_NETLINK;
  if (::bind(fd, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) != 0) {
    const int err = errno;
    ::close(fd);
    return ErrnoToStatus(err, "bind " + name);
  }
  for (uint32_t group : groups) {
    if (::setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0) {
      const int err = errno;
      ::close(fd);
      return ErrnoToStatus(err, name + ": join group " + std::to_string(group));
    }
  }
  return fd;
}

class LiveEventSource final : public EventSource {
 public:
  explicit LiveEventSource(GenlFamilyResolver resolve) : resolve_(std::move(resolve)) {}
  ~LiveEventSource() override {
    if (monitor_ != nullptr) udev_monitor_unref(monitor_);
    if (udev_ != nullptr) udev_unref(udev_);
    if (nl_ >= 0) ::close(nl_);
    if (devlink_ >= 0) ::close(devlink_);
    if (ep_ >= 0) ::close(ep_);
  }
  int fd() const override { return ep_; }
  std::string kind() const override {
    return devlink_ >= 0 ? "netlink+udev+devlink" : "netlink+udev";
  }
  Status Rescan() override { return OkStatus(); }

  Status Open() {
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return ErrnoToStatus(errno, "epoll_create1");
    ASSIGN_OR_RETURN(nl_, OpenMulticastSocket(NETLINK_ROUTE, "rtnetlink",
                                              {RTNLGRP_LINK, RTNLGRP_DCB}));
    RETURN_IF_ERROR(AddToEpoll(nl_));
    RETURN_IF_ERROR(OpenDevlink());
    udev_ = udev_new();
    if (udev_ != nullptr) monitor_ = udev_monitor_new_from_netlink(udev_, "udev");
    // No udev (a container without /run/udev): netlink alone.
    if (monitor_ != nullptr) {
      for (const char* sub : {"pci", "net", "infiniband"}) {
        udev_monitor_filter_add_match_subsystem_devtype(monitor_, sub, nullptr);
      }
      if (udev_monitor_enable_receiving(monitor_) < 0) {
        udev_monitor_unref(monitor_);
        monitor_ = nullptr;
      } else {
        RETURN_IF_ERROR(AddToEpoll(udev_monitor_get_fd(monitor_)));
      }
    }
    return OkStatus();
  }

  Status Read(std::vector<std::string>* events) override {
    RETURN_IF_ERROR(ReadNetlink(nl_, "rtnetlink", events, [&](struct nlmsghdr* h) {
      switch (h->nlmsg_type) {
        case RTM_NEWLINK:
        case RTM_DELLINK:
          events->push_back(DescribeLink(h));
          break;
        case RTM_GETDCB:
        case RTM_SETDCB:
          events->push_back("dcb changed");
          break;
        default:
          break;
      }
    }));
    if (devlink_ >= 0) {
      RETURN_IF_ERROR(ReadNetlink(devlink_, "devlink", events, [&](struct nlmsghdr* h) {
        auto line = DescribeDevlinkNotification(h, devlink_family_);
        if (!line.ok()) {
          events->push_back(line.status().message());  // still a reason to look
        } else if (line->has_value()) {
          events->push_back(**line);
        }
      }));
    }
    if (monitor_ == nullptr) return OkStatus();
    while (struct udev_device* dev = udev_monitor_receive_device(monitor_)) {
      const char* action = udev_device_get_action(dev);
      const char* sub = udev_device_get_subsystem(dev);
      const char* name = udev_device_get_sysname(dev);
      events->push_back(std::string("udev ") + (sub ? sub : "?") + " " + (action ? action : "?") +
                        ": " + (name ? name : "?"));
      udev_device_unref(dev);
    }
    return OkStatus();
  }

 private:
  Status AddToEpoll(int fd) {
    struct epoll_event ev = {};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (::epoll_ctl(ep_, EPOLL_CTL_ADD, fd, &ev) != 0) return ErrnoToStatus(errno, "epoll_ctl");
    return OkStatus();
  }

  // The devlink family's "config" group, when the kernel has the family.
  Status OpenDevlink() {
    auto family = resolve_(DEVLINK_GENL_NAME);
    if (!family.ok()) {
      // ENOENT: a kernel without devlink (CONFIG_NET_DEVLINK off): none.
      if (family.status().err() == ENOENT) return OkStatus();
      return Status(family.status().code(),
                    "devlink notifications: " + family.status().message(), family.status().err());
    }
    auto group = family->mcast_groups.find(DEVLINK_GENL_MCGRP_CONFIG_NAME);
    if (group == family->mcast_groups.end()) return OkStatus();
    ASSIGN_OR_RETURN(devlink_, OpenMulticastSocket(NETLINK_GENERIC, "devlink", {group->second}));
    devlink_family_ = family->id;
    return AddToEpoll(devlink_);
  }

  // Every message queued on `fd` to `on_message`.
  template <typename OnMessage>
  Status ReadNetlink(int fd, const char* name, std::vector<std::string>* events,
                     const OnMessage& on_message) {
    alignas(struct nlmsghdr) char buf[32768];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return OkStatus();
        if (errno == ENOBUFS) {  // messages lost: a reconcile reads everything anyway
          events->push_back(std::string(name) + ": receive buffer overrun");
          continue;
        }
        return ErrnoToStatus(errno, std::string("recv ") + name);
      }
      // Walked by hand rather than with NLMSG_OK/NLMSG_NEXT, whose int/u32
      // comparison clang's -Wsign-compare refuses.
      size_t left = static_cast<size_t>(n);
      for (auto* h = reinterpret_cast<struct nlmsghdr*>(buf);
           left >= sizeof(struct nlmsghdr) && h->nlmsg_len >= sizeof(struct nlmsghdr) &&
           h->nlmsg_len <= left;
           left -= std::min<size_t>(left, NLMSG_ALIGN(h->nlmsg_len)),
                h = reinterpret_cast<struct nlmsghdr*>(reinterpret_cast<char*>(h) +
                                                       NLMSG_ALIGN(h->nlmsg_len))) {
        on_message(h);
      }
    }
  }

  GenlFamilyResolver resolve_;
  int ep_ = -1;
  int nl_ = -1;
  int devlink_ = -1;
  uint16_t devlink_family_ = 0;
  struct udev* udev_ = nullptr;
  struct udev_monitor* monitor_ = nullptr;
};

}  // namespace

StatusOr<std::unique_ptr<EventSource>> NewLiveEventSource(GenlFamilyResolver resolve) {
  auto source = std::make_unique<LiveEventSource>(std::move(resolve));
  RETURN_IF_ERROR(source->Open());
  return std::unique_ptr<EventSource>(std::move(source));
}

}  // namespace provisioner::agent
