// provisioner manifests: what the cluster side needs for a host.yaml, as its
// consumers read it (docs/kubernetes.md).
// Spiderpool flavor: SpiderIPPool + SpiderMultusConfig, and the Spiderpool
// chart's values (--helm-values) for what its guides set with `helm --set`;
// multus flavor: NetworkAttachmentDefinition plus the standalone device
// plugins' ConfigMaps (rdma-devices, sriovdp-config). Both: a
// SriovNetworkNodePolicy per NIC with numVfs > 0 in the operator's namespace,
// named for the node pool (or node-qualified without one), the pods' NCCL
// environment (nccl-env-<node or pool>), optionally a test DaemonSet; with
// discovered facts, the node's NodeFeature (node-feature-discovery labels).
// Pure: no host access (discovered facts come in as options).
#ifndef PROVISIONER_ENGINE_MANIFESTS_MANIFESTS_H_
#define PROVISIONER_ENGINE_MANIFESTS_MANIFESTS_H_

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "nlohmann/json.hpp"

namespace provisioner::manifests {

// What `provisioner doctor` says about the facts (the CLI runs its checks
// when it has them): the NodeFeature's health label.
struct DoctorSummary {
  int checks = 0;
  int failed = 0;
  int warnings = 0;
};

struct ManifestOptions {
  std::string flavor = "spiderpool";  // spiderpool | multus
  // Discovered facts (--root or a snapshot): the NICs that nearGpu / rails
  // and rootDevices mean, PF netdevs, RDMA device names, the netns mode.
  // nullptr: host.yaml only (nearGpu selectors are then an error).
  const HostFacts* facts = nullptr;
  // doctor's checks over `facts` (nullopt: not run, no health label).
  std::optional<DoctorSummary> doctor;
  // --with-test-workload: also the guides' RDMA test DaemonSet.
  bool with_test_workload = false;
};

struct Manifest {
  std::string kind;
  std::string name;
  nlohmann::json doc;  // the whole object, metadata.namespace included
  // "" for cluster-scoped objects.
  std::string Namespace() const;
};

// Everything one host.yaml implies for the cluster.
struct HostManifests {
  std::vector<Manifest> manifests;
  // Spiderpool chart values (spiderpool flavor; {} for multus).
  nlohmann::json helm_values = nlohmann::json::object();
  // Said on stderr: choices made for a field host.yaml left open.
  std::vector<std::string> warnings;
  // The Spiderpool release's namespace (its operator reads policies there).
  std::string release_namespace;
};

StatusOr<HostManifests> BuildHostManifests(const DesiredState& desired,
                                           const ManifestOptions& options);

// BuildHostManifests(...).manifests.
StatusOr<std::vector<Manifest>> BuildManifests(const DesiredState& desired,
                                               const ManifestOptions& options);

// The comment before a manifest ("" for most): a SriovNetworkNodePolicy's
// says what the operator needs before it works.
std::string Preamble(const Manifest& m);

// The comment header of the --helm-values file: the helm command, with the
// release's namespace.
std::string HelmValuesHeader(const HostManifests& m, const std::string& file);

// Multi-document YAML ("---" before each document; the first policy's
// Preamble once).
std::string RenderManifests(const std::vector<Manifest>& manifests);

// "<kind-lowercase>-<namespace>-<name>.yaml" for a namespaced object,
// "<kind-lowercase>-<name>.yaml" for a cluster-scoped one: a name never
// depends on which other objects are written with it.
std::string ManifestFileName(const Manifest& m);
std::vector<std::string> ManifestFileNames(const std::vector<Manifest>& manifests);

// To `out` (output_dir empty) or one file per manifest into output_dir
// (created when missing; the paths written are listed on `out`).
Status WriteManifests(const std::vector<Manifest>& manifests, const std::string& output_dir,
                      std::ostream& out);

// Builds, then writes (the single-host form).
Status WriteManifests(const DesiredState& desired, const ManifestOptions& options,
                      const std::string& output_dir, std::ostream& out);

// The NodeFeature's labels that come from host.yaml and the facts alone
// (rails, link-type, rdma-netns-mode, fw-version), without the prefix
// (NodeFeatureLabelPrefix()): the agent's NFD local source writes the same
// names (engine/agent/agent_status.cc).
std::map<std::string, std::string> NodeFeatureFactLabels(const DesiredState& d,
                                                         const HostFacts& facts);
// "provisioner.feature.node.kubernetes.io/"
const char* NodeFeatureLabelPrefix();

// True when the VF GUIDs apply derives from an InfiniBand PF's node GUID
// ("0002:c903:00a1:b2c3") lie in Mellanox/ib-kubernetes' default GUID pool,
// 02:00:00:00:00:00:00:00-02:FF:FF:FF:FF:FF:FF:FF (ib_kubernetes.cc).
bool VfGuidsInIbKubernetesDefaultPool(const std::string& pf_node_guid);

}  // namespace provisioner::manifests

#endif  // PROVISIONER_ENGINE_MANIFESTS_MANIFESTS_H_
