// The live event source: what the kernel announces itself.
//  - rtnetlink multicast, RTNLGRP_LINK (a netdev added, removed, renamed,
//    its MTU, flags or VF table changed: include/uapi/linux/rtnetlink.h,
//    net/core/rtnetlink.c rtmsg_ifinfo) and RTNLGRP_DCB (dcbnl_notify after
//    a DCB set: trust, PFC, ETS; net/dcb/dcbnl.c);
//  - a udev monitor (libudev, systemd 252) of the pci, net and infiniband
//    subsystems: a PCI function bound, unbound, added or removed (a driver
//    reload, a hot-plug, an AER recovery's re-probe), an RDMA device that
//    comes or goes.
// Both sockets sit in one epoll set whose fd is this source's fd.
#include <errno.h>
#include <libudev.h>
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

class LiveEventSource final : public EventSource {
 public:
  ~LiveEventSource() override {
    if (monitor_ != nullptr) udev_monitor_unref(monitor_);
    if (udev_ != nullptr) udev_unref(udev_);
    if (nl_ >= 0) ::close(nl_);
    if (ep_ >= 0) ::close(ep_);
  }
  int fd() const override { return ep_; }
  std::string kind() const override { return "netlink+udev"; }
  Status Rescan() override { return OkStatus(); }

  Status Open() {
    ep_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep_ < 0) return ErrnoToStatus(errno, "epoll_create1");
    nl_ = ::socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (nl_ < 0) return ErrnoToStatus(errno, "socket(NETLINK_ROUTE)");
    struct sockaddr_nl sa = {};
    sa.nl_family = AF_NETLINK;
    if (::bind(nl_, reinterpret_cast<struct sockaddr*>(&sa), sizeof sa) != 0) {
      return ErrnoToStatus(errno, "bind rtnetlink");
    }
    for (int group : {RTNLGRP_LINK, RTNLGRP_DCB}) {
      if (::setsockopt(nl_, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0) {
        return ErrnoToStatus(errno, "rtnetlink: join group " + std::to_string(group));
      }
    }
    RETURN_IF_ERROR(AddToEpoll(nl_));
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
    RETURN_IF_ERROR(ReadNetlink(events));
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

  Status ReadNetlink(std::vector<std::string>* events) {
    alignas(struct nlmsghdr) char buf[32768];
    for (;;) {
      const ssize_t n = ::recv(nl_, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return OkStatus();
        if (errno == ENOBUFS) {  // messages lost: a reconcile reads everything anyway
          events->push_back("rtnetlink: receive buffer overrun");
          continue;
        }
        return ErrnoToStatus(errno, "recv rtnetlink");
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
      }
    }
  }

  int ep_ = -1;
  int nl_ = -1;
  struct udev* udev_ = nullptr;
  struct udev_monitor* monitor_ = nullptr;
};

}  // namespace

StatusOr<std::unique_ptr<EventSource>> NewLiveEventSource() {
  auto source = std::make_unique<LiveEventSource>();
  RETURN_IF_ERROR(source->Open());
  return std::unique_ptr<EventSource>(std::move(source));
}

}  // namespace provisioner::agent
