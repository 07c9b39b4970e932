// The node's status for the cluster as a node-feature-discovery NodeFeature
// (docs/kubernetes.md, "Node labels"). Read in node-feature-discovery @
// 76e6cc8c: nfd-master merges every NodeFeature labelled
// nfd.node.kubernetes.io/node-name=<node> (any namespace unless a namespace
// selector is configured; objects in its own namespace first) into that
// node's labels (pkg/nfd-master/nfd-master.go getAndMergeNodeFeatures);
// pkg/apis/nfd/validate Label() refuses kubernetes.io and *.kubernetes.io
// keys except feature.node.kubernetes.io and its sub-namespaces, which no
// -deny-label-ns can deny. So the labels live under
// provisioner.feature.node.kubernetes.io/, and only facts discovery read.
#include <map>
#include <set>

#include "engine/config/checks.h"
#include "engine/manifests/host_view.h"
#include "engine/model/selector.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

// The link layer of a PF's RDMA ports: "infiniband" | "ethernet" | "".
std::string LinkType(const HostFacts& facts, const PciFunction& pf) {
  for (const RdmaDevice& dev : facts.rdma.devices) {
    if (dev.pci_address != pf.pci_address) continue;
    for (const RdmaPort& port : dev.ports) {
      if (port.link_layer == "InfiniBand") return "infiniband";
      if (port.link_layer == "Ethernet") return "ethernet";
    }
  }
  return "";
}

std::string FwVersion(const HostFacts& facts, const PciFunction& pf) {
  for (const RdmaDevice& dev : facts.rdma.devices) {
    if (dev.pci_address == pf.pci_address) return dev.fw_ver;
  }
  return "";
}

// One value for all, "mixed" when they differ, "" when none is known.
std::string OneOrMixed(const std::set<std::string>& values) {
  if (values.empty()) return "";
  return values.size() == 1 ? *values.begin() : "mixed";
}

}  // namespace

std::string NodeFeatureName(const std::string& node) { return "provisioner-" + node; }

const char* NodeFeatureLabelPrefix() { return kNodeFeatureLabelPrefix; }

std::map<std::string, std::string> NodeFeatureFactLabels(const DesiredState& d,
                                                         const HostFacts& facts_ref) {
  const HostFacts* facts = &facts_ref;
  std::map<std::string, std::string> labels;
  // The PFs host.yaml's nics select on this host.
  std::set<std::string> link_types, fw_versions;
  std::set<std::string> seen;
  for (const NicSpec& nic : d.nics) {
    for (const PciFunction* pf : SelectPfs(nic, *facts)) {
      if (!seen.insert(pf->pci_address).second) continue;
      const std::string lt = LinkType(*facts, *pf);
      if (!lt.empty()) link_types.insert(lt);
      const std::string fw = FwVersion(*facts, *pf);
      if (!fw.empty()) fw_versions.insert(fw);
    }
  }
  // Rails: the selected PFs that are some GPU's closest selected NIC, at
  // PIX/PXB/PHB (one rail per GPU-local NIC, as nvidia-smi topo -m shows
  // them); the same for spec.rails and a hand-written layout.
  std::set<std::string> rails;
  for (const GpuInfo& gpu : facts->topology.gpus) {
    const GpuNicLink* best = nullptr;
    for (const GpuNicLink& l : facts->topology.links) {
      if (l.gpu != gpu.pci_address || seen.count(l.nic) == 0) continue;
      if (best == nullptr || l.level < best->level ||
          (l.level == best->level && l.nic < best->nic)) {
        best = &l;
      }
    }
    if (best != nullptr && best->level < PcieLevel::kNode) rails.insert(best->nic);
  }
  if (!rails.empty()) labels["rails"] = std::to_string(rails.size());
  if (!link_types.empty()) labels["link-type"] = OneOrMixed(link_types);
  if (facts->rdma_netns_mode) labels["rdma-netns-mode"] = *facts->rdma_netns_mode;
  if (!fw_versions.empty()) labels["fw-version"] = OneOrMixed(fw_versions);
  return labels;
}

StatusOr<std::optional<Manifest>> NodeFeatureManifest(HostView& view) {
  const HostFacts* facts = view.facts();
  if (facts == nullptr) return std::optional<Manifest>();
  const DesiredState& d = view.desired();
  if (!config::IsLabelValue(d.name)) {
    return InvalidArgumentError(
        "metadata.name \"" + d.name +
        "\": the NodeFeature's nfd.node.kubernetes.io/node-name label names the node, and a "
        "Kubernetes label value is at most 63 characters (alphanumerics, '-', '_', '.')");
  }
  std::map<std::string, std::string> labels = NodeFeatureFactLabels(d, *facts);
  // doctor's verdict over the same facts, as `doctor` exits: fail (a FAIL,
  // exit 1), warn, ok; the number of failed checks beside it.
  if (const auto& doc = view.options().doctor; doc && doc->checks > 0) {
    labels["doctor"] = doc->failed > 0 ? "fail" : doc->warnings > 0 ? "warn" : "ok";
    labels["doctor-failed"] = std::to_string(doc->failed);
  }
  // The operator's config daemon: NFD cannot set node-role.kubernetes.io/worker
  // (kubernetes.io is always denied), so a label of ours that the
  // SriovOperatorConfig's configDaemonNodeSelector can name.
  bool operator_used = false;
  for (const NicSpec& nic : d.nics) operator_used = operator_used || nic.num_vfs.value_or(0) > 0;
  if (operator_used) labels["sriov-config-daemon"] = "true";

  json spec_labels = json::object();
  for (const auto& [name, value] : labels) {
    const std::string key = std::string(kNodeFeatureLabelPrefix) + name;
    if (!config::IsLabelKey(key)) {
      return InternalError("NodeFeature label key " + key + " is not a valid label key");
    }
    if (!config::IsLabelValue(value)) {
      // A fact (a firmware string) that no label can carry: said, left out.
      view.Warn("NodeFeature " + NodeFeatureName(d.name) + ": " + key + " left out: \"" + value +
                "\" is not a valid Kubernetes label value (at most 63 alphanumerics, '-', "
                "'_', '.', alphanumeric at both ends)");
      continue;
    }
    spec_labels[key] = value;
  }
  if (spec_labels.empty()) return std::optional<Manifest>();
  json doc = Object(kNfdApi, "NodeFeature", NodeFeatureName(d.name), std::string(kNfdNamespace));
  doc["metadata"]["labels"] = {{"nfd.node.kubernetes.io/node-name", d.name}};
  doc["spec"] = {{"labels", spec_labels}};
  return std::optional<Manifest>(Manifest{"NodeFeature", NodeFeatureName(d.name), doc});
}

}  // namespace provisioner::manifests
