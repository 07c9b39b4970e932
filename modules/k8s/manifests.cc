#include "modules/k8s/manifests.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <fstream>

#include "engine/model/selector.h"
#include "engine/output/render.h"

namespace provisioner::k8s {
namespace {

using nlohmann::json;

constexpr const char* kSpiderpoolApi = "spiderpool.spidernet.io/v2beta1";
constexpr const char* kSriovApi = "sriovnetwork.openshift.io/v1";
constexpr const char* kNadApi = "k8s.cni.cncf.io/v1";
constexpr const char* kDefaultSriovNamespace = "sriov-network-operator";

std::string NicField(size_t i, const std::string& field) {
  return DesiredState::NicPath(i) + "." + field;
}

void AddUnique(json& arr, const std::string& v) {
  for (const auto& x : arr) {
    if (x == v) return;
  }
  arr.push_back(v);
}

struct NicRef {
  size_t index = 0;
  const NicSpec* nic = nullptr;
};

StatusOr<NicRef> FindNic(const DesiredState& d, const std::string& name) {
  for (size_t i = 0; i < d.nics.size(); ++i) {
    if (d.nics[i].name == name) return NicRef{i, &d.nics[i]};
  }
  return InvalidArgumentError("multusConfigs: nic " + name + " is not a spec.nics[].name");
}

// PF netdevs: nicSelector.pfNames, else discovery, else an error naming the field.
StatusOr<std::vector<std::string>> PfNetdevs(const NicRef& ref, const ManifestOptions& opt,
                                             bool required) {
  if (!ref.nic->selector.pf_names.empty()) return ref.nic->selector.pf_names;
  std::vector<std::string> out;
  if (opt.facts != nullptr) {
    for (const PciFunction* pf : SelectPfs(*ref.nic, *opt.facts)) {
      if (!pf->netdevs.empty()) out.push_back(pf->netdevs.front());
    }
    if (out.empty() && required) {
      return NotFoundError(NicField(ref.index, "nicSelector") +
                           ": no PF with a netdev on this host matches it");
    }
    return out;
  }
  if (required) {
    return InvalidArgumentError(
        NicField(ref.index, "nicSelector.pfNames") +
        ": needed to name the PF netdev (give it, or --root to discover it)");
  }
  return out;
}

json Metadata(const std::string& name, const std::optional<std::string>& ns) {
  json m = {{"name", name}};
  if (ns) m["namespace"] = *ns;
  return m;
}

json IpPoolRefsJson(const IpPoolRefs& r) {
  json j = json::object();
  if (!r.ipv4.empty()) j["ipv4"] = r.ipv4;
  if (!r.ipv6.empty()) j["ipv6"] = r.ipv6;
  return j;
}

bool IsIpv6(const std::string& subnet) { return subnet.find(':') != std::string::npos; }

Manifest SpiderIpPool(const IpPoolSpec& p) {
  json spec = {{"subnet", p.subnet}, {"ipVersion", IsIpv6(p.subnet) ? 6 : 4}};
  if (!p.ips.empty()) spec["ips"] = p.ips;
  if (p.gateway) spec["gateway"] = *p.gateway;
  if (!p.exclude_ips.empty()) spec["excludeIPs"] = p.exclude_ips;
  // ipPools[].vlan: SpiderIPPool v2beta1 has no vlan field; the VLAN goes on
  // the multus config (vlanID).
  json doc = {{"apiVersion", kSpiderpoolApi},
              {"kind", "SpiderIPPool"},
              {"metadata", Metadata(p.name, std::nullopt)},
              {"spec", spec}};
  return {"SpiderIPPool", p.name, doc};
}

bool Exclusive(const DesiredState& d) {
  return d.rdma && d.rdma->netns_mode && *d.rdma->netns_mode == "exclusive";
}

std::string ResourcePrefix(const DesiredState& d) {
  return d.kubernetes ? d.kubernetes->resource_prefix : KubernetesSpec().resource_prefix;
}

StatusOr<std::string> SriovResource(const DesiredState& d, const NicRef& ref) {
  if (!ref.nic->resource_name) {
    return InvalidArgumentError(NicField(ref.index, "resourceName") + ": needed for " +
                                "an SR-IOV multus config or a numVfs > 0 NIC");
  }
  return *ref.nic->resource_name;
}

StatusOr<Manifest> SpiderMultusConfig(const DesiredState& d, const MultusConfigSpec& mc,
                                      const ManifestOptions& opt) {
  ASSIGN_OR_RETURN(NicRef ref, FindNic(d, mc.nic));
  json spec = {{"cniType", mc.cni_type}};
  json pools = IpPoolRefsJson(mc.ippools);
  const bool rdma_isolation = Exclusive(d) && ref.nic->is_rdma.value_or(false);
  if (mc.cni_type == "macvlan" || mc.cni_type == "ipvlan") {
    ASSIGN_OR_RETURN(std::vector<std::string> master, PfNetdevs(ref, opt, /*required=*/true));
    json c = {{"master", master}};
    if (!pools.empty()) c["ippools"] = pools;
    if (mc.vlan) c["vlanID"] = *mc.vlan;
    if (d.kubernetes && d.kubernetes->rdma_shared_device_plugin) {
      c["rdmaResourceName"] =
          ResourcePrefix(d) + "/" + d.kubernetes->rdma_shared_device_plugin->resource_name;
    }
    spec[mc.cni_type] = c;
  } else if (mc.cni_type == "sriov") {
    ASSIGN_OR_RETURN(std::string res, SriovResource(d, ref));
    json c = {{"resourceName", ResourcePrefix(d) + "/" + res}};
    if (rdma_isolation) c["rdmaIsolation"] = true;
    if (!pools.empty()) c["ippools"] = pools;
    if (mc.vlan) c["vlanID"] = *mc.vlan;
    spec["sriov"] = c;
  } else if (mc.cni_type == "ib-sriov") {
    ASSIGN_OR_RETURN(std::string res, SriovResource(d, ref));
    json c = {{"resourceName", ResourcePrefix(d) + "/" + res}};
    if (mc.pkey) c["pkey"] = *mc.pkey;
    if (rdma_isolation) c["rdmaIsolation"] = true;
    if (!pools.empty()) c["ippools"] = pools;
    spec["ibsriov"] = c;
  } else if (mc.cni_type == "ipoib") {
    ASSIGN_OR_RETURN(std::vector<std::string> master, PfNetdevs(ref, opt, /*required=*/true));
    json c = {{"master", master.front()}};
    if (!pools.empty()) c["ippools"] = pools;
    spec["ipoib"] = c;
  } else {
    return InvalidArgumentError("multusConfigs " + mc.name + ": cniType " + mc.cni_type +
                                " is not supported");
  }
  json meta = Metadata(mc.name, mc.namespace_name);
  if (mc.rdma_resource_inject) {
    meta["annotations"] = {{"cni.spidernet.io/rdma-resource-inject", *mc.rdma_resource_inject}};
  }
  json doc = {{"apiVersion", kSpiderpoolApi},
              {"kind", "SpiderMultusConfig"},
              {"metadata", meta},
              {"spec", spec}};
  return Manifest{"SpiderMultusConfig", mc.name, doc};
}

const IpPoolSpec* FindPool(const DesiredState& d, const std::string& name) {
  for (const auto& p : d.ip_pools) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

// whereabouts IPAM from the config's first pool.
json WhereaboutsIpam(const DesiredState& d, const MultusConfigSpec& mc) {
  json ipam = {{"type", "whereabouts"}};
  const IpPoolSpec* p = nullptr;
  if (!mc.ippools.ipv4.empty()) p = FindPool(d, mc.ippools.ipv4.front());
  if (p == nullptr && !mc.ippools.ipv6.empty()) p = FindPool(d, mc.ippools.ipv6.front());
  if (p == nullptr) return ipam;
  ipam["range"] = p->subnet;
  if (!p->ips.empty()) {
    const std::string& r = p->ips.front();
    size_t dash = r.find('-');
    ipam["range_start"] = dash == std::string::npos ? r : r.substr(0, dash);
    if (dash != std::string::npos) ipam["range_end"] = r.substr(dash + 1);
  }
  if (p->gateway) ipam["gateway"] = *p->gateway;
  if (!p->exclude_ips.empty()) ipam["exclude"] = p->exclude_ips;
  return ipam;
}

StatusOr<Manifest> NetworkAttachmentDefinition(const DesiredState& d, const MultusConfigSpec& mc,
                                               const ManifestOptions& opt) {
  ASSIGN_OR_RETURN(NicRef ref, FindNic(d, mc.nic));
  json meta = Metadata(mc.name, mc.namespace_name);
  json plugin = {{"type", mc.cni_type}, {"ipam", WhereaboutsIpam(d, mc)}};
  if (mc.cni_type == "macvlan" || mc.cni_type == "ipvlan") {
    ASSIGN_OR_RETURN(std::vector<std::string> master, PfNetdevs(ref, opt, /*required=*/true));
    plugin["master"] = master.front();
    if (mc.cni_type == "macvlan") plugin["mode"] = "bridge";
  } else if (mc.cni_type == "sriov" || mc.cni_type == "ib-sriov") {
    ASSIGN_OR_RETURN(std::string res, SriovResource(d, ref));
    meta["annotations"] = {{"k8s.v1.cni.cncf.io/resourceName", ResourcePrefix(d) + "/" + res}};
    if (mc.cni_type == "sriov" && mc.vlan) plugin["vlan"] = *mc.vlan;
    if (mc.cni_type == "ib-sriov" && mc.pkey) plugin["pkey"] = *mc.pkey;
  } else if (mc.cni_type == "ipoib") {
    ASSIGN_OR_RETURN(std::vector<std::string> master, PfNetdevs(ref, opt, /*required=*/true));
    plugin["master"] = master.front();
  } else {
    return InvalidArgumentError("multusConfigs " + mc.name + ": cniType " + mc.cni_type +
                                " is not supported");
  }
  json config = {{"cniVersion", "0.3.1"}, {"name", mc.name}};
  if ((mc.cni_type == "sriov" || mc.cni_type == "ib-sriov") && Exclusive(d) &&
      ref.nic->is_rdma.value_or(false)) {
    config["plugins"] = json::array({plugin, {{"type", "rdma"}}});
  } else {
    config.update(plugin);
  }
  json doc = {{"apiVersion", kNadApi},
              {"kind", "NetworkAttachmentDefinition"},
              {"metadata", meta},
              {"spec", {{"config", config.dump()}}}};
  return Manifest{"NetworkAttachmentDefinition", mc.name, doc};
}

StatusOr<Manifest> SriovPolicy(const DesiredState& d, size_t i, const ManifestOptions& opt) {
  const NicSpec& nic = d.nics[i];
  NicRef ref{i, &nic};
  ASSIGN_OR_RETURN(std::string res, SriovResource(d, ref));
  json node_selector = {{"kubernetes.io/hostname", d.name}};
  if (d.kubernetes) {
    for (const auto& [k, v] : d.kubernetes->node_selector) node_selector[k] = v;
  }
  json sel = json::object();
  if (nic.selector.vendor) sel["vendor"] = *nic.selector.vendor;
  if (nic.selector.device_id) sel["deviceID"] = *nic.selector.device_id;
  if (!nic.selector.root_devices.empty()) sel["rootDevices"] = nic.selector.root_devices;
  if (!nic.selector.pf_names.empty()) sel["pfNames"] = nic.selector.pf_names;
  if (nic.selector.root_devices.empty() && nic.selector.pf_names.empty() && opt.facts != nullptr) {
    json roots = json::array();
    for (const PciFunction* pf : SelectPfs(nic, *opt.facts)) roots.push_back(pf->pci_address);
    if (!roots.empty()) sel["rootDevices"] = roots;
  }
  json spec = {{"externallyManaged", true}, {"nodeSelector", node_selector}, {"nicSelector", sel},
               {"numVfs", *nic.num_vfs},    {"resourceName", res},           {"priority", 99}};
  if (nic.link_type) spec["linkType"] = *nic.link_type == "ib" ? "ib" : "eth";
  if (nic.device_type) spec["deviceType"] = *nic.device_type;
  if (nic.is_rdma) spec["isRdma"] = *nic.is_rdma;
  if (nic.mtu) spec["mtu"] = *nic.mtu;
  json doc = {{"apiVersion", kSriovApi},
              {"kind", "SriovNetworkNodePolicy"},
              {"metadata", Metadata(nic.name, std::string(kDefaultSriovNamespace))},
              {"spec", spec}};
  return Manifest{"SriovNetworkNodePolicy", nic.name, doc};
}

Manifest RdmaDevicesConfigMap(const DesiredState& d, const ManifestOptions& opt) {
  const RdmaSharedDevicePluginSpec& p = *d.kubernetes->rdma_shared_device_plugin;
  json vendors = json::array(), device_ids = json::array(), if_names = json::array();
  for (size_t i = 0; i < d.nics.size(); ++i) {
    const NicSpec& nic = d.nics[i];
    if (nic.num_vfs.value_or(0) > 0) continue;  // VFs go to the SR-IOV device plugin
    if (nic.selector.vendor) AddUnique(vendors, *nic.selector.vendor);
    if (nic.selector.device_id) AddUnique(device_ids, *nic.selector.device_id);
    auto names = PfNetdevs(NicRef{i, &nic}, opt, /*required=*/false);
    if (names.ok()) {
      for (const auto& n : *names) AddUnique(if_names, n);
    }
  }
  json selectors = json::object();
  if (!vendors.empty()) selectors["vendors"] = vendors;
  if (!device_ids.empty()) selectors["deviceIDs"] = device_ids;
  if (!if_names.empty()) selectors["ifNames"] = if_names;
  json config = {{"configList", json::array({{{"resourceName", p.resource_name},
                                              {"resourcePrefix", d.kubernetes->resource_prefix},
                                              {"rdmaHcaMax", p.rdma_hca_max},
                                              {"selectors", selectors}}})}};
  json doc = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", Metadata("rdma-devices", std::string("kube-system"))},
              {"data", {{"config.json", config.dump(2) + "\n"}}}};
  return {"ConfigMap", "rdma-devices", doc};
}

// VF device ID of a PF: discovery's sriov_vf_device, else the ConnectX
// PF->VF pairs (pci.ids / mlx5_core's id table), else unknown ("").
std::string VfDeviceId(const NicSpec& nic, const ManifestOptions& opt) {
  if (opt.facts != nullptr) {
    for (const PciFunction* pf : SelectPfs(nic, *opt.facts)) {
      if (pf->sriov && !pf->sriov->vf_device.empty()) return pf->sriov->vf_device;
    }
  }
  if (!nic.selector.vendor || *nic.selector.vendor != "15b3" || !nic.selector.device_id) return "";
  static const std::pair<const char*, const char*> kMellanoxVf[] = {
      {"1013", "1014"},  // ConnectX-4
      {"1015", "1016"},  // ConnectX-4 Lx
      {"1017", "1018"},  // ConnectX-5
      {"1019", "101a"},  // ConnectX-5 Ex
      {"101b", "101c"},  // ConnectX-6
      {"101d", "101e"},  // ConnectX-6 Dx
      {"101f", "101e"},  // ConnectX-6 Lx
      {"1021", "101e"},  // ConnectX-7
      {"1023", "101e"},  // ConnectX-8
      {"a2d6", "101e"},  // BlueField-2
      {"a2dc", "101e"},  // BlueField-3
  };
  for (const auto& [pf, vf] : kMellanoxVf) {
    if (*nic.selector.device_id == pf) return vf;
  }
  return "";
}

// SR-IOV network device plugin ConfigMap (sriovdp-config): one resource per
// NIC with VFs, selecting the VFs by vendor, VF device ID, PF and link type.
Manifest SriovDevicePluginConfigMap(const DesiredState& d, const ManifestOptions& opt) {
  json resources = json::array();
  for (size_t i = 0; i < d.nics.size(); ++i) {
    const NicSpec& nic = d.nics[i];
    if (nic.num_vfs.value_or(0) <= 0 || !nic.resource_name) continue;
    json sel = json::object();
    if (nic.selector.vendor) sel["vendors"] = json::array({*nic.selector.vendor});
    std::string vf = VfDeviceId(nic, opt);
    if (!vf.empty()) sel["devices"] = json::array({vf});
    if (nic.device_type && *nic.device_type == "vfio-pci") {
      sel["drivers"] = json::array({"vfio-pci"});
    }
    auto names = PfNetdevs(NicRef{i, &nic}, opt, /*required=*/false);
    if (names.ok() && !names->empty()) sel["pfNames"] = *names;
    json roots = json::array();
    for (const auto& r : nic.selector.root_devices) roots.push_back(r);
    if (roots.empty() && opt.facts != nullptr) {
      for (const PciFunction* pf : SelectPfs(nic, *opt.facts)) roots.push_back(pf->pci_address);
    }
    if (!roots.empty()) sel["rootDevices"] = roots;
    if (nic.link_type) sel["linkTypes"] = json::array({*nic.link_type == "ib" ? "infiniband" : "ether"});
    if (nic.is_rdma) sel["isRdma"] = *nic.is_rdma;
    resources.push_back({{"resourceName", *nic.resource_name},
                         {"resourcePrefix", ResourcePrefix(d)},
                         {"selectors", sel}});
  }
  json config = {{"resourceList", resources}};
  json doc = {{"apiVersion", "v1"},
              {"kind", "ConfigMap"},
              {"metadata", Metadata("sriovdp-config", std::string("kube-system"))},
              {"data", {{"config.json", config.dump(2) + "\n"}}}};
  return {"ConfigMap", "sriovdp-config", doc};
}

bool HasSriovResource(const DesiredState& d) {
  for (const auto& nic : d.nics) {
    if (nic.num_vfs.value_or(0) > 0 && nic.resource_name) return true;
  }
  return false;
}

// --with-test-workload: the guides' RDMA test DaemonSet. One pod per
// selected node, every multus config attached, each device resource asked
// for once, IPC_LOCK for memory registration; `kubectl exec` into two pods
// and run ib_write_bw between them.
StatusOr<Manifest> TestWorkload(const DesiredState& d) {
  if (d.multus_configs.empty()) {
    return InvalidArgumentError("--with-test-workload: host.yaml has no spec.multusConfigs to attach");
  }
  json networks = json::array();
  json limits = json::object();
  for (const auto& mc : d.multus_configs) {
    networks.push_back(mc.namespace_name + "/" + mc.name);
    ASSIGN_OR_RETURN(NicRef ref, FindNic(d, mc.nic));
    if (mc.cni_type == "sriov" || mc.cni_type == "ib-sriov") {
      ASSIGN_OR_RETURN(std::string res, SriovResource(d, ref));
      limits[ResourcePrefix(d) + "/" + res] = 1;
    } else if (d.kubernetes && d.kubernetes->rdma_shared_device_plugin) {
      limits[ResourcePrefix(d) + "/" + d.kubernetes->rdma_shared_device_plugin->resource_name] = 1;
    }
  }
  std::string joined;
  for (const auto& n : networks) joined += (joined.empty() ? "" : ",") + n.get<std::string>();
  const std::string name = "rdma-test";
  json labels = {{"app", name}};
  json container = {{"name", "rdma-tools"},
                    {"image", "ghcr.io/spidernet-io/rdma-tools:latest"},
                    {"imagePullPolicy", "IfNotPresent"},
                    {"command", json::array({"/bin/sh", "-c", "sleep infinity"})},
                    {"securityContext", {{"capabilities", {{"add", json::array({"IPC_LOCK"})}}}}}};
  if (!limits.empty()) container["resources"] = {{"limits", limits}};
  json pod_spec = {{"containers", json::array({container})}};
  if (d.kubernetes && !d.kubernetes->node_selector.empty()) {
    pod_spec["nodeSelector"] = d.kubernetes->node_selector;
  }
  json doc = {
      {"apiVersion", "apps/v1"},
      {"kind", "DaemonSet"},
      {"metadata", Metadata(name, d.multus_configs.front().namespace_name)},
      {"spec",
       {{"selector", {{"matchLabels", labels}}},
        {"template",
         {{"metadata",
           {{"labels", labels}, {"annotations", {{"k8s.v1.cni.cncf.io/networks", joined}}}}},
          {"spec", pod_spec}}}}}};
  return Manifest{"DaemonSet", name, doc};
}

}  // namespace

StatusOr<std::vector<Manifest>> BuildManifests(const DesiredState& desired,
                                               const ManifestOptions& options) {
  if (options.flavor != "spiderpool" && options.flavor != "multus") {
    return InvalidArgumentError("--flavor " + options.flavor + ": want spiderpool or multus");
  }
  std::vector<Manifest> out;
  if (options.flavor == "spiderpool") {
    for (const auto& p : desired.ip_pools) out.push_back(SpiderIpPool(p));
    for (const auto& mc : desired.multus_configs) {
      ASSIGN_OR_RETURN(Manifest m, SpiderMultusConfig(desired, mc, options));
      out.push_back(std::move(m));
    }
  } else {
    for (const auto& mc : desired.multus_configs) {
      ASSIGN_OR_RETURN(Manifest m, NetworkAttachmentDefinition(desired, mc, options));
      out.push_back(std::move(m));
    }
  }
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    if (desired.nics[i].num_vfs.value_or(0) <= 0) continue;
    ASSIGN_OR_RETURN(Manifest m, SriovPolicy(desired, i, options));
    out.push_back(std::move(m));
  }
  if (desired.kubernetes && desired.kubernetes->rdma_shared_device_plugin) {
    out.push_back(RdmaDevicesConfigMap(desired, options));
  }
  if (HasSriovResource(desired)) out.push_back(SriovDevicePluginConfigMap(desired, options));
  if (options.with_test_workload) {
    ASSIGN_OR_RETURN(Manifest m, TestWorkload(desired));
    out.push_back(std::move(m));
  }
  return out;
}

std::string RenderManifests(const std::vector<Manifest>& manifests) {
  std::string s;
  for (const auto& m : manifests) s += "---\n" + JsonToYaml(m.doc);
  return s;
}

std::string ManifestFileName(const Manifest& m) {
  std::string kind = m.kind;
  std::transform(kind.begin(), kind.end(), kind.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return kind + "-" + m.name + ".yaml";
}

Status WriteManifests(const DesiredState& desired, const ManifestOptions& options,
                      const std::string& output_dir, std::ostream& out) {
  ASSIGN_OR_RETURN(std::vector<Manifest> manifests, BuildManifests(desired, options));
  if (output_dir.empty()) {
    out << RenderManifests(manifests);
    return OkStatus();
  }
  if (::mkdir(output_dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoToStatus(errno, "mkdir " + output_dir);
  }
  for (const auto& m : manifests) {
    std::string path = output_dir + "/" + ManifestFileName(m);
    std::ofstream f(path, std::ios::trunc);
    f << JsonToYaml(m.doc);
    f.close();
    if (!f) return ErrnoToStatus(errno, "write " + path);
    out << path << "\n";
  }
  return OkStatus();
}

}  // namespace provisioner::k8s
