// A planner function's output in tests, without a PlanSink per test file.
#ifndef PROVISIONER_TEST_SUPPORT_PLANNED_CHANGES_H_
#define PROVISIONER_TEST_SUPPORT_PLANNED_CHANGES_H_

#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"

namespace provisioner::testing {

// A module's planner, Plan<Area>(desired, facts, sink), as a function of
// the test: `constexpr PlannerOf<PlanLinks> Changes{};` then Changes(d, f) is
// the changes it plans for `d` on `f` (its diagnostics into *diags if given).
template <auto Plan>
struct PlannerOf {
  std::vector<Change> operator()(const DesiredState& d, const HostFacts& f,
                                 std::vector<Diagnostic>* diags = nullptr) const {
    PlanSink sink;
    Plan(d, f, sink);
    if (diags != nullptr) *diags = sink.diagnostics();
    return sink.changes();
  }
};

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_PLANNED_CHANGES_H_
