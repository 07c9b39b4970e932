#include "test/sim/sim_host_fs.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>

#include "test/sim/eswitch_sim.h"
#include "test/sim/ipoib_sim.h"
#include "test/sim/netdev_sim.h"
#include "test/sim/rename_sim.h"
#include "test/sim/roce_sim.h"

namespace provisioner::testing {
namespace {

void SleepFor(std::chrono::milliseconds d) {
  if (d.count() > 0) std::this_thread::sleep_for(d);
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

SimulatedHostFs::SimulatedHostFs(std::string root, SimOptions options)
    : inner_(NewLocalHostFs(root)), options_(std::move(options)), sim_(root, options_.sriov) {
  (void)sim_.SyncModuleDrivers();
}

void SimulatedHostFs::Tick() const {
  ++ticks_;
  if (!due_at_.empty()) {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<uint64_t, std::chrono::steady_clock::time_point>> later;
    for (const auto& [batch, at] : due_at_) {
      if (at <= now) {
        (void)sim_.FlushBatch(batch);
      } else {
        later.emplace_back(batch, at);
      }
    }
    due_at_ = std::move(later);
  }
  if (due_.empty()) return;
  uint64_t up_to = 0;
  std::vector<std::pair<uint64_t, uint64_t>> later;
  for (const auto& [batch, at] : due_) {
    if (at < ticks_) {
      up_to = std::max(up_to, batch);
    } else {
      later.emplace_back(batch, at);
    }
  }
  if (up_to == 0) return;
  due_ = std::move(later);
  (void)sim_.Flush(up_to);
}

StatusOr<std::string> SimulatedHostFs::ReadFile(std::string_view path) const {
  // The card's time to answer, outside the lock: cards answer at once.
  if (options_.latency.firmware_query.count() > 0 && IsFirmwareCapture(path)) {
    SleepFor(options_.latency.firmware_query);
  }
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Tick();
  StatusOr<std::string> r = inner_->ReadFile(path);
  if (!r.ok() && r.status().err() == ENOENT && options_.gid_attrs_einval) {
    // .../ports/<p>/gid_attrs/{types,ndevs}/<i>
    std::string_view index = Basename(path);
    std::string_view kind_dir = Dirname(path);
    std::string_view kind = Basename(kind_dir);
    std::string_view attrs_dir = Dirname(kind_dir);
    if (AllDigits(index) && (kind == "types" || kind == "ndevs") &&
        Basename(attrs_dir) == "gid_attrs") {
      std::string gid = JoinPath(JoinPath(Dirname(attrs_dir), "gids"), index);
      if (inner_->Exists(gid)) return ErrnoToStatus(EINVAL, "read " + std::string(path));
    }
  }
  return r;
}

StatusOr<std::vector<std::string>> SimulatedHostFs::ListDir(std::string_view path) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Tick();
  return inner_->ListDir(path);
}

StatusOr<std::string> SimulatedHostFs::ReadLink(std::string_view path) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Tick();
  return inner_->ReadLink(path);
}

StatusOr<std::string> SimulatedHostFs::Resolve(std::string_view path) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Tick();
  return inner_->Resolve(path);
}

bool SimulatedHostFs::Exists(std::string_view path) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Tick();
  return inner_->Exists(path);
}

bool SimulatedHostFs::IsDir(std::string_view path) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Tick();
  return inner_->IsDir(path);
}

bool SimulatedHostFs::IsSymlink(std::string_view path) const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  Tick();
  return inner_->IsSymlink(path);
}

int SimulatedHostFs::MatchFault(std::string_view path) {
  std::string resolved = inner_->Resolve(path).value_or(std::string(path));
  for (auto& f : options_.faults) {
    if (f.times == 0) continue;
    bool hit = false;
    if (f.nth_write > 0 && f.nth_write == writes_) hit = true;
    if (!f.path_substring.empty() && (path.find(f.path_substring) != std::string_view::npos ||
                                      resolved.find(f.path_substring) != std::string::npos)) {
      hit = true;
    }
    if (!hit) continue;
    if (f.times > 0) --f.times;
    return f.err;
  }
  return 0;
}

Status SimulatedHostFs::QueueLastBatch(const std::string& pf_dir) {
  if (sim_.pending() == 0) return OkStatus();
  // Whose batch: never_settle names PFs by address (the directory's basename
  // for sriov_numvfs; a bind's device is a VF: its physfn's).
  std::string pf(Basename(pf_dir));
  if (auto physfn = inner_->ReadLink(pf_dir + "/physfn"); physfn.ok()) pf = Basename(*physfn);
  for (const std::string& never : options_.never_settle) {
    if (never == pf) return OkStatus();  // queued for good
  }
  if (options_.latency.netdev_appear.count() > 0) {
    due_at_.emplace_back(sim_.last_batch(),
                         std::chrono::steady_clock::now() + options_.latency.netdev_appear);
  } else if (options_.settle_reads == 0) {
    RETURN_IF_ERROR(sim_.Flush());
  } else if (options_.settle_reads > 0) {
    due_.emplace_back(sim_.last_batch(), ticks_ + static_cast<uint64_t>(options_.settle_reads));
  }
  return OkStatus();
}

SimLatencies Mlx5Latencies() {
  SimLatencies l;
  l.enable_per_vf = std::chrono::milliseconds(100);
  l.disable_per_vf = std::chrono::milliseconds(30);
  l.netdev_appear = std::chrono::seconds(1);
  l.bind = std::chrono::milliseconds(50);
  l.config_write = std::chrono::milliseconds(1);
  l.firmware_query = std::chrono::seconds(1);
  l.firmware_set = std::chrono::seconds(1);
  return l;
}

bool IsFirmwareCapture(std::string_view path) {
  constexpr std::string_view kPrefix = "/run/provisioner/mstconfig/";
  constexpr std::string_view kSuffix = ".query";
  return path.size() > kPrefix.size() + kSuffix.size() &&
         path.substr(0, kPrefix.size()) == kPrefix &&
         path.substr(path.size() - kSuffix.size()) == kSuffix &&
         path.find('/', kPrefix.size()) == std::string_view::npos;
}

Status SimulatedHostFs::WriteAttr(std::string_view path, std::string_view value) {
  // The kernel's time for this write, slept before acting and outside the
  // lock: writes to different PFs overlap.
  {
    const std::string_view file = Basename(path);
    if (file == "sriov_numvfs") {
      const int n = ParseNumVfsWrite(value);
      int current = 0;
      if (n == 0) {
        auto text = inner_->ReadFile(std::string(Dirname(path)) + "/sriov_numvfs");
        if (text.ok()) current = std::atoi(text->c_str());
      }
      SleepFor(n > 0 ? options_.latency.enable_per_vf * n
                     : options_.latency.disable_per_vf * current);
    } else if (file == "bind" || file == "unbind") {
      SleepFor(options_.latency.bind);
    }
  }
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ++writes_;
  if (int err = MatchFault(path); err != 0) return ErrnoToStatus(err, "write " + std::string(path));
  auto resolved = inner_->Resolve(path);
  if (resolved.ok()) {
    // Driver binding: driver_override, drivers/<d>/{bind,unbind}, drivers_probe.
    const std::string file(Basename(*resolved));
    const std::string dir(Dirname(*resolved));
    int err = -1;
    if (file == "driver_override" && inner_->Exists(JoinPath(dir, "vendor"))) {
      err = sim_.WriteDriverOverride(dir, value);
    } else if ((file == "bind" || file == "unbind") &&
               Dirname(dir) == std::string_view("/sys/bus/pci/drivers")) {
      const std::string driver(Basename(dir));
      err = file == "bind" ? sim_.Bind(driver, value) : sim_.Unbind(driver, value);
    } else if (*resolved == "/sys/bus/pci/drivers_probe") {
      err = sim_.DriversProbe(value);
    }
    if (err >= 0) {
      ++extra_writes_;
      if (err != 0) return ErrnoToStatus(err, "write " + std::string(path));
      std::string device(value);
      while (!device.empty() && std::isspace(static_cast<unsigned char>(device.back()))) {
        device.pop_back();
      }
      return QueueLastBatch(file == "driver_override" ? dir : "/sys/bus/pci/devices/" + device);
    }
  }
  {
    // A rename request of the names module's tree backend (rename_sim.h):
    // answered, never stored.
    const std::string p(path);
    const bool net = p.rfind(kNetdevRenameDir, 0) == 0;
    if (net || p.rfind(kRdmaRenameDir, 0) == 0) {
      TreeWriter w(root());
      const std::string old_name(Basename(p));
      ++extra_writes_;
      const int err = net ? RenameNetdev(w, old_name, value) : RenameRdmaDevice(w, old_name, value);
      if (err != 0) return ErrnoToStatus(err, "write " + p);
      return OkStatus();
    }
  }
  if (resolved.ok() && inner_->Exists(JoinPath(Dirname(*resolved), "pkey"))) {
    // An IPoIB netdev (ipoib_sim.h): children and mode.
    const std::string file(Basename(*resolved));
    const std::string dir(Dirname(*resolved));
    TreeWriter w(root());
    int err = -1;
    if (file == "create_child") {
      err = IpoibCreateChild(w, dir, value);
    } else if (file == "delete_child") {
      err = IpoibDeleteChild(w, dir, value);
    } else if (file == "mode") {
      err = IpoibSetMode(w, dir, value, w.ReadAttr(dir + "/mode").value_or(""));
    }
    if (err >= 0) {
      ++extra_writes_;
      if (err != 0) return ErrnoToStatus(err, "write " + std::string(path));
      return OkStatus();
    }
  }
  if (resolved.ok() && Basename(*resolved) == "mtu") {
    // A VF netdev's MTU (netdev_sim.h): refused above its PF's or its maximum.
    TreeWriter w(root());
    const std::string dir(Dirname(*resolved));
    if (IsVfNetdevDir(w, dir)) {
      ++extra_writes_;
      if (int err = VfNetdevSetMtu(w, dir, value); err != 0) {
        return ErrnoToStatus(err, "write " + std::string(path));
      }
      return OkStatus();
    }
  }
  if (resolved.ok() && inner_->Exists(path)) {
    // The default RoCE ToS files (roce_sim.h), by the path as written: the
    // infiniband class links resolve into the device's directory.
    TreeWriter w(root());
    const int err = RoceTosWrite(w, std::string(path), *resolved, value);
    if (err >= 0) {
      ++extra_writes_;
      if (err != 0) return ErrnoToStatus(err, "write " + std::string(path));
      return OkStatus();
    }
  }
  if (resolved.ok() && Basename(*resolved) == "sriov_numvfs") {
    std::string dir(Dirname(*resolved));
    if (inner_->Exists(JoinPath(dir, "sriov_totalvfs"))) {
      ++extra_writes_;
      int err = sim_.WriteNumVfs(dir, value);
      if (err != 0) return ErrnoToStatus(err, "write " + std::string(path));
      {
        // In switchdev the driver adds or removes the VFs' representors.
        TreeWriter w(root());
        RETURN_IF_ERROR(EswitchSyncRepresentors(w, dir));
      }
      return QueueLastBatch(dir);
    }
  }
  Status s = inner_->WriteAttr(path, value);
  if (s.ok()) RETURN_IF_ERROR(sim_.SyncModuleDrivers());
  return s;
}

Status SimulatedHostFs::WriteFileAtomic(std::string_view path, std::string_view content, int mode) {
  if (options_.latency.firmware_set.count() > 0 && IsFirmwareCapture(path)) {
    SleepFor(options_.latency.firmware_set);
  }
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ++writes_;
  if (int err = MatchFault(path); err != 0) return ErrnoToStatus(err, "write " + std::string(path));
  if (IsDevlinkCapture(path)) {
    // The eswitch module's devlink request under a tree root (eswitch_sim.h).
    TreeWriter w(root());
    const int err = EswitchCaptureWrite(w, std::string(Basename(path)), content);
    if (err != 0) return ErrnoToStatus(err, "write " + std::string(path));
    return OkStatus();
  }
  Status s = inner_->WriteFileAtomic(path, content, mode);
  if (s.ok()) RETURN_IF_ERROR(sim_.SyncModuleDrivers());
  return s;
}

Status SimulatedHostFs::WriteAt(std::string_view path, uint64_t offset, std::string_view bytes) {
  SleepFor(options_.latency.config_write);
  std::lock_guard<std::recursive_mutex> lock(mu_);
  ++writes_;
  if (int err = MatchFault(path); err != 0) {
    return ErrnoToStatus(err,
                         "write " + std::string(path) + " at offset " + std::to_string(offset));
  }
  return inner_->WriteAt(path, offset, bytes);
}

Status SimulatedHostFs::RemoveFile(std::string_view path) {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  return inner_->RemoveFile(path);
}

const HostFsStats& SimulatedHostFs::stats() const {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  stats_ = inner_->stats();
  stats_.files_opened_for_write += extra_writes_;
  return stats_;
}

Status SimulatedHostFs::FlushPending() {
  std::lock_guard<std::recursive_mutex> lock(mu_);
  due_.clear();
  due_at_.clear();
  return sim_.Flush();
}

std::unique_ptr<HostFs> NewSimulatedHostFs(std::string root, SimOptions options) {
  return std::make_unique<SimulatedHostFs>(std::move(root), std::move(options));
}

}  // namespace provisioner::testing
