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

void AddUnique(json& arr, const std::string& v) {
  for (const auto& x : arr) {
    if (x == v) return;
  }
  arr.push_back(v);
}

json IpPoolRefsJson(const IpPoolRefs& r) {
  json j = json::object();
  if (!r.ipv4.empty()) j["ipv4"] = r.ipv4;
  if (!r.ipv6.empty()) j["ipv6"] = r.ipv6;
  return j;
}

bool IsIpv6(const std::string& subnet) { return subnet.find(':') != std::string::npos; }

bool IsVfCni(const std::string& cni) { return cni == "sriov" || cni == "ib-sriov"; }

Manifest SpiderIpPool(const IpPoolSpec& p) {
  json spec = {{"subnet", p.subnet}, {"ipVersion", IsIpv6(p.subnet) ? 6 : 4}};
  if (!p.ips.empty()) spec["ips"] = p.ips;
  if (p.gateway) spec["gateway"] = *p.gateway;
  if (!p.exclude_ips.empty()) spec["excludeIPs"] = p.exclude_ips;
  // ipPools[].vlan: SpiderIPPool v2beta1 has no vlan field; the VLAN goes on
  // the multus config (vlanID).
  json doc = Object(kSpiderpoolApi, "SpiderIPPool", p.name, std::nullopt);
  doc["spec"] = spec;
  return {"SpiderIPPool", p.name, doc};
}

// The `vlan` of a sriov config's sriov-cni configuration (Spiderpool's
// sriov.vlanID renders into it). sriov-cni sets vlan/vlanQoS/vlanProto on the
// VF when a pod attaches (qos 0 and 802.1Q when only vlan is given) and puts
// the VF's old ones back on detach; without vlan it leaves the VLAN alone
// (v2.4 and later: a nil *int; up to v2.3 vlan was an int, 0 when absent,
// and every attach cleared the VF's VLAN). When apply gives the resource's
// VFs a port VLAN (vfVlan), the config carries it, so that attaching
// restates the host's VLAN instead of clearing or changing it, and a
// multusConfigs[].vlan that differs is an error (each attach would undo the
// host's). Spiderpool's SpiderMultusConfig has vlanID only: with a vfVlan
// qos or 802.1ad, vlanID would reset them, so it is left out (sriov-cni
// v2.4+ then leaves the VF's VLAN as apply set it) and a vlan there is an
// error.
constexpr int kSriovCniMaxVlan = 4094;

StatusOr<std::optional<int>> SriovCniVlan(const HostView& view, const MultusConfigSpec& mc,
                                          const std::string& resource, bool spiderpool) {
  ASSIGN_OR_RETURN(HostView::ResourceVlan host, view.VfVlanOf(resource));
  if (!host.vlan) return std::optional<int>(mc.vlan);
  const VfVlanSpec& v = *host.vlan;
  const std::string who = "multusConfigs " + mc.name + " (resource " + resource + ")";
  if (mc.vlan && *mc.vlan != v.id) {
    return InvalidArgumentError(who + ": vlan " + std::to_string(*mc.vlan) +
                                " is not the port VLAN apply gives its VFs (" + host.field +
                                " id " + std::to_string(v.id) +
                                "): sriov-cni would set the config's on every VF a pod attaches");
  }
  // sriov-cni (LoadConf) and Spiderpool's CRD take VLAN ids 0-4094; the
  // kernel's 4095 (reserved by 802.1Q) cannot be restated: left out, the VF
  // keeps it (sriov-cni v2.4+).
  if (v.id > kSriovCniMaxVlan) return std::optional<int>();
  const bool plain = v.qos == 0 && v.proto == "802.1Q";
  if (!spiderpool || plain) return std::optional<int>(v.id);
  if (mc.vlan) {
    return InvalidArgumentError(
        who + ": vlan " + std::to_string(*mc.vlan) + " with " + host.field + " qos " +
        std::to_string(v.qos) + " proto " + v.proto +
        ": Spiderpool's sriov config carries a vlanID only, and sriov-cni would set qos 0 "
        "proto 802.1Q with it on every attach; leave vlan out (the VFs keep apply's VLAN)");
  }
  return std::optional<int>();
}

StatusOr<Manifest> SpiderMultusConfig(HostView& view, const MultusConfigSpec& mc) {
  const DesiredState& d = view.desired();
  ASSIGN_OR_RETURN(NicRef ref, view.FindNic(mc.nic));
  json spec = {{"cniType", mc.cni_type}};
  json pools = IpPoolRefsJson(mc.ippools);
  if (mc.cni_type == "macvlan" || mc.cni_type == "ipvlan") {
    ASSIGN_OR_RETURN(std::vector<std::string> master, view.PfNetdevs(ref, /*required=*/true));
    json c = {{"master", master}};
    if (!pools.empty()) c["ippools"] = pools;
    if (mc.vlan) c["vlanID"] = *mc.vlan;
    // v0.9 has no rdmaResourceName: its pods ask for the shared device
    // plugin's resource themselves (the test workload does).
    if (d.kubernetes && d.kubernetes->rdma_shared_device_plugin && !view.SpiderpoolV09()) {
      c["rdmaResourceName"] =
          view.ResourcePrefix() + "/" + d.kubernetes->rdma_shared_device_plugin->resource_name;
    }
    spec[mc.cni_type] = c;
  } else if (IsVfCni(mc.cni_type)) {
    ASSIGN_OR_RETURN(std::string res, view.SriovResource(ref, mc));
    json c = {{"resourceName", view.ResourcePrefix() + "/" + res}};
    if (mc.cni_type == "ib-sriov" && mc.pkey) c["pkey"] = *mc.pkey;
    // Always explicit: the CRD defaults differ (sriov false, ib-sriov true)
    // and true needs the host in exclusive mode (the RDMA CNI refuses
    // shared mode, and pods fail to start).
    // Spiderpool v0.9 spells the sriov one enableRdma (v1.0 renamed it; an
    // unknown field is pruned, and the default false leaves exclusive-mode
    // pods without their RDMA device); ibsriov has rdmaIsolation in both.
    const bool v09_sriov = view.SpiderpoolV09() && mc.cni_type == "sriov";
    c[v09_sriov ? "enableRdma" : "rdmaIsolation"] = view.RdmaIsolation(ref, mc);
    if (!pools.empty()) c["ippools"] = pools;
    if (mc.cni_type == "sriov") {
      ASSIGN_OR_RETURN(std::optional<int> vlan, SriovCniVlan(view, mc, res, /*spiderpool=*/true));
      if (vlan) c["vlanID"] = *vlan;
    }
    spec[mc.cni_type == "sriov" ? "sriov" : "ibsriov"] = c;
  } else if (mc.cni_type == "ipoib") {
    ASSIGN_OR_RETURN(std::vector<std::string> master, view.PfNetdevs(ref, /*required=*/true));
    json c = {{"master", master.front()}};
    if (!pools.empty()) c["ippools"] = pools;
    spec["ipoib"] = c;
  } else {
    return InvalidArgumentError("multusConfigs " + mc.name + ": cniType " + mc.cni_type +
                                " is not supported");
  }
  json doc = Object(kSpiderpoolApi, "SpiderMultusConfig", mc.name, mc.namespace_name);
  if (mc.rdma_resource_inject && view.SpiderpoolV09()) {
    view.Warn("multusConfigs " + mc.name + ": rdmaResourceInject needs Spiderpool v1.0 or later " +
              "(podResourceInject); on " + view.SpiderpoolVersion() +
              " pods must ask for the RDMA resources themselves");
  }
  if (mc.rdma_resource_inject) {
    // The docs put the key on the config as an annotation; spiderpool's
    // webhook code lists configs by label: both.
    doc["metadata"]["annotations"] = {
        {"cni.spidernet.io/rdma-resource-inject", *mc.rdma_resource_inject}};
    doc["metadata"]["labels"] = {
        {"cni.spidernet.io/rdma-resource-inject", *mc.rdma_resource_inject}};
  }
  doc["spec"] = spec;
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

// One per nic with VFs, in the operator's namespace. Per pool (named after
// the nic, selecting the pool) or per node ("<nic>-<node>", pinned to the
// hostname), so that two nodes' manifests never overwrite each other's.
StatusOr<Manifest> SriovPolicy(HostView& view, size_t i) {
  const NicSpec& nic = view.desired().nics[i];
  NicRef ref{i, &nic};
  ASSIGN_OR_RETURN(std::string res, view.SriovResource(ref));
  json sel = json::object();
  if (nic.selector.vendor) sel["vendor"] = *nic.selector.vendor;
  if (nic.selector.device_id) sel["deviceID"] = *nic.selector.device_id;
  std::vector<std::string> roots = view.RootDevices(ref);
  if (!roots.empty()) sel["rootDevices"] = roots;
  if (!nic.selector.pf_names.empty()) sel["pfNames"] = nic.selector.pf_names;
  // nics[].names: the operator finds the PF by the name apply gives it.
  if (nic.names && nic.names->netdev) sel["pfNames"] = json::array({*nic.names->netdev});
  const std::string name = view.PolicyName(nic);
  json spec = {{"externallyManaged", true},
               {"nodeSelector", view.NodeOrPoolSelector()},
               {"nicSelector", sel},
               {"numVfs", *nic.num_vfs},
               {"resourceName", res},
               // The operator applies the policies of a PF from priority 99
               // (the lowest) to 0 and the last one sets the PF's
               // externallyManaged and numVfs: at 0 ours is the last, so no
               // policy without externallyManaged can make the Mellanox
               // plugin write NUM_OF_VFS on a card provisioner manages.
               {"priority", 0}};
  if (nic.link_type) spec["linkType"] = *nic.link_type == "ib" ? "ib" : "eth";
  if (nic.device_type) spec["deviceType"] = *nic.device_type;
  if (nic.is_rdma) spec["isRdma"] = *nic.is_rdma;
  // The operator's spec.mtu is the VFs' MTU: it sets every netdevice VF's
  // MTU to it (and raises the PF's to it, or on an externallyManaged PF
  // refuses a value above the PF's): the nic's vfMtu, never its PF mtu,
  // which the operator would otherwise copy onto the VFs behind our back.
  if (nic.vf_mtu) spec["mtu"] = *nic.vf_mtu;
  // The PF's E-Switch mode as provisioner sets it (eswitchMode): the
  // operator compares its node state's eSwitchMode with the policy's
  // (default legacy), so the two must agree.
  if (nic.eswitch_mode) spec["eSwitchMode"] = *nic.eswitch_mode;
  if (view.ExcludeTopology(res)) spec["excludeTopology"] = true;
  json doc =
      Object(kSriovApi, "SriovNetworkNodePolicy", name, view.Kubernetes().sriov_operator_namespace);
  doc["spec"] = spec;
  return Manifest{"SriovNetworkNodePolicy", name, doc};
}

// The PF netdevs of a nic with vfGroups, each with "#first-last": the
// operator's and the device plugin's way to select some of a PF's VFs.
StatusOr<std::vector<std::string>> RangedPfNames(const HostView& view, const NicRef& ref,
                                                 const VfGroupSpec& g) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, view.PfNetdevs(ref, /*required=*/true));
  for (auto& n : names) n += "#" + g.RangeText();
  return names;
}

// One per vfGroup of a nic (issue 28 item 3): pfNames "<pf>#first-last", the
// group's resource, deviceType and isRdma. No rootDevices: the operator's
// webhook refuses two policies that list the same root device, range or not
// (validateRootDevices; pfNames ranges are checked for overlap instead).
// numVfs is the nic's in each (the operator takes the largest of a PF's
// policies).
StatusOr<Manifest> SriovGroupPolicy(HostView& view, size_t i, const VfGroupSpec& group) {
  const NicSpec& nic = view.desired().nics[i];
  const NicRef ref{i, &nic};
  const VfGroupSpec g = EffectiveVfGroup(nic, group);
  if (!g.resource_name) {
    return InvalidArgumentError(HostView::NicField(i, "vfGroups") + " range " + group.range +
                                ": needs a resourceName (its own or the nic's) for its policy");
  }
  json sel = json::object();
  if (nic.selector.vendor) sel["vendor"] = *nic.selector.vendor;
  if (nic.selector.device_id) sel["deviceID"] = *nic.selector.device_id;
  ASSIGN_OR_RETURN(std::vector<std::string> pf_names, RangedPfNames(view, ref, group));
  sel["pfNames"] = pf_names;
  const std::string name = view.PolicyName(nic, group);
  json spec = {{"externallyManaged", true},
               {"nodeSelector", view.NodeOrPoolSelector()},
               {"nicSelector", sel},
               {"numVfs", *nic.num_vfs},
               {"resourceName", *g.resource_name},
               {"priority", 0}};  // as SriovPolicy's
  if (nic.link_type) spec["linkType"] = *nic.link_type == "ib" ? "ib" : "eth";
  if (g.device_type) spec["deviceType"] = *g.device_type;
  if (g.is_rdma) spec["isRdma"] = *g.is_rdma;
  // The group's vfMtu (its own, else the nic's), for netdevice VFs only:
  // what apply sets (modules/link) and what the operator applies to this
  // policy's VFs (configSriovVFDevices sets each VF group's Mtu on its
  // kernel-driver VFs, none on vfio-pci ones). Groups with different mtu on
  // one PF stay apart in the operator's merge (disjoint ranges, one resource
  // each: mergeConfigs keeps every group with its own Mtu) and the PF gets
  // their largest, raised only: at most the nic's mtu, which the loader and
  // the planner keep at or above every vfMtu.
  if (g.vf_mtu && g.device_type.value_or("netdevice") != "vfio-pci") spec["mtu"] = *g.vf_mtu;
  if (nic.eswitch_mode) spec["eSwitchMode"] = *nic.eswitch_mode;  // as in SriovPolicy
  if (view.ExcludeTopology(*g.resource_name)) spec["excludeTopology"] = true;
  json doc =
      Object(kSriovApi, "SriovNetworkNodePolicy", name, view.Kubernetes().sriov_operator_namespace);
  doc["spec"] = spec;
  return Manifest{"SriovNetworkNodePolicy", name, doc};
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
    json sel = json::object();
    if (nic.selector.vendor) sel["vendors"] = json::array({*nic.selector.vendor});
    std::string vf = VfDeviceId(view, ref);
    if (!vf.empty()) sel["devices"] = json::array({vf});
    if (vfio) sel["drivers"] = json::array({"vfio-pci"});
    ASSIGN_OR_RETURN(std::vector<std::string> pf_names, RangedPfNames(view, ref, group));
    sel["pfNames"] = pf_names;
    std::vector<std::string> roots = view.RootDevices(ref);
    if (!roots.empty()) sel["rootDevices"] = roots;
    if (nic.link_type && !vfio) {
      sel["linkTypes"] = json::array({*nic.link_type == "ib" ? "infiniband" : "ether"});
    }
    if (g.is_rdma) sel["isRdma"] = *g.is_rdma;
    json resource = {{"resourceName", *g.resource_name},
                     {"resourcePrefix", view.ResourcePrefix()},
                     {"selectors", sel}};
    if (view.ExcludeTopology(*g.resource_name)) resource["excludeTopology"] = true;
    out.push_back(std::move(resource));
  }
  return out;
}

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
    json sel = json::object();
    if (nic.selector.vendor) sel["vendors"] = json::array({*nic.selector.vendor});
    std::string vf = VfDeviceId(view, ref);
    if (!vf.empty()) sel["devices"] = json::array({vf});
    if (nic.device_type && *nic.device_type == "vfio-pci") {
      sel["drivers"] = json::array({"vfio-pci"});
    }
    ASSIGN_OR_RETURN(std::vector<std::string> names, view.PfNetdevs(ref, /*required=*/false));
    if (!names.empty()) sel["pfNames"] = names;
    std::vector<std::string> roots = view.RootDevices(ref);
    if (!roots.empty()) sel["rootDevices"] = roots;
    if (nic.link_type) {
      sel["linkTypes"] = json::array({*nic.link_type == "ib" ? "infiniband" : "ether"});
    }
    if (nic.is_rdma) sel["isRdma"] = *nic.is_rdma;
    json resource = {{"resourceName", *nic.resource_name},
                     {"resourcePrefix", view.ResourcePrefix()},
                     {"selectors", sel}};
    if (view.ExcludeTopology(*nic.resource_name)) resource["excludeTopology"] = true;
    resources.push_back(std::move(resource));
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

// What the operator needs before these policies work, said where it matters.
void OperatorWarnings(HostView& view) {
  const DesiredState& d = view.desired();
  bool vfs = false, inject = false;
  for (const auto& nic : d.nics) vfs = vfs || nic.num_vfs.value_or(0) > 0;
  std::string other_ns;
  for (const auto& mc : d.multus_configs) {
    inject = inject || mc.rdma_resource_inject.has_value();
    if (mc.namespace_name != view.Kubernetes().sriov_operator_namespace)
      other_ns = mc.namespace_name;
  }
  // The operator's Mellanox plugin treats a card as one (NUM_OF_VFS is the
  // larger of both ports' policies): a port of a card we give VFs to, left
  // to another policy, brings that policy's rules to our card.
  if (view.facts() != nullptr) {
    std::set<std::string> ours;
    for (size_t i = 0; i < d.nics.size(); ++i) {
      if (d.nics[i].num_vfs.value_or(0) <= 0) continue;
      for (const PciFunction* pf : SelectPfs(d.nics[i], *view.facts()))
        ours.insert(pf->pci_address);
    }
    std::set<std::string> said;
    for (const std::string& a : ours) {
      const std::string card = a.substr(0, a.rfind('.') + 1);
      for (const PciFunction& f : view.facts()->pci) {
        if (f.pci_address.rfind(card, 0) != 0 || !f.sriov || ours.count(f.pci_address) > 0 ||
            !said.insert(f.pci_address).second || f.vendor != "15b3") {
          continue;
        }
        view.Warn("PF " + f.pci_address + " shares a card with " + a +
                  ", which host.yaml gives VFs, but no nic with numVfs selects it: the "
                  "sriov-network-operator's Mellanox plugin sets the card's NUM_OF_VFS from "
                  "both ports' policies, so a policy without externallyManaged on " +
                  f.pci_address + " rewrites it; give that port a nic with numVfs here too");
      }
    }
  }
  if (vfs && inject && view.Kubernetes().sriov_operator_namespace == "kube-system" &&
      !other_ns.empty()) {
    view.Warn(
        "spec.kubernetes.sriovOperatorNamespace: the SriovNetworkNodePolicies go to "
        "kube-system (the default) while the multus configs are in " +
        other_ns +
        "; the operator reads policies only in Spiderpool's release namespace (the AI "
        "guide installs everything in spiderpool): set it to that namespace");
  }
}

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

std::string Preamble(const Manifest& m) {
  if (m.kind != "SriovNetworkNodePolicy") return "";
  return "# sriov-network-operator, externallyManaged: true. Before creating this policy:\n"
         "# - provision the host (provisioner apply, and the reboot it asks for): the\n"
         "#   operator's webhook refuses this policy while the PF has fewer VFs, a\n"
         "#   smaller MTU or another link type, and its daemon fails the sync while the\n"
         "#   firmware's NUM_OF_VFS or link type differs;\n"
         "# - its config daemon runs only on nodes matching the SriovOperatorConfig's\n"
         "#   configDaemonNodeSelector: the operator's default (standalone, and under\n"
         "#   Spiderpool v0.9) is node-role.kubernetes.io/worker= and kubernetes.io/os=linux:\n"
         "#   kubectl label node <node> node-role.kubernetes.io/worker=\n"
         "#   (Spiderpool v1.x's chart sets kubernetes.io/os: linux instead:\n"
         "#   sriov.operatorConfig.configDaemonNodeSelector);\n"
         "# - InfiniBand VF GUIDs are kept from sriov-network-operator v1.4.0 on\n"
         "#   (/etc/sriov-operator/infiniband/guids); v1.3 replaces them (docs/kubernetes.md).\n";
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
