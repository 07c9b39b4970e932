// Where the agent's wake-ups come from: the kernel's announcements of the
// changes that undo a converged host (a driver reload, a card re-probe, a
// hot-plug). One implementation per kind of root, chosen once per root in
// event_source_factory.cc: on a tree, inotify on the files whose change the
// kernel would announce; on the live host, rtnetlink multicast and udev.
#ifndef PROVISIONER_ENGINE_AGENT_EVENT_SOURCE_H_
#define PROVISIONER_ENGINE_AGENT_EVENT_SOURCE_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/netlink/netlink_socket.h"

namespace provisioner::agent {

class EventSource {
 public:
  virtual ~EventSource() = default;
  // Readable when events are queued (for the agent's epoll loop).
  virtual int fd() const = 0;
  // Reads what is queued without blocking; appends one line per event that
  // matters ("sriov_numvfs written: /sys/devices/.../0000:af:00.0",
  // "link ens1f0: mtu 9000"). Events the agent itself causes in its status
  // files are left out.
  virtual Status Read(std::vector<std::string>* events) = 0;
  // After a reconcile: watch what appeared since (new PFs, netdevs, capture
  // directories). A no-op where the kernel announces everything.
  virtual Status Rescan() = 0;
  // "inotify" | "netlink+udev" | "netlink+udev+devlink": for status and logs.
  virtual std::string kind() const = 0;
};

// The tree implementation (tree_event_source.cc).
StatusOr<std::unique_ptr<EventSource>> NewTreeEventSource(HostFs& fs);
// How the live source asks the kernel for a generic netlink family and its
// multicast groups (ResolveGenlFamily; tests give a kernel without one).
using GenlFamilyResolver = std::function<StatusOr<GenlFamily>(const std::string&)>;
// The live implementation (live_event_source.cc): rtnetlink RTNLGRP_LINK and
// RTNLGRP_DCB, a udev monitor of pci, net and infiniband, and devlink's
// "config" group when `resolve` finds the devlink family (kind() is then
// "netlink+udev+devlink"). A kernel without it (ENOENT) is not an error.
StatusOr<std::unique_ptr<EventSource>> NewLiveEventSource(
    GenlFamilyResolver resolve = ResolveGenlFamily);
// The only place that tells the roots apart (event_source_factory.cc).
StatusOr<std::unique_ptr<EventSource>> NewEventSource(HostFs& fs);

}  // namespace provisioner::agent

#endif  // PROVISIONER_ENGINE_AGENT_EVENT_SOURCE_H_
