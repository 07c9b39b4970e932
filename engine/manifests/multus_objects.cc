// The multus flavor: a NetworkAttachmentDefinition per multus config and the
// standalone device plugins' ConfigMaps (rdma-devices, sriovdp-config) that
// Spiderpool's chart would otherwise render.
#include "engine/manifests/host_view.h"
#include "engine/model/selector.h"

namespace provisioner::manifests {

using nlohmann::json;

namespace {

void AddUnique(json& arr, const std::string& v) {
  for (const auto& x : arr) {
    if (x == v) return;
  }
  arr.push_back(v);
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

// --flavor multus says what it changes from the guides' Spiderpool objects:
// one warning per field it cannot carry.
void MultusFlavorWarnings(HostView& view, const MultusConfigSpec& mc) {
  const DesiredState& d = view.desired();
  const size_t i = static_cast<size_t>(&mc - d.multus_configs.data());
  const std::string path = "spec.multusConfigs[" + std::to_string(i) + "]";
  if (mc.vlan && (mc.cni_type == "macvlan" || mc.cni_type == "ipvlan")) {
    view.Warn(path + ".vlan: --flavor multus drops it: the " + mc.cni_type +
              " plugin has no VLAN (Spiderpool makes the VLAN interface on the master); "
              "create <master>." +
              std::to_string(*mc.vlan) + " on the host, or use Spiderpool");
  }
  const size_t pools = mc.ippools.ipv4.size() + mc.ippools.ipv6.size();
  if (pools > 1) {
    view.Warn(path +
              ".ippools: --flavor multus uses whereabouts IPAM with the first pool only "
              "(one address family, one range); Spiderpool's IPAM takes every pool");
  }
  for (const auto& name : mc.ippools.ipv4.empty() ? mc.ippools.ipv6 : mc.ippools.ipv4) {
    const IpPoolSpec* p = FindPool(d, name);
    if (p == nullptr) break;
    const size_t k = static_cast<size_t>(p - d.ip_pools.data());
    const std::string pool_path = "spec.ipPools[" + std::to_string(k) + "]";
    if (p->ips.size() > 1) {
      view.Warn(pool_path + ".ips: --flavor multus (whereabouts) takes the first range only (" +
                p->ips.front() + ")");
    }
    if (p->gateway) {
      view.Warn(pool_path + ".gateway: --flavor multus cannot express the pod's routes through " +
                *p->gateway +
                " (Spiderpool's coordinator adds them and keeps the default "
                "route on eth0); whereabouts only reports the gateway");
    }
    break;
  }
}

}  // namespace

StatusOr<Manifest> NetworkAttachmentDefinition(HostView& view, const MultusConfigSpec& mc) {
  const DesiredState& d = view.desired();
  MultusFlavorWarnings(view, mc);
  ASSIGN_OR_RETURN(NicRef ref, view.FindNic(mc.nic));
  json doc = Object(kNadApi, "NetworkAttachmentDefinition", mc.name, mc.namespace_name);
  json plugin = {{"type", mc.cni_type}, {"ipam", WhereaboutsIpam(d, mc)}};
  bool rdma = false;
  if (mc.cni_type == "macvlan" || mc.cni_type == "ipvlan") {
    ASSIGN_OR_RETURN(std::vector<std::string> master, view.PfNetdevs(ref, /*required=*/true));
    plugin["master"] = master.front();
    if (mc.cni_type == "macvlan") plugin["mode"] = "bridge";
  } else if (IsVfCni(mc.cni_type)) {
    ASSIGN_OR_RETURN(std::string res, view.SriovResource(ref, mc));
    doc["metadata"]["annotations"] = {
        {"k8s.v1.cni.cncf.io/resourceName", view.ResourcePrefix() + "/" + res}};
    if (mc.cni_type == "sriov") {
      ASSIGN_OR_RETURN(std::optional<int> vlan, SriovCniVlan(view, mc, res, /*spiderpool=*/false));
      if (vlan) plugin["vlan"] = *vlan;
      ASSIGN_OR_RETURN(HostView::ResourceVlan host, view.VfVlanOf(res));
      if (vlan && host.vlan) {  // restating the host's VLAN: its qos and proto too
        plugin["vlanQoS"] = host.vlan->qos;
        plugin["vlanProto"] = host.vlan->proto;
      }
    }
    if (mc.cni_type == "ib-sriov" && mc.pkey) plugin["pkey"] = *mc.pkey;
    rdma = view.RdmaIsolation(ref, mc);
  } else if (mc.cni_type == "ipoib") {
    ASSIGN_OR_RETURN(std::vector<std::string> master, view.PfNetdevs(ref, /*required=*/true));
    plugin["master"] = master.front();
  } else {
    return InvalidArgumentError("multusConfigs " + mc.name + ": cniType " + mc.cni_type +
                                " is not supported");
  }
  json config = {{"cniVersion", "0.3.1"}, {"name", mc.name}};
  if (rdma) {
    // The RDMA CNI moves the VF's RDMA device into the pod (exclusive mode).
    config["plugins"] = json::array({plugin, {{"type", "rdma"}}});
  } else {
    config.update(plugin);
  }
  doc["spec"] = {{"config", config.dump()}};
  return Manifest{"NetworkAttachmentDefinition", mc.name, doc};
}

// The standalone RDMA shared device plugin's ConfigMap (multus flavor; under
// Spiderpool its chart renders the plugin's config from --helm-values).
StatusOr<Manifest> RdmaDevicesConfigMap(HostView& view) {
  const DesiredState& d = view.desired();
  const RdmaSharedDevicePluginSpec& p = *d.kubernetes->rdma_shared_device_plugin;
  json vendors = json::array(), device_ids = json::array(), if_names = json::array();
  for (const NicRef& ref : SharedPluginNics(view)) {
    const NicSpec& nic = *ref.nic;
    if (nic.selector.vendor) AddUnique(vendors, *nic.selector.vendor);
    if (nic.selector.device_id) AddUnique(device_ids, *nic.selector.device_id);
    const bool specific = !nic.selector.root_devices.empty() || nic.selector.near_gpu;
    ASSIGN_OR_RETURN(std::vector<std::string> names, view.PfNetdevs(ref, specific));
    for (const auto& n : names) AddUnique(if_names, n);
  }
  json selectors = json::object();
  if (!vendors.empty()) selectors["vendors"] = vendors;
  if (!device_ids.empty()) selectors["deviceIDs"] = device_ids;
  if (!if_names.empty()) selectors["ifNames"] = if_names;
  json config = {{"configList", json::array({{{"resourceName", p.resource_name},
                                              {"resourcePrefix", view.ResourcePrefix()},
                                              {"rdmaHcaMax", p.rdma_hca_max},
                                              {"selectors", selectors}}})}};
  json doc = Object("v1", "ConfigMap", "rdma-devices", std::string(kDevicePluginNamespace));
  doc["data"] = {{"config.json", config.dump(2) + "\n"}};
  return Manifest{"ConfigMap", "rdma-devices", doc};
}

namespace {

// VF device ID of a PF: discovery's sriov_vf_device, else the ConnectX
// PF->VF pairs (pci.ids / mlx5_core's id table), else unknown ("").
std::string VfDeviceId(const HostView& view, const NicRef& ref) {
  const NicSpec& nic = *ref.nic;
  if (view.facts() != nullptr) {
    for (const PciFunction* pf : SelectPfs(nic, *view.facts())) {
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

// One entry of the plugin's resourceList: the VFs of `ref`'s nic by vendor,
// VF device ID and root device, then the driver (vfio-pci when `vfio`), PF
// names (`pf_names`, omitted when null), link type and RDMA when given.
json DevicePluginResource(const HostView& view, const NicRef& ref, const std::string& resource_name,
                          bool vfio, const json& pf_names,
                          const std::optional<std::string>& link_type,
                          const std::optional<bool>& is_rdma) {
  json sel = json::object();
  if (ref.nic->selector.vendor) sel["vendors"] = json::array({*ref.nic->selector.vendor});
  std::string vf = VfDeviceId(view, ref);
  if (!vf.empty()) sel["devices"] = json::array({vf});
  if (vfio) sel["drivers"] = json::array({"vfio-pci"});
  if (!pf_names.is_null()) sel["pfNames"] = pf_names;
  std::vector<std::string> roots = view.RootDevices(ref);
  if (!roots.empty()) sel["rootDevices"] = roots;
  if (link_type) sel["linkTypes"] = json::array({*link_type == "ib" ? "infiniband" : "ether"});
  if (is_rdma) sel["isRdma"] = *is_rdma;
  json resource = {{"resourceName", resource_name},
                   {"resourcePrefix", view.ResourcePrefix()},
                   {"selectors", sel}};
  if (view.ExcludeTopology(resource_name)) resource["excludeTopology"] = true;
  return resource;
}

// The device-plugin resources of a nic with vfGroups, one per group, as the
// operator renders a ranged policy (controllers/sriovnetworknodepolicy_
// controller.go): pfNames "<pf>#first-last" (the plugin's VF index range
// selector), drivers vfio-pci for a vfio group, link type only for netdevice
// (a vfio-pci VF's link type is not detectable).
StatusOr<json> GroupDevicePluginResources(HostView& view, size_t i) {
  const NicSpec& nic = view.desired().nics[i];
  const NicRef ref{i, &nic};
  json out = json::array();
  for (const VfGroupSpec& group : nic.vf_groups) {
    const VfGroupSpec g = EffectiveVfGroup(nic, group);
    if (!g.resource_name) continue;
    const bool vfio = g.device_type == std::optional<std::string>("vfio-pci");
    ASSIGN_OR_RETURN(std::vector<std::string> pf_names, RangedPfNames(view, ref, group));
    out.push_back(DevicePluginResource(view, ref, *g.resource_name, vfio, pf_names,
                                       vfio ? std::nullopt : nic.link_type, g.is_rdma));
  }
  return out;
}

}  // namespace

// The standalone SR-IOV network device plugin's ConfigMap (sriovdp-config,
// multus flavor): one resource per NIC with VFs, selecting the VFs by
// vendor, VF device ID, PF and link type. Under the sriov-network-operator
// (spiderpool flavor) the operator writes the plugin's config from the
// policies instead.
StatusOr<Manifest> SriovDevicePluginConfigMap(HostView& view) {
  const DesiredState& d = view.desired();
  json resources = json::array();
  for (size_t i = 0; i < d.nics.size(); ++i) {
    const NicSpec& nic = d.nics[i];
    if (nic.num_vfs.value_or(0) > 0 && !nic.vf_groups.empty()) {
      ASSIGN_OR_RETURN(json group_resources, GroupDevicePluginResources(view, i));
      for (auto& r : group_resources) resources.push_back(std::move(r));
      continue;
    }
    if (nic.num_vfs.value_or(0) <= 0 || !nic.resource_name) continue;
    NicRef ref{i, &nic};
    const bool vfio = nic.device_type && *nic.device_type == "vfio-pci";
    ASSIGN_OR_RETURN(std::vector<std::string> names, view.PfNetdevs(ref, /*required=*/false));
    resources.push_back(DevicePluginResource(view, ref, *nic.resource_name, vfio,
                                             names.empty() ? json() : json(names), nic.link_type,
                                             nic.is_rdma));
  }
  json config = {{"resourceList", resources}};
  json doc = Object("v1", "ConfigMap", "sriovdp-config", std::string(kDevicePluginNamespace));
  doc["data"] = {{"config.json", config.dump(2) + "\n"}};
  return Manifest{"ConfigMap", "sriovdp-config", doc};
}

bool HasSriovResource(const DesiredState& d) {
  for (const auto& nic : d.nics) {
    if (nic.num_vfs.value_or(0) <= 0) continue;
    if (nic.resource_name) return true;
    for (const auto& g : nic.vf_groups) {
      if (g.resource_name) return true;
    }
  }
  return false;
}

}  // namespace provisioner::manifests
