#include "modules/sriov/sriov_host.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <future>
#include <memory>
#include <thread>
#include <utility>

#include "engine/base/strings.h"
#include "engine/model/pci_address.h"

namespace provisioner {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kVirtfn = "virtfn";

std::optional<long> ParseDecimal(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  long v = std::strtol(s.c_str(), &end, 10);
  if (end == s.c_str() || *end != '\0') return std::nullopt;
  return v;
}

// A mandatory integer attribute. An empty read is kUnavailable: a tree being
// rewritten by a simulator can show one; the kernel never does.
StatusOr<int> ReadInt(const HostFs& fs, const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, fs.ReadAttr(path));
  if (text.empty()) return UnavailableError("read " + path + ": empty");
  auto v = ParseDecimal(text);
  if (!v) return FailedPreconditionError("read " + path + ": not a number: " + Quote(text));
  return static_cast<int>(*v);
}

// An optional integer attribute: nullopt when missing or unreadable.
std::optional<int> ReadOptionalInt(const HostFs& fs, const std::string& path) {
  auto text = fs.ReadAttr(path);
  if (!text.ok()) return std::nullopt;
  auto v = ParseDecimal(*text);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

// The PF's virtfnN links as (N, link name), by N (ListDir sorts virtfn10 before virtfn2).
StatusOr<std::vector<std::pair<int, std::string>>> VirtfnLinks(const HostFs& fs,
                                                               const std::string& pf_dir) {
  ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.ListDir(pf_dir));
  std::vector<std::pair<int, std::string>> out;
  for (const std::string& e : entries) {
    if (e.compare(0, kVirtfn.size(), kVirtfn) != 0) continue;
    auto n = ParseDecimal(e.substr(kVirtfn.size()));
    if (!n || *n < 0) continue;
    out.emplace_back(static_cast<int>(*n), e);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// sysfs writes can block in the kernel; the wait for the answer is bounded.
// On timeout the writing thread is left behind (it owns copies of its
// arguments) and the caller gets DeadlineExceeded.
Status TimeBoxedWrite(HostFs* fs, const std::string& path, const std::string& value,
                      milliseconds limit) {
  auto task = std::make_shared<std::packaged_task<Status()>>(
      [fs, path, value] { return fs->WriteAttr(path, value); });
  std::future<Status> result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(limit) == std::future_status::timeout) {
    return DeadlineExceededError(
        "write " + path + ": no answer from the kernel after " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit).count()) +
        "s (a VF held open, e.g. by a VM through vfio-pci?)");
  }
  return result.get();
}

std::string Seconds(milliseconds d) {
  long long ms = d.count();
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

// Polls until `bdf` shows `target` settled VFs, or the settle timeout. The
// count in sriov_numvfs is final once the write returned: a different one
// means the driver enabled fewer VFs than asked, and waiting cannot fix it.
Status WaitSettled(const std::string& bdf, int target, HostContext& ctx,
                   const NumVfsApplyOptions& options) {
  Clock& clock = ctx.clock != nullptr ? *ctx.clock : RealClock();
  const auto start = clock.Now();
  const auto deadline = start + ctx.settle_timeout;
  auto last_progress = start;
  for (;;) {
    auto polled = ReadNumVfsState(*ctx.fs, bdf);
    if (!polled.ok()) {
      if (polled.status().code() != StatusCode::kUnavailable || clock.Now() >= deadline) {
        return polled.status();
      }
      if (!WaitStep(clock, options.poll_interval, ctx.interrupt)) {
        return FailedPreconditionError(bdf + ": the wait for the VFs ended by a signal");
      }
      continue;
    }
    const NumVfsState& state = *polled;
    const int present = static_cast<int>(state.vfs.size());
    if (state.num_vfs != target) {
      if (target > 0 && state.num_vfs < target) {
        return FailedPreconditionError(
            bdf + ": the driver enabled only " + std::to_string(state.num_vfs) + " of " +
            std::to_string(target) + " VFs (sriov_numvfs reads " + std::to_string(state.num_vfs) +
            "; firmware NUM_OF_VFS, MMIO or bus numbers?)");
      }
      return FailedPreconditionError(bdf + ": sriov_numvfs reads " + std::to_string(state.num_vfs) +
                                     " after writing " + std::to_string(target));
    }
    const int ready = state.Ready();
    if (present == target && ready == present) return OkStatus();

    std::string status;
    if (present != target) {
      status = target == 0
                   ? std::to_string(present) + " VFs still present"
                   : std::to_string(present) + "/" + std::to_string(target) + " VFs present";
    } else {
      status = std::to_string(ready) + "/" + std::to_string(target) + " VFs have netdevs";
    }
    const auto now = clock.Now();
    if (now >= deadline) {
      std::string missing;
      int listed = 0;
      for (const VfState& vf : state.vfs) {
        if (!vf.needs_netdev || vf.has_netdev) continue;
        if (listed++ == 8) {
          missing += ", ...";
          break;
        }
        missing += (missing.empty() ? "" : ", ") + vf.pci_address + " (" + vf.driver + ")";
      }
      std::string msg = bdf + ": not settled after " +
                        Seconds(std::chrono::duration_cast<milliseconds>(now - start)) + ": " +
                        status;
      if (present == target && !missing.empty()) msg += "; no netdev yet: " + missing;
      return DeadlineExceededError(std::move(msg));
    }
    if (ctx.progress != nullptr && now - last_progress >= options.progress_interval) {
      // A wait: the display keeps its clock from the first call, against the limit.
      ctx.progress->Waiting(bdf + ": " + status, ctx.settle_timeout);
      last_progress = now;
    }
    auto left = std::chrono::duration_cast<milliseconds>(deadline - now);
    // A signal (apply's SIGTERM, Ctrl-C) ends the wait at once: the write is
    // done, the rollback starts now, not when the settle timeout runs out.
    if (!WaitStep(clock, std::max(milliseconds(1), std::min(options.poll_interval, left)),
                  ctx.interrupt)) {
      return FailedPreconditionError(bdf + ": the wait ended by a signal after " +
                                     Seconds(std::chrono::duration_cast<milliseconds>(now - start)) +
                                     ": " + status);
    }
  }
}

}  // namespace

std::string PciDevicePath(const std::string& bdf) { return "/sys/bus/pci/devices/" + bdf; }

int NumVfsState::Ready() const {
  int n = 0;
  for (const VfState& vf : vfs) n += (!vf.needs_netdev || vf.has_netdev) ? 1 : 0;
  return n;
}

StatusOr<std::optional<SriovInfo>> ReadSriovInfo(const HostFs& fs, const std::string& bdf,
                                                 const HostFacts& facts,
                                                 std::vector<std::string>* warnings) {
  const std::string dev = PciDevicePath(bdf);
  const std::string total_path = dev + "/sriov_totalvfs";
  if (!fs.Exists(total_path)) return std::optional<SriovInfo>();
  SriovInfo s;
  // Values the kernel cannot show (TotalVFs is a 16-bit register, NumVFs
  // at most TotalVFs) or that do not parse: a warning on this function, its
  // SR-IOV facts left out, the rest of the host still discovered.
  auto in_range = [&](const std::string& path, long lo, long hi) -> std::optional<int> {
    auto text = fs.ReadAttr(path);
    if (!text.ok()) {
      warnings->push_back(bdf + ": SR-IOV left out: " + text.status().message());
      return std::nullopt;
    }
    errno = 0;
    auto v = ParseDecimal(*text);
    if (!v || errno == ERANGE || *v < lo || *v > hi) {
      warnings->push_back(bdf + ": SR-IOV left out: " + path + " reads " + Quote(*text) +
                          ", not a number in the kernel's range " + std::to_string(lo) + ".." +
                          std::to_string(hi));
      return std::nullopt;
    }
    return static_cast<int>(*v);
  };
  auto total = in_range(total_path, 0, 65535);
  if (!total) return std::optional<SriovInfo>();
  s.total_vfs = *total;
  auto num = in_range(dev + "/sriov_numvfs", 0, s.total_vfs);
  if (!num) return std::optional<SriovInfo>();
  s.num_vfs = *num;
  s.offset = ReadOptionalInt(fs, dev + "/sriov_offset");
  s.stride = ReadOptionalInt(fs, dev + "/sriov_stride");
  if (auto vf_device = fs.ReadAttr(dev + "/sriov_vf_device"); vf_device.ok()) {
    s.vf_device = *vf_device;
  }
  if (auto autoprobe = ReadOptionalInt(fs, dev + "/sriov_drivers_autoprobe")) {
    s.drivers_autoprobe = *autoprobe != 0;
  }
  ASSIGN_OR_RETURN(auto links, VirtfnLinks(fs, dev));
  for (const auto& [index, name] : links) {
    const std::string link = JoinPath(dev, name);
    VfInfo vf;
    vf.vf_index = index;
    vf.pci_address = LinkBasenameIfPresent(fs, link);
    if (vf.pci_address.empty()) continue;
    // A VF is another PCI function of this tree: a link to the PF itself or
    // to something that is no PCI function (a link leaving the tree) is not.
    if (!PciAddress::ParseFull(vf.pci_address) || vf.pci_address == bdf) {
      warnings->push_back(bdf + ": " + link + " -> " + Quote(vf.pci_address) +
                          " is not a VF of it (" +
                          (vf.pci_address == bdf ? "the PF itself" : "not a PCI function") +
                          "): skipped");
      continue;
    }
    if (const PciFunction* f = facts.FindPci(vf.pci_address)) {
      vf.driver = f->driver;
      vf.netdevs = f->netdevs;
      vf.rdma_devices = f->rdma_devices;
    } else {
      vf.driver = LinkBasenameIfPresent(fs, link + "/driver");
      vf.netdevs = ListDirIfPresent(fs, link + "/net");
      vf.rdma_devices = ListDirIfPresent(fs, link + "/infiniband");
    }
    s.vfs.push_back(std::move(vf));
  }
  return std::optional<SriovInfo>(std::move(s));
}

StatusOr<NumVfsState> ReadNumVfsState(const HostFs& fs, const std::string& bdf) {
  const std::string dev = PciDevicePath(bdf);
  NumVfsState state;
  ASSIGN_OR_RETURN(state.num_vfs, ReadInt(fs, dev + "/sriov_numvfs"));
  ASSIGN_OR_RETURN(auto links, VirtfnLinks(fs, dev));
  for (const auto& [index, name] : links) {
    const std::string link = JoinPath(dev, name);
    VfState vf;
    vf.pci_address = LinkBasenameIfPresent(fs, link);
    vf.driver = LinkBasenameIfPresent(fs, link + "/driver");
    vf.needs_netdev = !vf.driver.empty() && !IsUserspaceDriver(vf.driver);
    vf.has_netdev = !RegisteredNetdevs(fs, link).empty();
    state.vfs.push_back(std::move(vf));
  }
  return state;
}

Status ApplyNumVfs(const std::string& bdf, int target, HostContext& ctx,
                   const NumVfsApplyOptions& options) {
  const std::string context = "apply " + bdf + " numVfs";
  if (!PciAddress::ParseFull(bdf)) return InvalidArgumentError(context + " <- not a PCI address");
  if (target < 0)
    return InvalidArgumentError(context + " <- negative count " + std::to_string(target));
  const std::string path = PciDevicePath(bdf) + "/sriov_numvfs";

  auto current = ReadInt(*ctx.fs, path);
  if (!current.ok()) return current.status().WithContext(context);
  if (*current != target) {
    if (*current != 0 && target != 0) {
      // The kernel refuses non-zero -> non-zero (EBUSY): remove the VFs first.
      if (ctx.progress != nullptr) {
        ctx.progress->Step(bdf + ": numVfs " + std::to_string(*current) +
                           " -> 0 first (the kernel changes VF counts only from 0)");
      }
      Status s = TimeBoxedWrite(ctx.fs, path, "0\n", options.write_timeout);
      if (s.ok()) s = WaitSettled(bdf, 0, ctx, options);
      if (!s.ok()) return s.WithContext("reset to 0 first").WithContext(context);
    }
    Status s = TimeBoxedWrite(ctx.fs, path, std::to_string(target) + "\n", options.write_timeout);
    if (!s.ok() && s.err() == ENOMEM && target > 0) {
      // The kernel found no bus numbers or MMIO window for the VFs (the BIOS
      // sized the bridges for the PF alone): the sriov-network-operator then
      // adds pci=realloc to the kernel command line.
      s = Status(s.code(),
                 s.message() + ": no bus numbers or MMIO space for " + std::to_string(target) +
                     " VFs; boot with pci=realloc (spec.kernel.cmdline: [pci=realloc])",
                 s.err());
    }
    if (!s.ok()) return s.WithContext(context);
  }
  return WaitSettled(bdf, target, ctx, options).WithContext(context);
}

Status VerifyNumVfs(const std::string& bdf, int target, const std::string& label,
                    const HostFs& fs) {
  if (!PciAddress::ParseFull(bdf)) {
    return InvalidArgumentError("verify " + bdf + ": not a PCI address");
  }
  auto state = ReadNumVfsState(fs, bdf);
  if (!state.ok()) return state.status().WithContext("verify " + label);
  const int present = static_cast<int>(state->vfs.size());
  if (state->num_vfs != target) {
    return FailedPreconditionError(label + ": desired " + std::to_string(target) + ", current " +
                                   std::to_string(state->num_vfs));
  }
  if (present != target) {
    return FailedPreconditionError(label + ": desired " + std::to_string(target) + ", current " +
                                   std::to_string(present) + " VFs present (sriov_numvfs reads " +
                                   std::to_string(state->num_vfs) + ")");
  }
  return OkStatus();
}

}  // namespace provisioner
