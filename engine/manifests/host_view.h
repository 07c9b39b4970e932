// What the manifest builders ask of one host.yaml (and its discovered facts,
// when given): which PFs a nic means, their netdevs and RDMA devices, the
// netns mode, and the names of node- or pool-scoped objects. Internal to
// engine/manifests.
#ifndef PROVISIONER_ENGINE_MANIFESTS_HOST_VIEW_H_
#define PROVISIONER_ENGINE_MANIFESTS_HOST_VIEW_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"
#include "engine/manifests/manifests.h"
#include "engine/model/desired.h"
#include "engine/model/host_model.h"

namespace provisioner::manifests {

inline constexpr const char* kSpiderpoolApi = "spiderpool.spidernet.io/v2beta1";
inline constexpr const char* kSriovApi = "sriovnetwork.openshift.io/v1";
inline constexpr const char* kNadApi = "k8s.cni.cncf.io/v1";
inline constexpr const char* kNfdApi = "nfd.k8s-sigs.io/v1alpha1";
// Where node-feature-discovery's deployment and chart install nfd-master.
inline constexpr const char* kNfdNamespace = "node-feature-discovery";
// A sub-namespace of feature.node.kubernetes.io: allowed by nfd-master
// without -extra-label-ns, and no -deny-label-ns can deny it.
inline constexpr const char* kNodeFeatureLabelPrefix = "provisioner.feature.node.kubernetes.io/";
// The standalone device plugins' DaemonSets read their ConfigMaps here.
inline constexpr const char* kDevicePluginNamespace = "kube-system";

struct NicRef {
  size_t index = 0;
  const NicSpec* nic = nullptr;
};

class HostView {
 public:
  HostView(const DesiredState& desired, const ManifestOptions& options, HostManifests* out)
      : d_(desired), opt_(options), out_(out) {}

  const DesiredState& desired() const { return d_; }
  const ManifestOptions& options() const { return opt_; }
  const HostFacts* facts() const { return opt_.facts; }
  void Warn(std::string message) { out_->warnings.push_back(std::move(message)); }

  // Errors that make every output wrong: nearGpu without facts, nearGpu or
  // overlapping nics that discovery rejects, names that are not valid
  // Kubernetes names.
  Status CheckInputs() const;

  StatusOr<NicRef> FindNic(const std::string& name) const;
  static std::string NicField(size_t i, const std::string& field);

  // The PFs a nic means on this host, as host-specific facts: given
  // rootDevices, or the PFs discovery resolves for rootDevices/pfNames/
  // nearGpu. A vendor/deviceID-only selector is not host-specific: empty.
  std::vector<const PciFunction*> SpecificPfs(const NicRef& ref) const;
  // rootDevices for a selector: given, else the PFs nearGpu resolves to.
  std::vector<std::string> RootDevices(const NicRef& ref) const;
  // PF netdevs: nics[].names.netdev (the name after apply), else
  // nicSelector.pfNames, else discovery for a host-specific
  // selector. `required` (a macvlan master): else discovery for any
  // selector, else an error naming the field.
  StatusOr<std::vector<std::string>> PfNetdevs(const NicRef& ref, bool required) const;

  // "exclusive" | "shared": spec.rdma.netnsMode, else the discovered mode,
  // else the kernel's default (shared), with a warning.
  std::string NetnsMode();
  // rdmaIsolation of a sriov/ib-sriov config: exclusive mode and isRdma.
  bool RdmaIsolation(const NicRef& ref);

  std::string ResourcePrefix() const;
  StatusOr<std::string> SriovResource(const NicRef& ref) const;

  // -- vfGroups (issue 28 item 3) ------------------------------------------
  // The group (with the nic's fields filled in) whose resource a sriov/ib-sriov
  // config gets: its resourceName's, else the nic's only one; nullopt for a
  // nic without vfGroups.
  std::optional<VfGroupSpec> ConfigGroup(const NicRef& ref, const MultusConfigSpec& mc) const;
  // The config's VF resource: its group's, else the nic's.
  StatusOr<std::string> SriovResource(const NicRef& ref, const MultusConfigSpec& mc) const;
  // isRdma of the config's VFs: its group's, else the nic's.
  bool VfIsRdma(const NicRef& ref, const MultusConfigSpec& mc) const;
  // rdmaIsolation of a sriov/ib-sriov config: exclusive mode and its VFs' isRdma.
  bool RdmaIsolation(const NicRef& ref, const MultusConfigSpec& mc);
  // The port VLAN apply gives the VFs of a device-plugin resource (their
  // group's vfVlan, else their nic's; nullopt: none managed), with the field
  // that sets it. Every VF of a resource must get the same one (a pod may get
  // any of them): VFs of one resource that disagree are an error.
  struct ResourceVlan {
    std::optional<VfVlanSpec> vlan;
    std::string field;  // "spec.nics[0].vfGroups[1].vfVlan"
  };
  StatusOr<ResourceVlan> VfVlanOf(const std::string& resource) const;

  // -- excludeTopology (issue 28 item 6) -----------------------------------
  // True when the device-plugin resource must not advertise its VFs' NUMA
  // node: some nic of the resource is a nearGpu + allowRemote pick on another
  // NUMA node than its GPU (the operator's webhook wants one value per
  // resource, so one remote nic decides for the resource).
  bool ExcludeTopology(const std::string& resource) const;
  // A nic's own answer (nearGpu with allowRemote, NIC and GPU NUMA nodes
  // differ); needs facts.
  bool NicNumaRemote(const NicSpec& nic) const;
  const KubernetesSpec& Kubernetes() const;

  // spec.kubernetes.spiderpool.version, else kSpiderpoolDefault.
  std::string SpiderpoolVersion() const;
  // The v0.9 line: sriov.enableRdma (no rdmaIsolation), no
  // macvlan/ipvlan rdmaResourceName, no podResourceInject, no
  // deviceConfig.ifNames in the chart.
  bool SpiderpoolV09() const;
  // The sriov-network-operator that Spiderpool's chart bundles replaces IB
  // VF GUIDs: every release through v1.2.x (v0.9 and v1.0-v1.2) bundles one
  // of v1.3.0 or earlier.
  bool BundledOperatorReplacesIbGuids() const;

  // spec.kubernetes.nodeSelector set: objects are per pool.
  bool IsPool() const { return !Kubernetes().node_selector.empty(); }
  // A pool's name (poolName, else from the nodeSelector's values) or the
  // node's (metadata.name): the suffix of per-node-or-pool objects.
  std::string NodeOrPoolName() const;
  // The nodeSelector of per-node-or-pool objects.
  std::map<std::string, std::string> NodeOrPoolSelector() const;
  // SriovNetworkNodePolicy name: the nic's in a pool, "<nic>-<node>" without.
  std::string PolicyName(const NicSpec& nic) const;
  // A vfGroup's policy: "<nic>-vf0-3" in a pool, "<nic>-vf0-3-<node>" without.
  std::string PolicyName(const NicSpec& nic, const VfGroupSpec& group) const;

 private:
  const DesiredState& d_;
  const ManifestOptions& opt_;
  HostManifests* out_;
  std::optional<std::string> netns_mode_;
};

// One object of the Kubernetes API (apiVersion, kind, metadata, body).
nlohmann::json Object(const std::string& api_version, const std::string& kind,
                      const std::string& name, const std::optional<std::string>& ns);

// The nics whose PFs the RDMA shared device plugin publishes (helm_values.cc).
std::vector<NicRef> SharedPluginNics(const HostView& view);

// The Spiderpool chart values the host.yaml implies (helm_values.cc).
StatusOr<nlohmann::json> SpiderpoolHelmValues(HostView& view);

// nccl-env-<node or pool> ConfigMaps, one per namespace of the multus
// configs that carry RDMA (nccl_env.cc); empty when there are none.
StatusOr<std::vector<Manifest>> NcclEnvConfigMaps(HostView& view);
// --with-test-workload: the DaemonSet and its headless Service, in `ns`
// (test_workload.cc).
// With ipoib configs, the IPoIB-only workload; with rdmaResourceInject
// configs (Spiderpool v1.0 and later), the webhook's sample.
StatusOr<std::vector<Manifest>> TestWorkloadManifests(HostView& view, bool with_nccl_env,
                                                      const std::string& ns);
// The image every test workload runs (perftest, iproute2, iputils).
inline constexpr const char* kRdmaToolsImage = "ghcr.io/spidernet-io/rdma-tools:latest";
// A test DaemonSet `name` in `ns` (pods on the host's nodes, `container`
// alone, `volume` if any) and the headless Service its pods find each other
// by (test_workload.cc).
std::vector<Manifest> TestDaemonSet(const HostView& view, const std::string& name,
                                    const std::string& ns, const nlohmann::json& pod_annotations,
                                    nlohmann::json container, std::optional<nlohmann::json> volume);
// NODE_NAME and SERVICE (the Service's DNS name) for a test container.
nlohmann::json TestContainerEnv(const std::string& name, const std::string& ns);
// ipoib-test: the ipoib configs only, no resources, ping between pods over
// IPoIB (ipoib_workload.cc); empty without ipoib configs.
StatusOr<std::vector<Manifest>> IpoibTestManifests(HostView& view, const std::string& ns);
// rdma-inject-test-<value>: a pod with only the rdma-resource-inject
// annotation that checks what Spiderpool's webhook added (inject_workload.cc);
// empty without such configs, on v0.9 or in the multus flavor.
StatusOr<std::vector<Manifest>> InjectTestManifests(HostView& view, const std::string& ns);
// spec.kubernetes.ibKubernetes: Mellanox/ib-kubernetes' ConfigMap
// (ib_kubernetes.cc); nullopt when not asked. With facts, warns for IB VF
// GUIDs that ib-kubernetes' default pool holds.
std::optional<Manifest> IbKubernetesConfigMap(HostView& view);

// With discovered facts: the node's NodeFeature (node_feature.cc), labels
// from the facts only; nullopt without facts or without anything to say.
StatusOr<std::optional<Manifest>> NodeFeatureManifest(HostView& view);
// "provisioner-<node>" (nfd-worker's own object is named <node>).
std::string NodeFeatureName(const std::string& node);

// Its name, for the test workload's envFrom.
std::string NcclEnvName(const HostView& view);

// The PF netdevs of a nic's vfGroup, each with "#first-last" (host_view.cc).
StatusOr<std::vector<std::string>> RangedPfNames(const HostView& view, const NicRef& ref,
                                                 const VfGroupSpec& g);

// Spiderpool's objects (spiderpool_objects.cc).
Manifest SpiderIpPool(const IpPoolSpec& p);
StatusOr<Manifest> SpiderMultusConfig(HostView& view, const MultusConfigSpec& mc);

// sriov-cni's side of a multus config, both flavors (sriov_cni.cc).
bool IsVfCni(const std::string& cni);
StatusOr<std::optional<int>> SriovCniVlan(const HostView& view, const MultusConfigSpec& mc,
                                          const std::string& resource, bool spiderpool);

// The multus flavor's objects (multus_objects.cc).
StatusOr<Manifest> NetworkAttachmentDefinition(HostView& view, const MultusConfigSpec& mc);
StatusOr<Manifest> RdmaDevicesConfigMap(HostView& view);
StatusOr<Manifest> SriovDevicePluginConfigMap(HostView& view);
// A nic with VFs and a device-plugin resource (sriovdp-config is needed).
bool HasSriovResource(const DesiredState& d);

// The sriov-network-operator's policies and warnings (sriov_policies.cc).
StatusOr<Manifest> SriovPolicy(HostView& view, size_t i);
StatusOr<Manifest> SriovGroupPolicy(HostView& view, size_t i, const VfGroupSpec& group);
void OperatorWarnings(HostView& view);

}  // namespace provisioner::manifests

#endif  // PROVISIONER_ENGINE_MANIFESTS_HOST_VIEW_H_
