// The sriov module's tests: discovery of a host tree by the pci and sriov
// modules, the facts those tests check.
#ifndef PROVISIONER_MODULES_SRIOV_TESTING_DISCOVER_H_
#define PROVISIONER_MODULES_SRIOV_TESTING_DISCOVER_H_

#include <string>

#include "engine/base/status.h"
#include "engine/model/host_model.h"

namespace provisioner::sriov_testing {

// The facts the pci and then the sriov module discover on the tree at `root`.
StatusOr<HostFacts> DiscoverPciAndSriov(const std::string& root);

}  // namespace provisioner::sriov_testing

#endif  // PROVISIONER_MODULES_SRIOV_TESTING_DISCOVER_H_
