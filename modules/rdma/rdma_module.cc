#include "modules/rdma/rdma_module.h"

#include <cerrno>
#include <string>

#include "engine/module/managed_file.h"
#include "engine/module/registry.h"
#include "modules/rdma/doctor_checks.h"
#include "modules/rdma/netns_plan.h"
#include "modules/rdma/rdma_backend.h"
#include "modules/rdma/rdma_sysfs.h"
#include "modules/rdma/verbs.h"
#include "spdlog/spdlog.h"

namespace provisioner::rdma {
namespace {

bool IsNetnsChange(const Change& c) {
  return c.module == kModuleName && c.attribute == kNetnsAttribute;
}

// "shared" | "exclusive" | "" (remove) from a change's `after`.
StatusOr<std::string> ModeOf(const Change& c) {
  if (c.after.is_null()) return std::string();
  if (c.after.is_string()) {
    std::string m = c.after.get<std::string>();
    if (m == "shared" || m == "exclusive") return m;
  }
  return InvalidArgumentError(c.id + ": netns mode must be shared or exclusive, not " +
                              c.after.dump());
}

}  // namespace

RdmaBackends RdmaModule::Backends(HostFs& fs) const {
  return NewRdmaBackends(fs, options_.netns_client, options_.cross_check_rdma_core);
}

StatusOr<std::string> RdmaModule::ReadLiveMode(HostContext& ctx) const {
  auto m = Backends(*ctx.fs).netns->Get();
  if (m.ok()) return m;
  // Without RDMA netlink the parameter still shows the live value.
  if (auto p = ReadNetnsModeParam(*ctx.fs)) return *p;
  return m.status();
}

Status RdmaModule::Discover(HostContext& ctx, HostFacts& facts) {
  const HostFs& fs = *ctx.fs;
  RdmaBackends backends = Backends(*ctx.fs);
  RdmaFacts& r = facts.rdma;
  r.discovered = true;
  // Devices, ports and GID tables: for discover and doctor; no Plan reads
  // them (the netns plan needs the mode and modprobe.d only), and on a
  // 16 PF x 127 VF host they are 98% of the files discovery reads.
  if (ctx.plan_for == nullptr) {
    ASSIGN_OR_RETURN(r.devices, ReadRdmaDevices(fs));
  }
  if (auto m = backends.netns->Get(); m.ok()) {
    facts.rdma_netns_mode = *m;
    r.netns_mode_source = backends.netns->Source();
  } else {
    spdlog::debug("{}", m.status().message());
    r.netns_mode_source = m.status().message();
  }
  // Read on the live root too: a snapshot of this host (which records what
  // discovery reads) then carries the mode for `--root` runs; and without
  // RDMA netlink the parameter still shows the live value.
  std::optional<std::string> param = ReadNetnsModeParam(fs);
  if (!facts.rdma_netns_mode && param) {
    facts.rdma_netns_mode = *param;
    r.netns_mode_source = kNetnsModeParam;
  }
  if (facts.kmod.discovered) {
    // modprobe.d as the kmod module read it: one read per discovery.
    PersistentNetnsModeFrom(facts.kmod.options_by_file, r);
  } else {
    ReadPersistentNetnsMode(fs, r);
  }
  ReadInitramfs(fs, facts.kernel.release, r);
  ReadOfed(fs, r);
  if (auto netns = fs.ListDir("/run/netns"); netns.ok()) r.named_netns = *netns;
  ReadDevFiles(fs, r);
  backends.addresses->Read(r);
  if (backends.cross_check_rdma_core && !r.devices.empty()) {
    auto verbs = QueryRdmaCore(/*with_gids=*/true);
    if (!verbs.ok()) {
      spdlog::warn("rdma-core: {}", verbs.status().message());
    } else {
      for (const auto& d : CompareWithSysfs(*verbs, r.devices))
        spdlog::warn("rdma-core vs sysfs: {}", d);
    }
  }
  return OkStatus();
}

void RdmaModule::Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const {
  PlanNetnsMode(desired, facts, sink);
}

Status RdmaModule::SetLiveMode(const Change& change, const std::string& mode, HostContext& ctx) {
  std::unique_ptr<NetnsBackend> netns = Backends(*ctx.fs).netns;
  Status s;
  bool refused = false;
  for (int attempt = 1; attempt <= options_.set_attempts; ++attempt) {
    s = netns->Set(mode, &refused);
    if (s.ok() || s.err() != EBUSY || !netns->RetryWhenBusy() || attempt == options_.set_attempts) {
      break;
    }
    // A namespace may be going away (a pod being deleted): retry briefly.
    if (ctx.clock != nullptr) ctx.clock->SleepFor(options_.set_retry_interval);
  }
  if (s.ok()) return s;
  const bool persist = !change.detail.is_object() || change.detail.value("persist", true);
  if (refused && persist) {
    ctx.deferred_to_reboot = "the kernel refused to switch the RDMA netns mode to " + mode +
                             " now (" + s.message() +
                             "); /etc/modprobe.d/ib_core.conf sets it at the next boot";
    return OkStatus();
  }
  if (refused) {
    return Status(s.code(),
                  s.message() + "; spec.rdma.persist is false, so it cannot wait for a reboot",
                  s.err())
        .WithContext("set RDMA netns mode " + mode);
  }
  return s.WithContext("set RDMA netns mode " + mode);
}

Status RdmaModule::WritePersistent(const std::string& mode, HostContext& ctx) {
  HostFs& fs = *ctx.fs;
  std::string text;
  bool existed = false;
  if (auto cur = fs.ReadFile(kIbCoreConf); cur.ok()) {
    text = *cur;
    existed = true;
  } else if (cur.status().err() != ENOENT) {
    return cur.status().WithContext("read " + std::string(kIbCoreConf));
  }
  std::string updated = EditModprobeNetnsMode(text, mode);
  if (existed && updated == text) return OkStatus();  // no write when nothing changes
  if (!existed && updated.empty()) return OkStatus();
  if (updated.empty())
    return fs.RemoveFile(kIbCoreConf).WithContext("remove " + std::string(kIbCoreConf));
  return fs.WriteFileAtomic(kIbCoreConf, updated, 0644)
      .WithContext("write " + std::string(kIbCoreConf));
}

Status RdmaModule::Apply(const Change& change, HostContext& ctx) {
  if (!IsNetnsChange(change)) {
    return InvalidArgumentError("module rdma has no change " + change.id);
  }
  ASSIGN_OR_RETURN(std::string mode, ModeOf(change));
  if (change.target == kLiveTarget) {
    if (mode.empty())
      return InvalidArgumentError(change.id + ": a live netns mode cannot be removed");
    if (ctx.progress) ctx.progress->Step("RDMA netns mode -> " + mode);
    return SetLiveMode(change, mode, ctx);
  }
  if (change.target == kPersistTarget && RestoresManagedFile(change, kIbCoreConf)) {
    return WriteManagedFile(*ctx.fs, change, kIbCoreConf, std::nullopt);  // a rollback
  }
  if (change.target == kPersistTarget) return WritePersistent(mode, ctx);
  return InvalidArgumentError("module rdma has no target " + change.target + " (" + change.id +
                              ")");
}

Status RdmaModule::Verify(const Change& change, HostContext& ctx) {
  ASSIGN_OR_RETURN(std::string mode, ModeOf(change));
  if (change.target == kLiveTarget) {
    ASSIGN_OR_RETURN(std::string now, ReadLiveMode(ctx));
    if (now != mode) {
      return FailedPreconditionError(std::string(kNetnsField) + ": desired " + mode + ", current " +
                                     now);
    }
    return OkStatus();
  }
  if (RestoresManagedFile(change, kIbCoreConf)) {
    return VerifyManagedFileRestored(*ctx.fs, change, kIbCoreConf);
  }
  std::string text;
  if (auto cur = ctx.fs->ReadFile(kIbCoreConf); cur.ok()) {
    text = *cur;
  } else if (cur.status().err() != ENOENT) {
    return cur.status();
  }
  bool exclusive = NetnsModeFromModprobe(text) == std::optional<std::string>("exclusive");
  if (exclusive != (mode == "exclusive")) {
    return FailedPreconditionError(std::string(kIbCoreConf) + ": netns_mode " +
                                   (exclusive ? "exclusive" : "not set to exclusive") +
                                   " after the write, desired " + (mode.empty() ? "unset" : mode));
  }
  return OkStatus();
}

void RdmaModule::Check(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) const {
  RunRdmaChecks(desired, facts, sink);
}

// After kmod: modprobe.d comes from its facts.
PROVISIONER_REGISTER_MODULE("rdma", RdmaModule, "pci", "kmod")

}  // namespace provisioner::rdma
