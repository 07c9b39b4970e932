// A planner function's output in tests, without a PlanSink per test file.
#ifndef PROVISIONER_TEST_SUPPORT_PLANNED_CHANGES_H_
#define PROVISIONER_TEST_SUPPORT_PLANNED_CHANGES_H_

#include <string>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/plan/change.h"
#include "gmock/gmock.h"

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

// A plan diagnostic at `path` ("spec.nics[0].roce.pfc") whose message
// matches: EXPECT_THAT(diags, ElementsAre(Diag(path, HasSubstr("..."))));
inline ::testing::Matcher<Diagnostic> Diag(const std::string& path,
                                           ::testing::Matcher<std::string> message = ::testing::_) {
  return ::testing::AllOf(::testing::Field(&Diagnostic::path, path),
                          ::testing::Field(&Diagnostic::message, message));
}

// A change of `id`; from `before` to `after` (as JSON) when they are given.
inline ::testing::Matcher<Change> Changed(const std::string& id) {
  return ::testing::Field(&Change::id, id);
}
inline ::testing::Matcher<Change> Changed(const std::string& id, const nlohmann::json& before,
                                          const nlohmann::json& after) {
  return ::testing::AllOf(Changed(id), ::testing::Field(&Change::before, before),
                          ::testing::Field(&Change::after, after));
}
// A change of `id` to `after`, whatever it was before.
inline ::testing::Matcher<Change> ChangedTo(const std::string& id, const nlohmann::json& after) {
  return ::testing::AllOf(Changed(id), ::testing::Field(&Change::after, after));
}

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_PLANNED_CHANGES_H_
