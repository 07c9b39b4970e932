// The one spelling of a change for people (issue 38 item 4): the plan, the
// progress lines and apply's result list all say a change the same way.
#ifndef PROVISIONER_ENGINE_PLAN_CHANGE_TEXT_H_
#define PROVISIONER_ENGINE_PLAN_CHANGE_TEXT_H_

#include <string>

#include "engine/plan/change.h"
#include "nlohmann/json.hpp"

namespace provisioner {

// A value as every line for people shows it: a string bare, null "(none)",
// else JSON; one longer than 60 characters or of several lines (the udev
// rules list) summarised: its start, then "… (N items)" / "… (N lines)" /
// "… (N characters)". JSON output keeps the whole value.
std::string ShowValue(const nlohmann::json& v);
// "sriov 0000:af:00.0 numVfs: 4 -> 8", with a VF range "#0-3" after the
// attribute when the id has one (vf/<PF>/vlan#0-3).
std::string ChangeText(const Change& c);

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_PLAN_CHANGE_TEXT_H_
