// The module interface. A module discovers its facts, plans its changes
// (pure: desired + facts), applies one change at a time and verifies it.
// Modules register themselves (registry.h); the engine never includes a
// module's header.
#ifndef PROVISIONER_ENGINE_MODULE_MODULE_H_
#define PROVISIONER_ENGINE_MODULE_MODULE_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"
#include "engine/module/clock.h"
#include "engine/plan/change.h"

namespace provisioner {

class FactsJson;  // engine/output/facts_output.h

// Shows a user that a long step is alive (a line at a time; a TTY may redraw).
class Progress {
 public:
  virtual ~Progress() = default;
  virtual void Step(std::string_view message) = 0;
  // A wait bounded by `limit` in all (VF netdevs, a firmware tool): a
  // display shows the wait's total elapsed time against it.
  virtual void Waiting(std::string_view message, std::chrono::milliseconds limit) {
    (void)limit;
    Step(message);
  }
  // Apply's changes, several at once with --parallelism > 1: `key` (the
  // change's index in the plan) tells them apart. While change `key` runs,
  // its module's Step and Waiting arrive as ChangeStep/ChangeWaiting.
  // Defaults: a Step per start and per module step, as before.
  virtual void ChangeStarted(size_t key, std::string_view label) {
    (void)key;
    Step(label);
  }
  virtual void ChangeStep(size_t key, std::string_view message) {
    (void)key;
    Step(message);
  }
  virtual void ChangeWaiting(size_t key, std::string_view message,
                             std::chrono::milliseconds limit) {
    (void)key;
    Waiting(message, limit);
  }
  // `line`: the change in the plan's wording; `ok`: applied and verified.
  virtual void ChangeFinished(size_t key, std::string_view line, bool ok) {
    (void)key;
    (void)line;
    (void)ok;
  }
};

// What discovery and apply may touch: the host layer, time, progress.
struct HostContext {
  HostFs* fs = nullptr;
  Clock* clock = nullptr;
  Progress* progress = nullptr;
  std::chrono::milliseconds settle_timeout{std::chrono::seconds(300)};
  // Set by the engine for apply's changes (not their rollback): a signal
  // (InterruptGuard::signal()) that ends a module's wait at once (WaitStep);
  // the change then fails and the rollback starts. Null: waits run their course.
  const std::atomic<int>* interrupt = nullptr;
  // Set by the engine while it discovers for planning this desired state
  // (plan, apply); null for discover, doctor, manifests. A module may then
  // skip facts that no module's Plan reads for it (the RDMA module skips the
  // GID tables: 256 files per port, nothing plans from them).
  const DesiredState* plan_for = nullptr;
  // Set by Module::Apply when the kernel refused the change now and it takes
  // effect at the next boot (e.g. RDMA netns mode while other network
  // namespaces exist): says why. The engine then skips Verify, keeps the
  // change as applied and reports a reboot as required (exit 3).
  std::string deferred_to_reboot;
};

class Module {
 public:
  virtual ~Module() = default;
  virtual std::string_view name() const = 0;

  // Adds this module's facts. Runs in registration order after the modules
  // it builds on (pci runs first). A failure to read an optional attribute is
  // a missing fact, not an error; errors are for a host that cannot be read.
  virtual Status Discover(HostContext& ctx, HostFacts& facts) = 0;

  // For planning (plan, apply): runs after every module's Discover, with the
  // facts of them all and the desired state as it is planned (spec.rails
  // expanded; it may run again after that expansion). A module whose facts
  // are costly to read for parts of the host no plan touches reads only those
  // that a Plan of `desired` reads here (the firmware module: `mstconfig
  // query` of the cards whose nics ask something of the firmware). Discover
  // leaves them out while HostContext::plan_for is set. Default: nothing.
  virtual Status DiscoverForPlan(const DesiredState& desired, HostContext& ctx, HostFacts& facts) {
    (void)desired;
    (void)ctx;
    (void)facts;
    return OkStatus();
  }

  // Pure: no host access. Adds changes and diagnostics (field paths).
  virtual void Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const = 0;

  // Makes one change this module planned, waiting (bounded) for it to settle.
  virtual Status Apply(const Change& change, HostContext& ctx) = 0;

  // Re-reads the host and checks the change's `after` holds.
  virtual Status Verify(const Change& change, HostContext& ctx) = 0;

  // Whether Apply and Verify may run on several threads at once for changes
  // on different resources (Change::resource), each with its own
  // HostContext. False (the default): the engine runs this module's
  // changes one at a time. docs/backends.md says how each module is safe.
  virtual bool ConcurrentApply() const { return false; }

  // Whether this module could apply `change` at all (a target of the right
  // shape, values of the right type), without touching the host. Changes
  // come from files too (a saved plan, the journal a rollback reads): apply
  // checks every change and its inverse first and applies nothing when one
  // is refused. Modules without such checks keep this default.
  virtual Status CheckChange(const Change& change) const { return OkStatus(); }

  // Pure doctor checks over the facts (and host.yaml when given: `desired`
  // may be null). Modules without checks keep this default.
  virtual void Check(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) const {
    (void)desired;
    (void)facts;
    (void)sink;
  }

  // This module's part of `discover`'s output, from its own facts. JSON:
  // its top-level keys of the document, and its fields of each NIC
  // (FactsJson::Nic). Table: its sections ("" for none). Both run in module
  // order over complete facts; modules without output keep these defaults.
  virtual void RenderFactsJson(const HostFacts& facts, FactsJson& out) const {
    (void)facts;
    (void)out;
  }
  virtual std::string RenderFactsTable(const HostFacts& facts) const {
    (void)facts;
    return "";
  }
  // Facts this module plans from that its RenderFactsJson does not show
  // (the kernel command line, the boot loader's files): the saved-plan facts
  // digest covers them too, so that a host whose boot configuration changed
  // between `plan --out` and `apply PLAN` is refused as a changed host.
  // Null: none.
  virtual nlohmann::json DigestedFacts(const HostFacts& facts) const {
    (void)facts;
    return nullptr;
  }
};

// PROVISIONER_MODULE_OVERRIDES(method...): declares, in a module's class,
// the methods of the Module interface above that the module defines (in its
// .cc files), named by the method: Discover, DiscoverForPlan, Plan, Apply
// (with its Verify: whatever a module applies it verifies), CheckChange,
// Check, RenderFactsJson, RenderFactsTable, DigestedFacts; in any order,
// each at most once. A module's class then says only what is its own: its
// name(), the methods it overrides, ConcurrentApply (with why it is safe)
// and its private parts. The signatures stand once, here, next to the
// interface they override: a change to one is made here and in the
// definitions, never in every module header. A misspelled method is a
// compile error naming PROVISIONER_MODULE_OVERRIDE_<it>.
//   class IpoibModule final : public ModuleWithOptions<IpoibModuleOptions> {
//    public:
//     using ModuleWithOptions::ModuleWithOptions;
//     std::string_view name() const override { return "ipoib"; }
//     PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, CheckChange);
//   };
#define PROVISIONER_MODULE_OVERRIDES(...) \
  PROVISIONER_MODULE_OVERRIDES_9_(__VA_ARGS__, , , , , , , , , )
// The list padded to nine with empty names (an empty one declares nothing).
// clang-format off
#define PROVISIONER_MODULE_OVERRIDES_9_(m1, m2, m3, m4, m5, m6, m7, m8, m9, ...) \
  PROVISIONER_MODULE_OVERRIDE_##m1 PROVISIONER_MODULE_OVERRIDE_##m2 \
  PROVISIONER_MODULE_OVERRIDE_##m3 PROVISIONER_MODULE_OVERRIDE_##m4 \
  PROVISIONER_MODULE_OVERRIDE_##m5 PROVISIONER_MODULE_OVERRIDE_##m6 \
  PROVISIONER_MODULE_OVERRIDE_##m7 PROVISIONER_MODULE_OVERRIDE_##m8 \
  PROVISIONER_MODULE_OVERRIDE_##m9 static_assert(true, "")
// clang-format on
#define PROVISIONER_MODULE_OVERRIDE_
#define PROVISIONER_MODULE_OVERRIDE_Discover \
  Status Discover(HostContext& ctx, HostFacts& facts) override;
#define PROVISIONER_MODULE_OVERRIDE_DiscoverForPlan \
  Status DiscoverForPlan(const DesiredState& desired, HostContext& ctx, HostFacts& facts) override;
#define PROVISIONER_MODULE_OVERRIDE_Plan \
  void Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const override;
#define PROVISIONER_MODULE_OVERRIDE_Apply                        \
  Status Apply(const Change& change, HostContext& ctx) override; \
  Status Verify(const Change& change, HostContext& ctx) override;
#define PROVISIONER_MODULE_OVERRIDE_CheckChange \
  Status CheckChange(const Change& change) const override;
#define PROVISIONER_MODULE_OVERRIDE_Check \
  void Check(const DesiredState* desired, const HostFacts& facts, CheckSink& sink) const override;
#define PROVISIONER_MODULE_OVERRIDE_RenderFactsJson \
  void RenderFactsJson(const HostFacts& facts, FactsJson& out) const override;
#define PROVISIONER_MODULE_OVERRIDE_RenderFactsTable \
  std::string RenderFactsTable(const HostFacts& facts) const override;
#define PROVISIONER_MODULE_OVERRIDE_DigestedFacts \
  nlohmann::json DigestedFacts(const HostFacts& facts) const override;

// A module that discovers facts (and may report plan errors and doctor
// checks) but plans no change: a change addressed to it (a saved plan, the
// journal) is refused by CheckChange before apply starts, and by Apply and
// Verify.
class DiscoveryModule : public Module {
 public:
  void Plan(const DesiredState& desired, const HostFacts& facts, PlanSink& sink) const override {}
  Status Apply(const Change& change, HostContext& ctx) final { return CheckChange(change); }
  Status Verify(const Change& change, HostContext& ctx) final { return CheckChange(change); }
  Status CheckChange(const Change& change) const final {
    return InvalidArgumentError("module " + std::string(name()) + " plans no changes (" +
                                change.id + ")");
  }
};

// A module's choice of backend for a root: by default the New...Backend of
// its *_backend_factory.cc (the only code that asks which root it is); tests
// put in their own.
template <typename Backend>
using BackendForRoot = std::function<std::unique_ptr<Backend>(HostFs&)>;

// A module built from options (its backends for a root, limits, test seams):
// the defaults, or a test's. The module's own header declares only the
// overrides that say what is special about it.
template <typename Options>
class ModuleWithOptions : public Module {
 public:
  ModuleWithOptions() = default;
  explicit ModuleWithOptions(Options options) : options_(std::move(options)) {}

 protected:
  Options options_;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODULE_MODULE_H_
