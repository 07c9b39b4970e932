// The Spiderpool flavor's own objects: a SpiderIPPool per ipPools entry and
// a SpiderMultusConfig per multusConfigs entry (spiderpool.spidernet.io/v2beta1,
// as the release line of spec.kubernetes.spiderpool.version reads them).
#include "engine/manifests/host_view.h"

namespace provisioner::manifests {

using nlohmann::json;

namespace {

json IpPoolRefsJson(const IpPoolRefs& r) {
  json j = json::object();
  if (!r.ipv4.empty()) j["ipv4"] = r.ipv4;
  if (!r.ipv6.empty()) j["ipv6"] = r.ipv6;
  return j;
}

bool IsIpv6(const std::string& subnet) { return subnet.find(':') != std::string::npos; }

}  // namespace

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

}  // namespace provisioner::manifests
