// provisioner manifests: what the cluster side needs for a host.yaml.
// Spiderpool flavor: SpiderIPPool + SpiderMultusConfig; multus flavor:
// NetworkAttachmentDefinition. Both: SriovNetworkNodePolicy per NIC with
// numVfs > 0, the RDMA shared device plugin ConfigMap (rdma-devices) and the
// SR-IOV network device plugin ConfigMap (sriovdp-config); optionally a test
// DaemonSet. Pure: no host access (discovered facts come in as options).
#ifndef PROVISIONER_MODULES_K8S_MANIFESTS_H_
#define PROVISIONER_MODULES_K8S_MANIFESTS_H_

#include <ostream>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "nlohmann/json.hpp"

namespace provisioner::k8s {

struct ManifestOptions {
  std::string flavor = "spiderpool";  // spiderpool | multus
  // Discovered facts (--root): resolve PF netdevs / root devices the
  // nicSelector does not name. nullptr: host.yaml only.
  const HostFacts* facts = nullptr;
  // --with-test-workload: also the guides' RDMA test DaemonSet.
  bool with_test_workload = false;
};

struct Manifest {
  std::string kind;
  std::string name;
  nlohmann::json doc;
};

StatusOr<std::vector<Manifest>> BuildManifests(const DesiredState& desired,
                                               const ManifestOptions& options);

// Multi-document YAML ("---" before each document).
std::string RenderManifests(const std::vector<Manifest>& manifests);

// "<kind-lowercase>-<name>.yaml"
std::string ManifestFileName(const Manifest& m);

// The CLI's one call: builds, then writes to `out` (output_dir empty) or one
// file per manifest into output_dir (created when missing).
Status WriteManifests(const DesiredState& desired, const ManifestOptions& options,
                      const std::string& output_dir, std::ostream& out);

}  // namespace provisioner::k8s

#endif  // PROVISIONER_MODULES_K8S_MANIFESTS_H_
