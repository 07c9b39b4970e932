// The module interface. A module discovers its facts, plans its changes
// (pure: desired + facts), applies one change at a time and verifies it.
// Modules register themselves (registry.h); the engine never includes a
// module's header.
#ifndef PROVISIONER_ENGINE_MODULE_MODULE_H_
#define PROVISIONER_ENGINE_MODULE_MODULE_H_

#include <chrono>
#include <functional>
#include <string>
#include <string_view>

#include "engine/base/status.h"
#include "engine/host/host_fs.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/clock.h"
#include "engine/plan/change.h"

namespace provisioner {

// Shows a user that a long step is alive (a line at a time; a TTY may redraw).
class Progress {
 public:
  virtual ~Progress() = default;
  virtual void Step(std::string_view message) = 0;
};

// What discovery and apply may touch: the host layer, time, progress.
struct HostContext {
  HostFs* fs = nullptr;
  Clock* clock = nullptr;
  Progress* progress = nullptr;
  std::chrono::milliseconds settle_timeout{std::chrono::seconds(300)};
};

class Module {
 public:
  virtual ~Module() = default;
  virtual std::string_view name() const = 0;

  // Adds this module's facts. Runs in registration order after the modules
  // it builds on (pci runs first). A failure to read an optional attribute is
  // a missing fact, not an error; errors are for a host that cannot be read.
  virtual Status Discover(HostContext& ctx, HostFacts& facts) = 0;

  // Pure: no host access. Adds changes and diagnostics (field paths).
  virtual void Plan(const DesiredState& desired, const HostFacts& facts,
                    PlanSink& sink) const = 0;

  // Makes one change this module planned, waiting (bounded) for it to settle.
  virtual Status Apply(const Change& change, HostContext& ctx) = 0;

  // Re-reads the host and checks the change's `after` holds.
  virtual Status Verify(const Change& change, HostContext& ctx) = 0;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODULE_MODULE_H_
