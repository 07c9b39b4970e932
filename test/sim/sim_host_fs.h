// An in-process simulated kernel behind the HostFs interface: a LocalHostFs
// over a host tree whose writes to `sriov_numvfs` behave like Linux + mlx5
// (see sriov_sim.h), with fault injection for apply/rollback tests. Safe for
// concurrent use (one lock around the simulator and the counters; latencies
// are slept outside it), as apply's workers use the host layer.
//
//   auto fs = NewSimulatedHostFs(root, {.settle_reads = 3});
//   fs->WriteAttr("/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs", "4");
//   // -> VF functions exist now; netdevs/RDMA devices from the 4th read on.
#ifndef PROVISIONER_TEST_SIM_SIM_HOST_FS_H_
#define PROVISIONER_TEST_SIM_SIM_HOST_FS_H_

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/host/host_fs.h"
#include "test/sim/sriov_sim.h"

namespace provisioner::testing {

// A write that fails with `err` and has no effect. Writes are WriteAttr, WriteAt and
// WriteFileAtomic calls, counted from 1 across the whole HostFs.
struct WriteFault {
  int nth_write = 0;           // fail the Nth write; 0 = not by number
  std::string path_substring;  // fail writes whose path (as given or resolved) contains it
  int err = EIO;               // EBUSY, ENOMEM, EIO, EPERM, ...
  int times = -1;              // how many times it fires; -1 = every match
};

// How long the kernel and the driver take, per operation (0: at once). The
// figures of a ConnectX-6/7 with mlx5 (docs/BENCHMARKS.md says where they
// come from): Mlx5Latencies(). Sleeps happen outside the simulator's lock, so
// operations on different PFs overlap as they do in the kernel.
struct SimLatencies {
  // A write of N to sriov_numvfs returns after every VF is probed: N times this.
  std::chrono::milliseconds enable_per_vf{0};
  // A write of 0 returns after every VF is removed: current count times this.
  std::chrono::milliseconds disable_per_vf{0};
  // New VFs' netdevs and RDMA devices appear this long after the write
  // returned (by time, instead of `settle_reads` reads, when > 0).
  std::chrono::milliseconds netdev_appear{0};
  // A driver bind/unbind (a VF's rebind for its GUIDs, vfio-pci).
  std::chrono::milliseconds bind{0};
  // A PCI config-space write (ACS, MaxReadReq).
  std::chrono::milliseconds config_write{0};
  // The card's firmware tool: under a tree root `mstconfig -e -d <BDF> query`
  // is a read of the capture /run/provisioner/mstconfig/<BDF>.query and
  // `mstconfig -d <BDF> -y set` a write of it (modules/firmware
  // firmware_tool.h). Each read of a capture takes firmware_query, each
  // write firmware_set; a set reads the capture first, as mstconfig queries
  // the card before it writes, so one set costs both.
  std::chrono::milliseconds firmware_query{0};
  std::chrono::milliseconds firmware_set{0};
};

// mlx5 on a ConnectX-7: about 100 ms per VF probed by an enable (the write
// returns after each VF's mlx5_core probe, EQs, a firmware command or more),
// 30 ms per VF removed, netdevs 1 s after, 50 ms a bind, 1 ms a config write;
// mstconfig: 1 s a query, 1 s a set (the write after the set's own query).
SimLatencies Mlx5Latencies();

// True for a firmware tool capture: /run/provisioner/mstconfig/<BDF>.query.
bool IsFirmwareCapture(std::string_view path);

struct SimOptions {
  // Netdevs and RDMA devices of new VFs stay invisible to this many later
  // reads (ReadFile, ListDir, ReadLink, Resolve, Exists, IsDir, IsSymlink) and
  // appear for the next one; 0 = at once, negative = never (until
  // FlushPending()).
  int settle_reads = 3;
  SriovSimOptions sriov;
  std::vector<WriteFault> faults;
  // Reading gid_attrs/{types,ndevs}/<i> of a slot whose file is absent but
  // whose gids/<i> exists fails EINVAL, as the kernel does for empty slots.
  bool gid_attrs_einval = true;
  SimLatencies latency;
  // PFs (addresses) whose new VFs never get their netdevs (a driver that
  // hangs in probe): a wait for them times out.
  std::vector<std::string> never_settle;
};

class SimulatedHostFs final : public HostFs {
 public:
  SimulatedHostFs(std::string root, SimOptions options);

  const std::string& root() const override { return inner_->root(); }
  StatusOr<std::string> ReadFile(std::string_view path) const override;
  StatusOr<std::vector<std::string>> ListDir(std::string_view path) const override;
  StatusOr<std::string> ReadLink(std::string_view path) const override;
  StatusOr<std::string> Resolve(std::string_view path) const override;
  bool Exists(std::string_view path) const override;
  bool IsDir(std::string_view path) const override;
  bool IsSymlink(std::string_view path) const override;
  Status WriteAttr(std::string_view path, std::string_view value) override;
  Status WriteFileAtomic(std::string_view path, std::string_view content, int mode) override;
  // PCI config space: a plain positioned write (faults apply, as to every write).
  Status WriteAt(std::string_view path, uint64_t offset, std::string_view bytes) override;
  Status RemoveFile(std::string_view path) override;
  StatusOr<FileOwnership> StatFile(std::string_view path) const override {
    return inner_->StatFile(path);
  }
  Status SetOwner(std::string_view path, uint32_t uid, uint32_t gid) override {
    return inner_->SetOwner(path, uid, gid);
  }
  std::string FsPath(std::string_view path) const override { return inner_->FsPath(path); }
  const HostFsStats& stats() const override;

  // Creates every queued netdev/RDMA device now.
  Status FlushPending();
  size_t pending() const { return sim_.pending(); }
  // Writes seen so far (including failed ones).
  int writes() const {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    return writes_;
  }
  // Adds a fault at run time.
  void AddFault(WriteFault f) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    options_.faults.push_back(std::move(f));
  }
  SriovSim& sim() { return sim_; }

 private:
  void Tick() const;
  // errno of a matching fault, 0 if none.
  int MatchFault(std::string_view path);

  // Queues the netdevs of the simulator's last batch (the PF at `pf_dir`).
  Status QueueLastBatch(const std::string& pf_dir);

  mutable std::recursive_mutex mu_;
  std::unique_ptr<HostFs> inner_;
  SimOptions options_;
  mutable std::vector<std::pair<uint64_t, std::chrono::steady_clock::time_point>> due_at_;
  mutable SriovSim sim_;
  mutable std::vector<std::pair<uint64_t, uint64_t>>
      due_;  // batch -> last read tick it is hidden from
  mutable uint64_t ticks_ = 0;
  int writes_ = 0;
  uint64_t extra_writes_ = 0;
  mutable HostFsStats stats_;
};

std::unique_ptr<HostFs> NewSimulatedHostFs(std::string root, SimOptions options = {});

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SIM_SIM_HOST_FS_H_
