#include "engine/manifests/manifests.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>
#include <map>
#include <set>

#include "engine/config/checks.h"
#include "engine/manifests/host_view.h"
#include "engine/model/selector.h"
#include "engine/output/render.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

// Every object's name and namespace as the API server checks them.
Status CheckNames(const std::vector<Manifest>& ms) {
  for (const auto& m : ms) {
    if (!config::IsDnsSubdomain(m.name)) {
      return InvalidArgumentError(m.kind + " name \"" + m.name +
                                  "\" is not a valid Kubernetes name (a DNS-1123 subdomain: "
                                  "lower-case letters, digits, '-' and '.', at most 253)");
    }
    const std::string ns = m.Namespace();
    if (m.doc["metadata"].contains("namespace") && !config::IsDnsLabel(ns)) {
      return InvalidArgumentError(m.kind + " " + m.name + ": namespace \"" + ns +
                                  "\" is not a valid Kubernetes namespace (a DNS-1123 label)");
    }
  }
  return OkStatus();
}

}  // namespace

std::string Manifest::Namespace() const {
  const auto meta = doc.find("metadata");
  if (meta == doc.end() || !meta->contains("namespace")) return "";
  const json& ns = (*meta)["namespace"];
  return ns.is_string() ? ns.get<std::string>() : "";
}

StatusOr<HostManifests> BuildHostManifests(const DesiredState& desired,
                                           const ManifestOptions& options) {
  if (options.flavor != "spiderpool" && options.flavor != "multus") {
    return InvalidArgumentError("--flavor " + options.flavor + ": want spiderpool or multus");
  }
  HostManifests result;
  HostView view(desired, options, &result);
  RETURN_IF_ERROR(view.CheckInputs());
  std::vector<Manifest>& out = result.manifests;
  const bool spiderpool = options.flavor == "spiderpool";
  if (spiderpool) {
    for (const auto& p : desired.ip_pools) out.push_back(SpiderIpPool(p));
    for (const auto& mc : desired.multus_configs) {
      ASSIGN_OR_RETURN(Manifest m, SpiderMultusConfig(view, mc));
      out.push_back(std::move(m));
    }
  } else {
    for (const auto& mc : desired.multus_configs) {
      ASSIGN_OR_RETURN(Manifest m, NetworkAttachmentDefinition(view, mc));
      out.push_back(std::move(m));
    }
  }
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    if (desired.nics[i].num_vfs.value_or(0) <= 0) continue;
    if (!desired.nics[i].vf_groups.empty()) {
      for (const VfGroupSpec& g : desired.nics[i].vf_groups) {
        if (!g.addresses.empty()) continue;  // on the host network: no pod's resource
        ASSIGN_OR_RETURN(Manifest m, SriovGroupPolicy(view, i, g));
        out.push_back(std::move(m));
      }
      continue;
    }
    ASSIGN_OR_RETURN(Manifest m, SriovPolicy(view, i));
    out.push_back(std::move(m));
  }
  if (spiderpool) {
    ASSIGN_OR_RETURN(result.helm_values, SpiderpoolHelmValues(view));
  } else {
    if (desired.kubernetes && desired.kubernetes->rdma_shared_device_plugin) {
      ASSIGN_OR_RETURN(Manifest m, RdmaDevicesConfigMap(view));
      out.push_back(std::move(m));
    }
    if (HasSriovResource(desired)) {
      ASSIGN_OR_RETURN(Manifest m, SriovDevicePluginConfigMap(view));
      out.push_back(std::move(m));
    }
  }
  ASSIGN_OR_RETURN(std::vector<Manifest> nccl, NcclEnvConfigMaps(view));
  // The test workload runs where workloads run: the first of
  // spec.kubernetes.workloadNamespaces, else beside the first multus config.
  const std::vector<std::string>& workload_ns = view.Kubernetes().workload_namespaces;
  const std::string test_ns = !workload_ns.empty() ? workload_ns.front()
                              : desired.multus_configs.empty()
                                  ? std::string()
                                  : desired.multus_configs.front().namespace_name;
  const bool nccl_env_in_test_ns = std::any_of(
      nccl.begin(), nccl.end(), [&](const Manifest& m) { return m.Namespace() == test_ns; });
  for (auto& m : nccl) out.push_back(std::move(m));
  if (options.with_test_workload) {
    ASSIGN_OR_RETURN(std::vector<Manifest> w,
                     TestWorkloadManifests(view, nccl_env_in_test_ns, test_ns));
    for (auto& m : w) out.push_back(std::move(m));
  }
  if (std::optional<Manifest> ib = IbKubernetesConfigMap(view)) out.push_back(std::move(*ib));
  ASSIGN_OR_RETURN(std::optional<Manifest> node_feature, NodeFeatureManifest(view));
  if (node_feature) out.push_back(std::move(*node_feature));
  OperatorWarnings(view);
  result.release_namespace = view.Kubernetes().sriov_operator_namespace;
  RETURN_IF_ERROR(CheckNames(out));
  return result;
}

StatusOr<std::vector<Manifest>> BuildManifests(const DesiredState& desired,
                                               const ManifestOptions& options) {
  ASSIGN_OR_RETURN(HostManifests m, BuildHostManifests(desired, options));
  return std::move(m.manifests);
}

std::string RenderManifests(const std::vector<Manifest>& manifests) {
  std::string s;
  bool said = false;
  for (const auto& m : manifests) {
    std::string pre = said ? "" : Preamble(m);
    said = said || !pre.empty();
    s += "---\n" + pre + JsonToYaml(m.doc);
  }
  return s;
}

std::string HelmValuesHeader(const HostManifests& m, const std::string& file) {
  const std::string ns = m.release_namespace.empty() ? "kube-system" : m.release_namespace;
  return "# Spiderpool chart values implied by host.yaml (provisioner manifests), for the\n"
         "# release in namespace " +
         ns +
         " (where the sriov-network-operator reads its\n"
         "# policies: spec.kubernetes.sriovOperatorNamespace):\n"
         "#   helm upgrade --install spiderpool spiderpool/spiderpool -n " +
         ns + " --reuse-values -f " + file + "\n";
}

std::string ManifestFileName(const Manifest& m) {
  std::string kind = m.kind;
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string ns = m.Namespace();
  return kind + "-" + (ns.empty() ? "" : ns + "-") + m.name + ".yaml";
}

std::vector<std::string> ManifestFileNames(const std::vector<Manifest>& manifests) {
  std::vector<std::string> out;
  for (const auto& m : manifests) out.push_back(ManifestFileName(m));
  return out;
}

Status WriteManifests(const std::vector<Manifest>& manifests, const std::string& output_dir,
                      std::ostream& out) {
  if (output_dir.empty()) {
    out << RenderManifests(manifests);
    return OkStatus();
  }
  if (::mkdir(output_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoToStatus(errno, "mkdir " + output_dir);
  }
  const std::vector<std::string> names = ManifestFileNames(manifests);
  for (size_t i = 0; i < manifests.size(); ++i) {
    std::string path = output_dir + "/" + names[i];
    std::ofstream f(path, std::ios::trunc);
    f << Preamble(manifests[i]) << JsonToYaml(manifests[i].doc);
    f.close();
    if (!f) return ErrnoToStatus(errno, "write " + path);
    out << path << "\n";
  }
  return OkStatus();
}

Status WriteManifests(const DesiredState& desired, const ManifestOptions& options,
                      const std::string& output_dir, std::ostream& out) {
  ASSIGN_OR_RETURN(std::vector<Manifest> manifests, BuildManifests(desired, options));
  return WriteManifests(manifests, output_dir, out);
}

}  // namespace provisioner::manifests
