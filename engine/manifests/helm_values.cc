// --helm-values: the Spiderpool chart values that a host.yaml implies, for
// what the Spiderpool RDMA guides set with `helm install --set`. Keys and
// types follow the chart's documented parameters at the version recorded in
// test/manifests/helm/PROVENANCE.md (spiderpool-chart-keys.txt there lists
// them; manifests_test checks every key emitted against it). Only what the
// host.yaml needs is set: merging these values into an existing release
// (`helm upgrade --reuse-values -f`) leaves every other choice alone.
#include <algorithm>
#include <set>

#include "engine/manifests/host_view.h"
#include "engine/model/selector.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

bool UsesSharedPlugin(const std::string& cni) {
  return cni == "macvlan" || cni == "ipvlan" || cni == "ipoib";
}

}  // namespace

// The nics whose PFs the RDMA shared device plugin publishes: those of the
// macvlan/ipvlan/ipoib configs, or, with no such config, every nic without
// VFs (VFs go to the SR-IOV device plugin).
std::vector<NicRef> SharedPluginNics(const HostView& view) {
  const DesiredState& d = view.desired();
  std::set<std::string> used;
  for (const auto& mc : d.multus_configs) {
    if (UsesSharedPlugin(mc.cni_type)) used.insert(mc.nic);
  }
  std::vector<NicRef> out;
  for (size_t i = 0; i < d.nics.size(); ++i) {
    const NicSpec& nic = d.nics[i];
    const bool take = used.empty() ? nic.num_vfs.value_or(0) <= 0 : used.count(nic.name) > 0;
    if (take) out.push_back(NicRef{i, &nic});
  }
  return out;
}

namespace {

// The chart templates deviceConfig.vendors and .deviceIDs as ONE string each
// (a one-element selector list), with ConnectX-5 defaults (15b3, 1017) that
// would select nothing on other NICs: each must be set, from the selectors or
// discovery, and be one value.
StatusOr<std::string> OneValue(const HostView& view, const std::vector<NicRef>& nics,
                               const char* field, const char* chart_key, const char* fallback) {
  std::set<std::string> values;
  std::string where;
  for (const NicRef& ref : nics) {
    const NicSelector& sel = ref.nic->selector;
    const std::optional<std::string>& given =
        std::string(field) == "vendor" ? sel.vendor : sel.device_id;
    if (given) {
      values.insert(*given);
      continue;
    }
    bool found = false;
    for (const PciFunction* pf : view.SpecificPfs(ref)) {
      values.insert(std::string(field) == "vendor" ? pf->vendor : pf->device_id);
      found = true;
    }
    if (!found) where = HostView::NicField(ref.index, "nicSelector." + std::string(field));
  }
  if (!where.empty()) {
    return InvalidArgumentError(
        where + ": needed for the Spiderpool chart's " + chart_key + " (its default " + fallback +
        " selects only ConnectX-5 NICs); give it, or --root with rootDevices/pfNames to "
        "discover it");
  }
  if (values.size() > 1) {
    std::string list;
    for (const auto& v : values) list += (list.empty() ? "" : ", ") + v;
    return InvalidArgumentError(std::string("the Spiderpool chart's ") + chart_key +
                                " is one value, but the shared nics use " + list +
                                ": give those NICs VFs, or render --flavor multus (the "
                                "standalone plugin's ConfigMap takes lists)");
  }
  return values.empty() ? std::string(fallback) : *values.begin();
}

// The namespaces the chart's values.yaml excludes from the webhook by default
// (spiderpoolController.podResourceInject.namespacesExclude, v1.0.0).
constexpr const char* kWebhookDefaultExcludes[] = {"kube-system", "spiderpool", "metallb-system",
                                                   "istio-system"};

// spiderpoolController.podResourceInject: on, and with workloadNamespaces the
// webhook's namespaces: namespacesInclude is them, namespacesExclude the
// chart's default list. The chart turns both into one namespaceSelector of
// the MutatingWebhookConfiguration (an In and a NotIn expression, ANDed;
// templates/tls.yaml), so a workload namespace that the default list holds is
// never served: a warning says so. The exclusions stay: the webhook's
// failurePolicy is Fail, and kube-system's pods must not wait on
// spiderpool-controller.
json PodResourceInjectValues(HostView& view) {
  json out = {{"enabled", true}};
  const std::vector<std::string>& workload = view.Kubernetes().workload_namespaces;
  if (workload.empty()) return out;
  json exclude = json::array();
  for (const char* ns : kWebhookDefaultExcludes) exclude.push_back(ns);
  out["namespacesExclude"] = exclude;
  out["namespacesInclude"] = workload;
  const std::string release = view.Kubernetes().sriov_operator_namespace;
  for (const std::string& ns : workload) {
    const bool excluded =
        std::find(std::begin(kWebhookDefaultExcludes), std::end(kWebhookDefaultExcludes), ns) !=
        std::end(kWebhookDefaultExcludes);
    if (!excluded && ns != release) continue;
    view.Warn("spec.kubernetes.workloadNamespaces: " + ns +
              (excluded ? " is in the Spiderpool chart's default "
                          "spiderpoolController.podResourceInject.namespacesExclude"
                        : " is Spiderpool's own release namespace") +
              ": the cni.spidernet.io/rdma-resource-inject webhook does not serve pods there "
              "(its failurePolicy is Fail: the chart keeps system namespaces out); run the "
              "workloads in a namespace of their own");
  }
  return out;
}

}  // namespace

StatusOr<json> SpiderpoolHelmValues(HostView& view) {
  const DesiredState& d = view.desired();
  json values = json::object();
  if (d.kubernetes && d.kubernetes->rdma_shared_device_plugin) {
    const RdmaSharedDevicePluginSpec& p = *d.kubernetes->rdma_shared_device_plugin;
    std::vector<NicRef> nics = SharedPluginNics(view);
    ASSIGN_OR_RETURN(
        std::string vendor,
        OneValue(view, nics, "vendor", "rdma.rdmaSharedDevicePlugin.deviceConfig.vendors", "15b3"));
    ASSIGN_OR_RETURN(std::string device,
                     OneValue(view, nics, "deviceID",
                              "rdma.rdmaSharedDevicePlugin.deviceConfig.deviceIDs", "1017"));
    json if_names = json::array();
    for (const NicRef& ref : nics) {
      const bool specific = !ref.nic->selector.root_devices.empty() || ref.nic->selector.near_gpu;
      ASSIGN_OR_RETURN(std::vector<std::string> names, view.PfNetdevs(ref, specific));
      for (const auto& n : names) {
        if (std::find(if_names.begin(), if_names.end(), n) == if_names.end()) if_names.push_back(n);
      }
    }
    json device_config = {{"resourcePrefix", view.ResourcePrefix()},
                          {"resourceName", p.resource_name},
                          {"rdmaHcaMax", p.rdma_hca_max},
                          {"vendors", vendor},
                          {"deviceIDs", device}};
    if (!if_names.empty() && view.SpiderpoolV09()) {
      // The v0.9 chart has no deviceConfig.ifNames: its plugin publishes
      // every port of the vendor/device.
      view.Warn("rdma.rdmaSharedDevicePlugin.deviceConfig.ifNames is not in the Spiderpool " +
                view.SpiderpoolVersion() + " chart: the shared device plugin publishes every " +
                vendor + ":" + device + " port, not only " + if_names.dump());
    } else if (!if_names.empty()) {
      device_config["ifNames"] = if_names;
    }
    values["rdma"]["rdmaSharedDevicePlugin"] = {{"install", true}, {"deviceConfig", device_config}};
  }
  bool vfs = false;
  for (const auto& nic : d.nics) vfs = vfs || nic.num_vfs.value_or(0) > 0;
  if (vfs) {
    // The operator runs in the release namespace (its policies must be there:
    // spec.kubernetes.sriovOperatorNamespace) and prefixes resources with
    // sriov.resourcePrefix (the SpiderMultusConfigs name <prefix>/<resource>).
    values["sriov"] = {{"install", true}, {"resourcePrefix", view.ResourcePrefix()}};
  }
  bool inject = false, cni_plugins = false;
  for (const auto& mc : d.multus_configs) {
    inject = inject || mc.rdma_resource_inject.has_value();
    cni_plugins = cni_plugins || mc.cni_type == "macvlan" || mc.cni_type == "ipvlan";
  }
  // podResourceInject came with v1.0 (the multus configs' warning says so).
  if (inject && !view.SpiderpoolV09()) {
    values["spiderpoolController"]["podResourceInject"] = PodResourceInjectValues(view);
  }
  // macvlan/ipvlan come from the CNI reference plugins, which the chart
  // installs only when asked (sriov, ib-sriov, ipoib and rdma are in its own
  // plugins image, on by default).
  if (cni_plugins) values["plugins"] = {{"installCNI", true}};
  return values;
}

}  // namespace provisioner::manifests
