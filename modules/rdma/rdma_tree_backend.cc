// The rdma backends under a tree root (rdma_backend.h): the kernel's
// stand-ins, read and written through HostFs.
#include <cerrno>
#include <optional>

#include "modules/rdma/rdma_backend.h"
#include "modules/rdma/rdma_sysfs.h"

namespace provisioner::rdma {
namespace {

// The read-only ib_core parameter is the simulated kernel's state:
// replacing it stands in for the netlink switch.
class TreeNetnsBackend final : public NetnsBackend {
 public:
  explicit TreeNetnsBackend(HostFs& fs) : fs_(fs) {}

  StatusOr<std::string> Get() override {
    if (auto p = ReadNetnsModeParam(fs_)) return *p;
    return Status(StatusCode::kFailedPrecondition,
                  std::string(kNetnsModeParam) + " missing: ib_core not loaded", ENOENT);
  }

  std::string Source() const override { return kNetnsModeParam; }

  Status Set(const std::string& mode, bool* refused) override {
    *refused = true;
    // Like the kernel, it refuses while other network namespaces exist:
    // named ones (`ip netns add`) show in /run/netns.
    auto netns = fs_.ListDir("/run/netns");
    if (!fs_.Exists(kNetnsModeParam)) {
      return Status(StatusCode::kFailedPrecondition,
                    std::string(kNetnsModeParam) + ": ENOENT: ib_core not loaded", ENOENT);
    }
    if (ReadNetnsModeParam(fs_) == std::optional<std::string>(mode)) {
      return OkStatus();  // setting the current mode succeeds, as in the kernel
    }
    if (netns.ok() && !netns->empty()) {
      return Status(StatusCode::kFailedPrecondition,
                    "RDMA netns mode: EBUSY: network namespaces other than the initial one exist "
                    "(/run/netns/" +
                        netns->front() + ")",
                    EBUSY);
    }
    // A failed write of the tree file is an I/O error of the tree, never
    // the kernel refusing: no deferral to a reboot.
    *refused = false;
    return fs_.WriteFileAtomic(kNetnsModeParam, mode == "shared" ? "Y\n" : "N\n", 0444);
  }

  // /run/netns of a tree does not change while apply waits.
  bool RetryWhenBusy() const override { return false; }

 private:
  HostFs& fs_;
};

class TreeAddressBackend final : public AddressBackend {
 public:
  explicit TreeAddressBackend(const HostFs& fs) : fs_(fs) {}
  void Read(RdmaFacts& facts) override {
    // A snapshot of a live host holds what getifaddrs answered there.
    if (auto captured = fs_.ReadFile(kAddressCapture); captured.ok()) {
      facts.addresses_known = true;
      ParseAddressCapture(*captured, facts);
      return;
    }
    ReadAddressesFromProc(fs_, facts);
  }

 private:
  const HostFs& fs_;
};

}  // namespace

std::unique_ptr<NetnsBackend> NewTreeNetnsBackend(HostFs& fs) {
  return std::make_unique<TreeNetnsBackend>(fs);
}

std::unique_ptr<AddressBackend> NewTreeAddressBackend(const HostFs& fs) {
  return std::make_unique<TreeAddressBackend>(fs);
}

}  // namespace provisioner::rdma
