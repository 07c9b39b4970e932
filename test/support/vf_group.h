// spec.nics[].vfGroups entries for planner tests, as the loader makes them
// from host.yaml (range text and the parsed first/last VF).
#ifndef PROVISIONER_TEST_SUPPORT_VF_GROUP_H_
#define PROVISIONER_TEST_SUPPORT_VF_GROUP_H_

#include <optional>
#include <string>
#include <utility>

#include "engine/model/desired.h"

namespace provisioner::testing {

// VFs first..last ("first-last"), on `device_type` when given.
inline VfGroupSpec VfGroup(int first, int last,
                           std::optional<std::string> device_type = std::nullopt) {
  VfGroupSpec g;
  g.range = std::to_string(first) + "-" + std::to_string(last);
  g.first = first;
  g.last = last;
  g.device_type = std::move(device_type);
  return g;
}

}  // namespace provisioner::testing

#endif  // PROVISIONER_TEST_SUPPORT_VF_GROUP_H_
