// Module "sriov-operator" (guid_pool.h): the sriov-network-operator's IB VF
// GUID pool file on the host.
#include <cerrno>

#include "engine/module/module.h"
#include "engine/module/registry.h"
#include "modules/sriov_operator/guid_pool.h"

namespace provisioner {
namespace {

class SriovOperatorModule final : public Module {
 public:
  std::string_view name() const override { return kSriovOperatorModule; }

  Status Discover(HostContext& ctx, HostFacts& facts) override {
    auto text = ctx.fs->ReadFile(kIbGuidPoolPath);
    if (text.ok()) {
      facts.sriov_operator_ib_guid_pool = std::move(text).value();
    } else if (text.status().err() != ENOENT && text.status().err() != ENOTDIR) {
      return text.status();  // unreadable: never planned over
    }
    return OkStatus();
  }

  void Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const override {
    PlanGuidPool(desired, facts, sink);
  }

  Status Apply(const Change& change, HostContext& ctx) override {
    ASSIGN_OR_RETURN(nlohmann::json pool, ReadPool(ctx));
    const std::string pf_guid = change.detail.value("pfGuid", "");
    pool = SetPoolEntry(std::move(pool), change.target, pf_guid, change.after);
    if (!pool.empty()) return ctx.fs->WriteFileAtomic(kIbGuidPoolPath, RenderGuidPool(pool));
    if (!ctx.fs->Exists(kIbGuidPoolPath)) return OkStatus();
    return ctx.fs->RemoveFile(kIbGuidPoolPath);
  }

  Status Verify(const Change& change, HostContext& ctx) override {
    ASSIGN_OR_RETURN(nlohmann::json pool, ReadPool(ctx));
    nlohmann::json got = PoolEntryGuids(pool, change.target, change.detail.value("pfGuid", ""));
    if (got == change.after) return OkStatus();
    return ErrnoToStatus(EIO, std::string(kIbGuidPoolPath) + ": entry of " + change.target +
                                  " reads " + got.dump() + ", want " + change.after.dump());
  }

 private:
  static StatusOr<nlohmann::json> ReadPool(HostContext& ctx) {
    auto text = ctx.fs->ReadFile(kIbGuidPoolPath);
    if (!text.ok() && text.status().err() != ENOENT) return text.status();
    return ParseGuidPool(text.ok() ? std::optional<std::string>(*text) : std::nullopt);
  }
};

}  // namespace

// After sriov and vf: the PFs, their IB GUIDs and VF counts.
PROVISIONER_REGISTER_MODULE("sriov-operator", SriovOperatorModule, "sriov", "vf")

}  // namespace provisioner
