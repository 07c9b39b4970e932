// nccl-env-<node or pool>: the NCCL environment of the pods that use the
// host's RDMA networks, as a ConfigMap for `envFrom` (docs/kubernetes.md,
// "Pod-side NCCL"). What a pod sees depends on the netns mode:
// - exclusive (sriov/ib-sriov with rdmaIsolation): the pod's network
//   namespace holds only the RDMA devices of its own VFs, under their host
//   names (mlx5_27: the RDMA CNI moves them without renaming). Which VF a pod
//   gets is the device plugin's choice, so no list of names can be right for
//   every pod; the driver prefix ("mlx5", no '=') selects exactly the pod's
//   own devices, one per rail.
// - shared (macvlan/ipvlan/ipoib with the RDMA shared device plugin): the
//   pod sees every RDMA device of the host but may open only those the
//   plugin handed it; the exact list ("=mlx5_0:1,mlx5_1:1") of the PFs'
//   devices keeps NCCL off the others. It needs discovery (--root).
// NCCL_SOCKET_IFNAME is "=eth0": NCCL's bootstrap and socket transport use
// the pod's cluster-network interface, which every pod can reach; the RDMA
// interfaces (net1...) are per rail and need not route between rails.
// NCCL_IB_GID_INDEX is not set: NCCL (2.21 and later) picks the RoCE v2 GID
// of the interface's address itself, and in a pod that index is not fixed
// (shared mode: it grows with every pod on the PF; exclusive: it depends on
// the addresses the pod's VF holds); a fixed index from the host would be
// wrong in the pod.
#include <algorithm>
#include <cctype>
#include <set>

#include "engine/manifests/host_view.h"
#include "engine/model/selector.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

bool IsVfCni(const std::string& cni) { return cni == "sriov" || cni == "ib-sriov"; }
bool IsSharedCni(const std::string& cni) {
  return cni == "macvlan" || cni == "ipvlan" || cni == "ipoib";
}

// "mlx5_12" -> "mlx5"; "" when the name has no "_<n>" suffix.
std::string DriverPrefix(const std::string& rdma_device) {
  const size_t us = rdma_device.rfind('_');
  if (us == std::string::npos || us == 0 || us + 1 == rdma_device.size()) return "";
  for (size_t i = us + 1; i < rdma_device.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(rdma_device[i]))) return "";
  }
  return rdma_device.substr(0, us);
}

// The RDMA device name prefix of a nic's VFs: from the PFs' devices when
// discovered, else from the selector (ConnectX-4 and later are mlx5,
// ConnectX-3 mlx4); "" when unknown.
std::string VfDevicePrefix(const HostView& view, const NicRef& ref) {
  if (view.facts() != nullptr) {
    for (const PciFunction* pf : SelectPfs(*ref.nic, *view.facts())) {
      for (const auto& dev : pf->rdma_devices) {
        std::string p = DriverPrefix(dev);
        if (!p.empty()) return p;
      }
    }
  }
  const NicSelector& sel = ref.nic->selector;
  if (sel.vendor && *sel.vendor == "15b3") {
    if (sel.device_id && (*sel.device_id == "1003" || *sel.device_id == "1007")) return "mlx4";
    return "mlx5";
  }
  return "";
}

// "mlx5_0:1" for every port of every RDMA device of the nic's PFs.
std::vector<std::string> PfHcaPorts(const HostView& view, const NicRef& ref) {
  std::vector<std::string> out;
  if (view.facts() == nullptr) return out;
  for (const PciFunction* pf : SelectPfs(*ref.nic, *view.facts())) {
    for (const auto& name : pf->rdma_devices) {
      for (const auto& dev : view.facts()->rdma.devices) {
        if (dev.name != name) continue;
        for (const auto& port : dev.ports) out.push_back(name + ":" + std::to_string(port.port));
        if (dev.ports.empty()) out.push_back(name + ":1");
      }
    }
  }
  return out;
}

bool OnlyIpv6(const MultusConfigSpec& mc) {
  return mc.ippools.ipv4.empty() && !mc.ippools.ipv6.empty();
}

}  // namespace

std::string NcclEnvName(const HostView& view) { return "nccl-env-" + view.NodeOrPoolName(); }

StatusOr<std::vector<Manifest>> NcclEnvConfigMaps(HostView& view) {
  const DesiredState& d = view.desired();
  const bool shared_plugin = d.kubernetes && d.kubernetes->rdma_shared_device_plugin;
  std::set<std::string> namespaces;
  std::set<std::string> exclusive_prefixes;
  std::vector<std::string> shared_hcas;
  bool vf_shared_mode = false, unknown = false, all_ipv6 = true;
  for (const auto& mc : d.multus_configs) {
    ASSIGN_OR_RETURN(NicRef ref, view.FindNic(mc.nic));
    if (IsVfCni(mc.cni_type) && ref.nic->is_rdma.value_or(false)) {
      if (view.RdmaIsolation(ref)) {
        std::string prefix = VfDevicePrefix(view, ref);
        if (prefix.empty()) unknown = true;
        else exclusive_prefixes.insert(prefix);
      } else {
        vf_shared_mode = true;
      }
    } else if (IsSharedCni(mc.cni_type) && shared_plugin) {
      std::vector<std::string> hcas = PfHcaPorts(view, ref);
      if (hcas.empty()) unknown = true;
      for (auto& h : hcas) {
        if (std::find(shared_hcas.begin(), shared_hcas.end(), h) == shared_hcas.end()) {
          shared_hcas.push_back(std::move(h));
        }
      }
    } else {
      continue;  // no RDMA in this config's pods
    }
    namespaces.insert(mc.namespace_name);
    all_ipv6 = all_ipv6 && OnlyIpv6(mc);
  }
  std::vector<Manifest> out;
  if (namespaces.empty()) return out;

  json data = {{"NCCL_SOCKET_IFNAME", "=eth0"}};
  const std::string name = NcclEnvName(view);
  if (vf_shared_mode) {
    view.Warn(name + ": NCCL_IB_HCA not set: in shared netns mode a pod with an SR-IOV VF sees "
                     "every RDMA device of the host, and which VF it gets is only known in the "
                     "pod (rdma link shows the one with a netdev); exclusive mode avoids this");
  } else if (unknown) {
    view.Warn(name + ": NCCL_IB_HCA not set: the RDMA device names of " +
              (exclusive_prefixes.empty() ? std::string("the shared NICs") : "some NICs") +
              " are known only from discovery; give --root DIR");
  } else if (!exclusive_prefixes.empty()) {
    std::string v;
    for (const auto& p : exclusive_prefixes) v += (v.empty() ? "" : ",") + p;
    data["NCCL_IB_HCA"] = v;
  } else if (!shared_hcas.empty()) {
    std::string v = "=";
    for (size_t i = 0; i < shared_hcas.size(); ++i) v += (i ? "," : "") + shared_hcas[i];
    data["NCCL_IB_HCA"] = v;
  }
  if (all_ipv6) data["NCCL_IB_ADDR_FAMILY"] = "AF_INET6";
  for (const auto& ns : namespaces) {
    json doc = Object("v1", "ConfigMap", name, ns);
    doc["data"] = data;
    out.push_back(Manifest{"ConfigMap", name, doc});
  }
  return out;
}

}  // namespace provisioner::manifests
