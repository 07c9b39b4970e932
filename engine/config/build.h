// The typed DesiredState from a converted host.yaml. Tolerant: a value of the
// wrong type or out of range is left unset (the schema check has reported
// it), and every list item gets an entry, so index i of each vector is
// spec.<list>[i] of the file.
#ifndef PROVISIONER_ENGINE_CONFIG_BUILD_H_
#define PROVISIONER_ENGINE_CONFIG_BUILD_H_

#include "engine/model/desired.h"
#include "nlohmann/json.hpp"

namespace provisioner::config {

// Normalizes on the way: vendor/deviceID lower-case, rootDevices lower-case
// with the 0000: domain added when missing.
DesiredState BuildDesiredState(const nlohmann::json& root);

}  // namespace provisioner::config

#endif  // PROVISIONER_ENGINE_CONFIG_BUILD_H_
