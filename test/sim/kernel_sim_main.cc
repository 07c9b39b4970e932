// kernel_sim: a simulated kernel for end-to-end tests of the real binary.
//
//   kernel_sim --root DIR [--netdev-delay-ms 200] [--ready-file F]
//              [--fault SUBSTR=ERRNO]... [--max-enable N] [--driver NAME]...
//              [--vf-netdevs-down]
//
// Watches (inotify IN_CLOSE_WRITE) the real directory of every PCI function
// under DIR that has sriov_numvfs, and reacts to each write like Linux + mlx5:
// VF functions appear at once, their netdevs/RDMA devices after the delay.
// Writes the kernel would refuse (EINVAL, ERANGE, ENOENT, EBUSY, injected
// faults) are undone: the file gets the previous count back and
// "<host path> <ERRNO>" is appended to DIR/run/kernel-sim/refused.
// Accepted writes leave the file as the kernel shows it ("<n>\n").
// The ready file is written once every watch is in place. SIGTERM/SIGINT stop
// it cleanly (exit 0).
//
// Driver binding: it also watches every PCI function's directory
// (driver_override), every /sys/bus/pci/drivers/<d> (bind, unbind) and
// /sys/bus/pci (drivers_probe), and reacts like SriovSim::Bind/Unbind/
// DriversProbe; the write-only files are emptied again, a refused write is
// logged to run/kernel-sim/refused like a refused sriov_numvfs. `--driver D`
// registers PCI driver D at start (as if its module were loaded); a
// /sys/module/vfio_pci directory (present at start or appearing later)
// registers vfio-pci.
//
// devlink (the eswitch module's captures run/provisioner/devlink/<bdf>,
// test/sim/eswitch_sim.h): a capture written is the E-Switch request;
// refused as mlx5/ice refuse it (the accepted content put back, logged to
// refused), else the PF's VF representors appear or go; VFs created or
// destroyed in switchdev get or lose theirs.
//
// Limitation: inotify reports a write after it happened, so a writer must wait
// for the effect of one write (e.g. VFs gone after "0") before the next write
// to the same file; two writes in a row can be seen as one.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test/sim/eswitch_sim.h"
#include "test/sim/ipoib_sim.h"
#include "test/sim/netdev_sim.h"
#include "test/sim/sriov_sim.h"
#include "test/support/host_tree.h"

namespace {

using provisioner::Basename;
using provisioner::ErrnoName;
using provisioner::testing::EswitchCaptureCheck;
using provisioner::testing::EswitchSyncRepresentors;
using provisioner::testing::IsDevlinkCapture;
using provisioner::testing::ParseNumVfsWrite;
using provisioner::testing::SriovSim;
using provisioner::testing::SriovSimOptions;
using provisioner::testing::TreeWriter;
using Clock = std::chrono::steady_clock;

struct Fault {
  std::string substring;
  int err;
};

int ErrnoFromName(const std::string& name) {
  static const std::pair<const char*, int> kNames[] = {
      {"EBUSY", EBUSY},   {"ENOMEM", ENOMEM}, {"EIO", EIO},       {"EPERM", EPERM},
      {"EINVAL", EINVAL}, {"ERANGE", ERANGE}, {"ENOENT", ENOENT}, {"ENODEV", ENODEV},
      {"EAGAIN", EAGAIN}, {"ENOSPC", ENOSPC}, {"EACCES", EACCES}};
  for (const auto& [n, e] : kNames) {
    if (name == n) return e;
  }
  return std::atoi(name.c_str());
}

int Usage() {
  std::fprintf(stderr,
               "usage: kernel_sim --root DIR [--netdev-delay-ms MS] [--ready-file FILE]\n"
               "                  [--fault SUBSTR=ERRNO]... [--max-enable N] [--driver NAME]...\n"
               "                  [--vf-netdevs-down]\n");
  return 1;
}

std::string Log(const std::string& s) {
  std::fprintf(stderr, "kernel_sim: %s\n", s.c_str());
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::string root, ready_file;
  int delay_ms = 200;
  std::vector<Fault> faults;
  std::vector<std::string> drivers;
  SriovSimOptions sim_options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--root") {
      root = value();
    } else if (a == "--netdev-delay-ms") {
      delay_ms = std::atoi(value().c_str());
    } else if (a == "--ready-file") {
      ready_file = value();
    } else if (a == "--fault") {
      std::string f = value();
      size_t eq = f.rfind('=');
      if (eq == std::string::npos) return Usage();
      faults.push_back({f.substr(0, eq), ErrnoFromName(f.substr(eq + 1))});
    } else if (a == "--max-enable") {
      sim_options.max_enable = std::atoi(value().c_str());
    } else if (a == "--driver") {
      drivers.push_back(value());
    } else if (a == "--vf-netdevs-down") {
      sim_options.vf_netdevs_down = true;
    } else {
      return Usage();
    }
  }
  if (root.empty()) return Usage();

  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
  int ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (sfd < 0 || ifd < 0) {
    Log(std::string("signalfd/inotify: ") + std::strerror(errno));
    return 1;
  }

  TreeWriter w(root);
  sim_options.keep_newer_write = true;  // writes come asynchronously here
  SriovSim sim(root, sim_options);
  for (const auto& d : drivers) {
    provisioner::Status s = sim.RegisterDriver(d);
    if (!s.ok()) {
      Log("register driver " + d + ": " + s.message());
      return 1;
    }
  }
  if (provisioner::Status s = sim.SyncModuleDrivers(); !s.ok()) {
    Log("register drivers of loaded modules: " + s.message());
    return 1;
  }
  std::map<int, std::string> watches;          // wd -> host dir
  std::map<std::string, int> current;          // PF host dir -> enabled VFs
  std::map<std::string, std::string> modes;    // IPoIB netdev dir -> its mode
  std::map<std::string, std::string> mtus;     // VF netdev dir -> its mtu file as accepted
  std::map<std::string, std::string> devlink;  // PF BDF -> its devlink capture as accepted
  auto watch = [&](const std::string& dir, uint32_t mask) {
    int wd = inotify_add_watch(ifd, w.Fs(dir).c_str(), mask);
    if (wd < 0) {
      Log("watch " + dir + ": " + std::strerror(errno));
      return false;
    }
    watches[wd] = dir;
    return true;
  };
  // Every PCI function (sriov_numvfs, driver_override), every driver
  // (bind/unbind), the bus (drivers_probe), /sys/module (new drivers). Run
  // again after each change: VFs and drivers come and go.
  auto scan = [&]() {
    bool ok = true;
    for (auto it = mtus.begin(); it != mtus.end();) {
      it = w.Exists(it->first) ? std::next(it) : mtus.erase(it);  // VF gone: a new one starts anew
    }
    for (const auto& bdf : w.List("/sys/bus/pci/devices")) {
      auto dir = w.RealPath("/sys/bus/pci/devices/" + bdf);
      if (!dir.ok() || !w.Exists(*dir + "/vendor")) continue;
      ok = watch(*dir, IN_CLOSE_WRITE) && ok;
      // IPoIB netdevs (a pkey file): create_child, delete_child, mode.
      for (const auto& n : w.List(*dir + "/net")) {
        const std::string nd = *dir + "/net/" + n;
        // VF netdevs: mtu (netdev_sim.h).
        if (IsVfNetdevDir(w, nd) && !w.Exists(nd + "/pkey")) {
          ok = watch(nd, IN_CLOSE_WRITE) && ok;
          if (!mtus.count(nd)) mtus[nd] = w.ReadFile(nd + "/mtu").value_or("");
          continue;
        }
        if (!w.Exists(nd + "/pkey")) continue;
        ok = watch(nd, IN_CLOSE_WRITE) && ok;
        if (!modes.count(nd)) modes[nd] = w.ReadAttr(nd + "/mode").value_or("");
      }
      if (w.Exists(*dir + "/sriov_numvfs") && !current.count(*dir)) {
        int n = ParseNumVfsWrite(w.ReadFile(*dir + "/sriov_numvfs").value_or("0"));
        current[*dir] = n < 0 ? 0 : n;
      }
    }
    for (const auto& d : w.List("/sys/bus/pci/drivers")) {
      ok = watch("/sys/bus/pci/drivers/" + d, IN_CLOSE_WRITE) && ok;
    }
    if (w.Exists("/sys/bus/pci/drivers_probe")) ok = watch("/sys/bus/pci", IN_CLOSE_WRITE) && ok;
    if (w.Exists("/sys/module")) ok = watch("/sys/module", IN_CREATE) && ok;
    // The eswitch module's devlink captures (eswitch_sim.h): written by
    // rename (IN_MOVED_TO) or in place.
    if (w.Exists("/run/provisioner/devlink")) {
      ok = watch("/run/provisioner/devlink", IN_CLOSE_WRITE | IN_MOVED_TO) && ok;
      for (const auto& bdf : w.List("/run/provisioner/devlink")) {
        if (!devlink.count(bdf))
          devlink[bdf] = w.ReadFile("/run/provisioner/devlink/" + bdf).value_or("");
      }
    }
    return ok;
  };
  if (!scan()) return 1;
  Log("watching " + std::to_string(current.size()) + " SR-IOV PF(s) under " + root);
  if (!ready_file.empty()) {
    std::string tmp = ready_file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr || std::fputs("ready\n", f) < 0 || std::fclose(f) != 0 ||
        std::rename(tmp.c_str(), ready_file.c_str()) != 0) {
      Log("cannot write ready file " + ready_file);
      return 1;
    }
  }

  std::vector<std::pair<uint64_t, Clock::time_point>> due;  // batch -> when its devices appear
  auto refuse = [&](const std::string& dir, int err, const std::string& why) {
    const std::string file = dir + "/sriov_numvfs";
    (void)w.WriteFile(file, std::to_string(current[dir]) + "\n", 0644);
    std::string line = file + " " + ErrnoName(err) + "\n";
    std::string log = "/run/kernel-sim/refused";
    std::string old = w.ReadFile(log).value_or("");
    (void)w.WriteFile(log, old + line, 0644);
    Log("refused " + line.substr(0, line.size() - 1) + " (" + why + ")");
  };
  auto log_refused = [&](const std::string& file, int err, const std::string& why) {
    std::string line = file + " " + ErrnoName(err) + "\n";
    std::string log = "/run/kernel-sim/refused";
    std::string old = w.ReadFile(log).value_or("");
    (void)w.WriteFile(log, old + line, 0644);
    Log("refused " + line.substr(0, line.size() - 1) + " (" + why + ")");
  };
  auto schedule = [&]() {
    if (sim.pending() > 0)
      due.emplace_back(sim.last_batch(), Clock::now() + std::chrono::milliseconds(delay_ms));
  };
  // A write to a write-only sysfs file (bind, unbind, drivers_probe): empty
  // it again first (so the writer's next write is not lost), then act.
  auto handle_action = [&](const std::string& file,
                           const std::function<int(const std::string&)>& act) {
    auto content = w.ReadFile(file);
    if (!content.ok() || content->empty()) return;  // our own reset
    (void)w.WriteFile(file, "", 0200);
    for (const auto& f : faults) {
      if (file.find(f.substring) != std::string::npos) {
        return log_refused(file, f.err, "injected fault");
      }
    }
    int err = act(*content);
    if (err != 0) return log_refused(file, err, sim.last_error());
    Log(file + " <- " + *content);
    schedule();
    (void)scan();
  };
  auto handle_override = [&](const std::string& dir) {
    const std::string file = dir + "/driver_override";
    auto content = w.ReadFile(file);
    // Empty: a writer mid-write, as for sriov_numvfs below (clearing the
    // override is a write of "\n").
    if (!content.ok() || content->empty()) return;
    std::string v = *content;
    while (!v.empty() && (v.back() == '\n' || v.back() == ' ')) v.pop_back();
    if (*content == (v.empty() ? std::string("(null)") : v) + "\n")
      return;  // as the kernel shows it
    int err = sim.WriteDriverOverride(dir, *content);
    if (err != 0) log_refused(file, err, sim.last_error());
  };
  // An IPoIB mode write: the file holds what was written; a refusal puts
  // the mode back, as the kernel never changed it.
  auto handle_mode = [&](const std::string& dir) {
    const std::string file = dir + "/mode";
    auto content = w.ReadFile(file);
    if (!content.ok() || content->empty()) return;
    std::string& cur = modes[dir];
    if (*content == cur + "\n") return;  // our own write, or a no-op
    int err = EINVAL;
    bool injected = false;
    for (const auto& f : faults) injected = injected || file.find(f.substring) != std::string::npos;
    if (injected) {
      err = EIO;
    } else {
      (void)w.WriteFile(file, cur + "\n", 0644);  // as before the write, for the simulator
      err = IpoibSetMode(w, dir, *content, cur);
    }
    if (err != 0) {
      (void)w.WriteFile(file, cur + "\n", 0644);
      return log_refused(file, err, injected ? "injected fault" : "not a mode it can take");
    }
    cur = w.ReadAttr(file).value_or(cur);
    Log(file + " <- " + cur);
  };
  // A VF netdev's mtu write: refused (the old value put back) as the kernel
  // refuses it.
  auto handle_mtu = [&](const std::string& dir) {
    const std::string file = dir + "/mtu";
    auto content = w.ReadFile(file);
    if (!content.ok() || content->empty()) return;  // a writer mid-write
    std::string& cur = mtus[dir];
    if (*content == cur) return;  // our own write, or a no-op
    int mtu = 0;
    bool injected = false;
    for (const auto& f : faults) injected = injected || file.find(f.substring) != std::string::npos;
    const int err = injected ? EIO : VfNetdevCheckMtu(w, dir, *content, &mtu);
    if (err != 0) {
      // Put back in one step (a rename): a reader never sees it empty.
      const std::string tmp = w.Fs(file) + ".sim-tmp";
      FILE* f = std::fopen(tmp.c_str(), "w");
      if (f != nullptr && std::fputs(cur.c_str(), f) >= 0 && std::fclose(f) == 0) {
        (void)std::rename(tmp.c_str(), w.Fs(file).c_str());
      }
      return log_refused(file, err, injected ? "injected fault" : "above the PF's or the maximum");
    }
    // Accepted: the file holds what was written; the kernel shows it as "<n>\n".
    cur = std::to_string(mtu) + "\n";
    if (*content != cur) (void)w.WriteFile(file, cur, 0644);
    Log(file + " <- " + std::to_string(mtu));
  };
  // A devlink capture written (the E-Switch mode): refused as mlx5/ice
  // refuse it (the accepted content put back in one rename), else the
  // representors follow.
  auto handle_devlink = [&](const std::string& bdf) {
    const std::string file = "/run/provisioner/devlink/" + bdf;
    if (!IsDevlinkCapture(file)) return;
    auto content = w.ReadFile(file);
    if (!content.ok() || content->empty()) return;
    std::string& cur = devlink[bdf];
    if (*content == cur) return;  // our own write, or a no-op
    int injected = 0;
    for (const auto& f : faults) {
      if (injected == 0 && file.find(f.substring) != std::string::npos) injected = f.err;
    }
    const int err = injected != 0 ? injected : EswitchCaptureCheck(w, bdf, cur, *content);
    if (err != 0) {
      const std::string tmp = w.Fs(file) + ".sim-tmp";
      FILE* f = std::fopen(tmp.c_str(), "w");
      if (f != nullptr && std::fputs(cur.c_str(), f) >= 0 && std::fclose(f) == 0) {
        (void)std::rename(tmp.c_str(), w.Fs(file).c_str());
      }
      return log_refused(file, err, injected != 0 ? "injected fault" : "the driver refuses it");
    }
    cur = *content;
    auto real = w.RealPath("/sys/bus/pci/devices/" + bdf);
    if (real.ok()) {
      provisioner::Status rs = EswitchSyncRepresentors(w, *real);
      if (!rs.ok()) Log("representors of " + bdf + ": " + rs.message());
    }
    Log(file + " <- " + cur.substr(0, cur.size() - (cur.empty() ? 0 : 1)));
    (void)scan();
  };
  auto handle = [&](const std::string& dir) {
    const std::string file = dir + "/sriov_numvfs";
    auto content = w.ReadFile(file);
    // Empty: a writer between its open(O_TRUNC) and its write(). Its own
    // close comes next; refusing now would write the old count back over
    // the value it is about to write (and the kernel does nothing for an
    // open without a write either).
    if (!content.ok() || content->empty()) return;
    int& cur = current[dir];
    if (*content == std::to_string(cur) + "\n") return;  // our own write, or a no-op
    for (const auto& f : faults) {
      if (file.find(f.substring) != std::string::npos) return refuse(dir, f.err, "injected fault");
    }
    int err = sim.WriteNumVfs(dir, *content, cur);
    if (err != 0) return refuse(dir, err, sim.last_error());
    int before = cur;
    // The count the simulated kernel now has, not the file read again: a
    // writer may already have written its next value into it.
    cur = sim.CountVfs(dir);
    {
      // In switchdev the driver adds or removes the VFs' representors.
      provisioner::Status rs = EswitchSyncRepresentors(w, dir);
      if (!rs.ok()) Log("representors of " + dir + ": " + rs.message());
    }
    Log(std::string(Basename(dir)) + ": sriov_numvfs " + std::to_string(before) + " -> " +
        std::to_string(cur));
    schedule();
    (void)scan();
  };

  alignas(struct inotify_event) char buf[64 * 1024];
  for (;;) {
    int timeout = -1;
    if (!due.empty()) {
      auto first = due.front().second;
      for (const auto& d : due) first = std::min(first, d.second);
      auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(first - Clock::now()).count();
      timeout = ms < 0 ? 0 : static_cast<int>(ms) + 1;
    }
    struct pollfd fds[2] = {{ifd, POLLIN, 0}, {sfd, POLLIN, 0}};
    int r = poll(fds, 2, timeout);
    if (r < 0 && errno != EINTR) {
      Log(std::string("poll: ") + std::strerror(errno));
      return 1;
    }
    if (r > 0 && (fds[1].revents & POLLIN)) {
      Log("stopping");
      return 0;
    }
    if (r > 0 && (fds[0].revents & POLLIN)) {
      for (;;) {
        ssize_t len = read(ifd, buf, sizeof buf);
        if (len <= 0) break;
        for (char* p = buf; p < buf + len;) {
          auto* ev = reinterpret_cast<struct inotify_event*>(p);
          p += sizeof(struct inotify_event) + ev->len;
          if (ev->len == 0) continue;
          auto it = watches.find(ev->wd);
          if (it == watches.end()) continue;
          const std::string dir = it->second;
          const std::string name = ev->name;
          if (dir == "/run/provisioner/devlink") {
            if (name.find(".sim-tmp") == std::string::npos && name[0] != '.') handle_devlink(name);
          } else if (name == "sriov_numvfs" && current.count(dir)) {
            handle(dir);
          } else if (name == "driver_override") {
            handle_override(dir);
          } else if ((name == "bind" || name == "unbind") &&
                     dir.rfind("/sys/bus/pci/drivers/", 0) == 0) {
            const std::string driver(Basename(dir));
            handle_action(dir + "/" + name, [&](const std::string& v) {
              return name == "bind" ? sim.Bind(driver, v) : sim.Unbind(driver, v);
            });
          } else if ((name == "create_child" || name == "delete_child") &&
                     w.Exists(dir + "/pkey")) {
            handle_action(dir + "/" + name, [&](const std::string& v) {
              return name == "create_child" ? IpoibCreateChild(w, dir, v)
                                            : IpoibDeleteChild(w, dir, v);
            });
          } else if (name == "mtu" && mtus.count(dir)) {
            handle_mtu(dir);
          } else if (name == "mode" && modes.count(dir)) {
            handle_mode(dir);
          } else if (name == "drivers_probe" && dir == "/sys/bus/pci") {
            handle_action(dir + "/" + name,
                          [&](const std::string& v) { return sim.DriversProbe(v); });
          } else if (dir == "/sys/module") {
            provisioner::Status rs = sim.SyncModuleDrivers();
            if (!rs.ok()) Log("register drivers of loaded modules: " + rs.message());
            (void)scan();
          }
        }
      }
    }
    if (!due.empty()) {
      auto now = Clock::now();
      uint64_t up_to = 0;
      std::vector<std::pair<uint64_t, Clock::time_point>> later;
      for (const auto& d : due) {
        if (d.second <= now) {
          up_to = std::max(up_to, d.first);
        } else {
          later.push_back(d);
        }
      }
      if (up_to > 0) {
        due = std::move(later);
        provisioner::Status s = sim.Flush(up_to);
        if (!s.ok()) Log("creating VF netdevs: " + s.message());
        (void)scan();  // the new VF netdevs' mtu
      }
    }
  }
}
