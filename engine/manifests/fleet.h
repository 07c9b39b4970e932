// Fleet manifests: `provisioner manifests A.yaml B.yaml ...` renders every
// host and merges the results into one set for the cluster. An object
// (apiVersion, kind, namespace, name) that several hosts emit identically is
// kept once; the same object with different content is an error naming both
// hosts and the first field where they differ; a Helm value likewise.
#ifndef PROVISIONER_ENGINE_MANIFESTS_FLEET_H_
#define PROVISIONER_ENGINE_MANIFESTS_FLEET_H_

#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/manifests/manifests.h"
#include "nlohmann/json.hpp"

namespace provisioner::manifests {

struct HostRender {
  std::string host;  // how errors name it: "worker1 (hosts/worker1.yaml)"
  HostManifests out;
};

// Objects in first-seen order (host order, then each host's order); warnings
// of every host, each once.
StatusOr<HostManifests> MergeHosts(std::vector<HostRender> hosts);

// The first place where `a` and `b` differ, as a field path
// ("spec.nicSelector.rootDevices[0]: \"0000:af:00.0\" vs \"0000:3b:00.0\"").
// A string holding JSON (a ConfigMap's config.json, a NAD's spec.config) is
// compared as JSON. "" when equal.
std::string FirstDifference(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace provisioner::manifests

#endif  // PROVISIONER_ENGINE_MANIFESTS_FLEET_H_
