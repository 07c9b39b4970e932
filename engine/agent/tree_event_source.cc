// The tree event source: inotify on the files of a host tree whose change
// the kernel would announce on a live host (a uevent, an rtnetlink message):
//  - every PCI function with sriov_numvfs: the count written (a driver
//    reload leaves 0), its driver link made or removed (bind, unbind);
//  - /sys/class/net: netdevs that appear, go or are renamed;
//  - every netdev's directory: mtu, flags, operstate, carrier written;
//  - /run/provisioner and below: the captures that stand in for netlink
//    state on a tree (DCB, VF trust, devlink), written or replaced;
//  - /sys/bus/pci/drivers/<d>: a function bound or unbound.
// What no event reports (PCI config space: ACS put back by a re-probe) is
// the resync's job.
#include <errno.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/agent/event_source.h"

namespace provisioner::agent {
namespace {

enum class WatchKind { kPciFunction, kNetClass, kNetdev, kCaptures, kDriver };

struct Watch {
  WatchKind kind;
  std::string host_dir;  // the canonical host path watched
};

// Files the agent itself writes under /run/provisioner, and the apply
// bookkeeping: never a reason to reconcile.
bool OwnFile(const std::string& name) {
  static const std::set<std::string> kOwn = {"status.json", "lock", "journal.json",
                                             "pending-reboot"};
  return kOwn.count(name) != 0 || name.find(".provisioner-tmp.") != std::string::npos;
}

class TreeEventSource final : public EventSource {
 public:
  TreeEventSource(HostFs& fs, int fd) : fs_(fs), fd_(fd) {}
  ~TreeEventSource() override { ::close(fd_); }
  int fd() const override { return fd_; }
  std::string kind() const override { return "inotify"; }

  Status Rescan() override {
    for (const std::string& bdf : ListDirIfPresent(fs_, "/sys/bus/pci/devices")) {
      const std::string dev = "/sys/bus/pci/devices/" + bdf;
      if (!fs_.Exists(dev + "/sriov_numvfs")) continue;
      RETURN_IF_ERROR(Add(dev, WatchKind::kPciFunction, IN_CLOSE_WRITE | IN_CREATE | IN_DELETE));
    }
    if (fs_.IsDir("/sys/class/net")) {
      RETURN_IF_ERROR(Add("/sys/class/net", WatchKind::kNetClass,
                          IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO));
      for (const std::string& ifname : ListDirIfPresent(fs_, "/sys/class/net")) {
        RETURN_IF_ERROR(
            Add("/sys/class/net/" + ifname, WatchKind::kNetdev, IN_CLOSE_WRITE | IN_MOVED_TO));
      }
    }
    for (const std::string& driver : ListDirIfPresent(fs_, "/sys/bus/pci/drivers")) {
      RETURN_IF_ERROR(
          Add("/sys/bus/pci/drivers/" + driver, WatchKind::kDriver, IN_CREATE | IN_DELETE));
    }
    return AddCaptures("/run/provisioner", 0);
  }

  Status Read(std::vector<std::string>* events) override {
    alignas(struct inotify_event) char buf[16384];
    for (;;) {
      const ssize_t n = ::read(fd_, buf, sizeof buf);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN) return OkStatus();
        return ErrnoToStatus(errno, "read inotify");
      }
      for (ssize_t off = 0; off < n;) {
        const auto* ev = reinterpret_cast<const struct inotify_event*>(buf + off);
        off += static_cast<ssize_t>(sizeof(struct inotify_event) + ev->len);
        if ((ev->mask & IN_Q_OVERFLOW) != 0) {
          events->push_back("inotify queue overflow");
          continue;
        }
        auto it = watches_.find(ev->wd);
        if (it == watches_.end()) continue;
        if ((ev->mask & IN_IGNORED) != 0) {
          watched_.erase(it->second.host_dir);
          watches_.erase(it);
          continue;
        }
        const std::string name = ev->len > 0 ? std::string(ev->name) : "";
        std::string line = Describe(it->second, name, ev->mask);
        if (!line.empty()) events->push_back(std::move(line));
      }
    }
  }

 private:
  // One event's line, or "" for one the kernel would not announce.
  static std::string Describe(const Watch& w, const std::string& name, uint32_t mask) {
    const std::string path = w.host_dir + "/" + name;
    switch (w.kind) {
      case WatchKind::kPciFunction:
        if (name == "sriov_numvfs" && (mask & IN_CLOSE_WRITE) != 0) {
          return "sriov_numvfs written: " + path;
        }
        if (name == "driver") {
          return std::string((mask & IN_CREATE) != 0 ? "driver bound: " : "driver unbound: ") +
                 w.host_dir;
        }
        return "";
      case WatchKind::kNetClass:
        return std::string((mask & (IN_CREATE | IN_MOVED_TO)) != 0 ? "netdev added: "
                                                                   : "netdev removed: ") +
               name;
      case WatchKind::kNetdev:
        if (name == "mtu" || name == "flags" || name == "operstate" || name == "carrier") {
          return "netdev " + std::string(Basename(w.host_dir)) + ": " + name + " changed";
        }
        return "";
      case WatchKind::kCaptures:
        if (OwnFile(name)) return "";
        return "capture changed: " + path;
      case WatchKind::kDriver:
        if (name.find(':') == std::string::npos) return "";  // bind, unbind, new_id ...
        return std::string((mask & IN_CREATE) != 0 ? "bound to " : "unbound from ") +
               std::string(Basename(w.host_dir)) + ": " + name;
    }
    return "";
  }

  // Watches `dir` (a host path, links followed) once.
  Status Add(const std::string& dir, WatchKind kind, uint32_t mask) {
    auto resolved = fs_.Resolve(dir);
    if (!resolved.ok()) return OkStatus();  // gone meanwhile: nothing to watch
    if (watched_.count(*resolved) != 0) return OkStatus();
    const std::string path = fs_.FsPath(*resolved);
    const int wd = ::inotify_add_watch(fd_, path.c_str(), mask | IN_ONLYDIR);
    if (wd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return OkStatus();
      return ErrnoToStatus(errno, "inotify_add_watch " + path);
    }
    watches_[wd] = Watch{kind, *resolved};
    watched_.insert(*resolved);
    return OkStatus();
  }

  // /run/provisioner and its directories (vf/<PF>/<i>, dcb, devlink ...),
  // a few levels deep: the captures are at most three below it.
  Status AddCaptures(const std::string& dir, int depth) {
    if (!fs_.IsDir(dir)) return OkStatus();
    RETURN_IF_ERROR(Add(dir, WatchKind::kCaptures,
                        IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_MOVED_FROM));
    if (depth >= 3) return OkStatus();
    for (const std::string& name : ListDirIfPresent(fs_, dir)) {
      const std::string sub = dir + "/" + name;
      if (!fs_.IsSymlink(sub) && fs_.IsDir(sub)) RETURN_IF_ERROR(AddCaptures(sub, depth + 1));
    }
    return OkStatus();
  }

  HostFs& fs_;
  int fd_;
  std::map<int, Watch> watches_;
  std::set<std::string> watched_;
};

}  // namespace

StatusOr<std::unique_ptr<EventSource>> NewTreeEventSource(HostFs& fs) {
  const int fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  if (fd < 0) return ErrnoToStatus(errno, "inotify_init1");
  auto source = std::make_unique<TreeEventSource>(fs, fd);
  RETURN_IF_ERROR(source->Rescan());
  return std::unique_ptr<EventSource>(std::move(source));
}

}  // namespace provisioner::agent
