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
// NCCL_IB_TC (NCCL_IB_SL with PCP trust) comes from host.yaml's RoCE QoS
// (RoceQosEnv). The ConfigMap goes into every spec.kubernetes.
// workloadNamespaces (a pod reads its own namespace's only), else beside the
// multus configs with a warning.
// NCCL_IB_GID_INDEX: NCCL 2.21 and later pick the RoCE v2 GID of the
// interface's address themselves (NCCL_IB_GID_INDEX defaults to -1, "find
// it"); older ones use index 0, the RoCE v1 link-local GID, which no
// routed or DSCP-marked fabric carries. For those (spec.kubernetes.nccl.
// version below 2.21) the index is set where it is fixed in every pod: an
// exclusive-mode VF with IPv4 only holds the two default GIDs (0, 1: RoCE v1
// and v2 of its link-local address) and then its IPv4 address as RoCE v1 (2)
// and v2 (3): "3". In shared mode the index grows with every pod on the PF,
// and an IPv6 address moves it: a warning names the configs instead.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "engine/manifests/host_view.h"
#include "engine/model/selector.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

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

// "mlx5_0:1" for every port of every RDMA device of the nic's PFs; with
// nics[].names.rdma, the PF's device by that name (what apply names it).
std::vector<std::string> PfHcaPorts(const HostView& view, const NicRef& ref) {
  std::vector<std::string> out;
  if (view.facts() == nullptr) return out;
  const std::optional<std::string> renamed =
      ref.nic->names ? ref.nic->names->rdma : std::optional<std::string>();
  for (const PciFunction* pf : SelectPfs(*ref.nic, *view.facts())) {
    for (const auto& name : pf->rdma_devices) {
      const std::string shown = renamed && name == pf->rdma_devices.front() ? *renamed : name;
      for (const auto& dev : view.facts()->rdma.devices) {
        if (dev.name != name) continue;
        for (const auto& port : dev.ports) out.push_back(shown + ":" + std::to_string(port.port));
        if (dev.ports.empty()) out.push_back(shown + ":1");
      }
    }
  }
  return out;
}

// The RoCE priority with PFC that host.yaml gives a nic (nics[].roce): its
// only PFC priority, or of several the only one with ECN too; nullopt when
// host.yaml says none or it is ambiguous.
std::optional<int> LosslessPriority(const NicSpec& nic) {
  if (!nic.roce || !nic.roce->pfc || nic.roce->pfc->empty()) return std::nullopt;
  const std::vector<int>& pfc = *nic.roce->pfc;
  if (pfc.size() == 1) return pfc.front();
  std::optional<int> found;
  for (int p : pfc) {
    const bool ecn = nic.roce->ecn && std::find(nic.roce->ecn->begin(), nic.roce->ecn->end(), p) !=
                                          nic.roce->ecn->end();
    if (!ecn) continue;
    if (found) return std::nullopt;
    found = p;
  }
  return found;
}

bool EcnOn(const NicSpec& nic, int priority) {
  return nic.roce && nic.roce->ecn &&
         std::find(nic.roce->ecn->begin(), nic.roce->ecn->end(), priority) != nic.roce->ecn->end();
}

// The NCCL_IB_TC that lands on `priority` under the nic's DSCP map: its
// roce.tos when set (the RDMA device's default ToS: the same number keeps
// NCCL and the device in step), else DSCP 8p+2 (26, AF31, for 3) unless
// dscpMap moves it elsewhere, then the lowest DSCP dscpMap puts on p, then
// the lowest default-mapped one (DSCP >> 3 = p) dscpMap leaves alone. The
// low two bits are ECN: ECT(0) when ECN is on for that priority.
int TrafficClassFor(const NicSpec& nic, int priority) {
  if (nic.roce->tos) return *nic.roce->tos;
  const std::map<int, int> empty;
  const std::map<int, int>& map = nic.roce->dscp_map ? *nic.roce->dscp_map : empty;
  auto lands = [&](int d) {
    auto it = map.find(d);
    return it != map.end() ? it->second == priority : (d >> 3) == priority;
  };
  int dscp = priority * 8 + 2;
  if (!lands(dscp)) {
    dscp = -1;
    for (const auto& [d, p] : map) {
      if (p == priority) {
        dscp = d;
        break;
      }
    }
    for (int d = priority * 8; dscp < 0 && d < priority * 8 + 8; ++d) {
      if (lands(d)) dscp = d;
    }
    if (dscp < 0) dscp = priority * 8 + 2;  // every DSCP of p moved: the plan's tos check says so
  }
  return (dscp << 2) | (EcnOn(nic, priority) ? 2 : 0);
}

bool OnlyIpv6(const MultusConfigSpec& mc) {
  return mc.ippools.ipv4.empty() && !mc.ippools.ipv6.empty();
}

// NCCL_IB_TC (RoCE, DSCP trust) from the lossless priority of host.yaml's
// nics[].roce (TrafficClassFor): the traffic class is DSCP << 2 (the low two
// bits are ECN), and mlx5's default DSCP map puts DSCP d in priority d >> 3,
// so priority p is reached with DSCP 8p+2 (26, AF31, for 3): TC 104, or 106
// with ECN on that priority (ECT(0) in the ECN bits); roce.tos and
// roce.dscpMap change that number. With PCP trust the priority is the
// packet's VLAN PCP, which RoCE takes from the service level: NCCL_IB_SL.
void RoceQosEnv(HostView& view, const std::string& name,
                const std::map<std::string, std::vector<std::string>>& qos, nlohmann::json* data) {
  if (qos.empty()) return;
  if (qos.size() > 1) {
    std::string why;
    for (const auto& [key, nics] : qos) {
      std::string list;
      for (const auto& n : nics) list += (list.empty() ? "" : ", ") + n;
      why += (why.empty() ? "" : "; ") + list + ": " +
             (key == "none" ? std::string("no single PFC priority in nics[].roce")
                            : "priority " + key.substr(0, key.find('/')) + ", traffic class " +
                                  key.substr(key.find('/', key.find('/') + 1) + 1,
                                             key.rfind('/') - key.find('/', key.find('/') + 1) - 1));
    }
    view.Warn(name +
              ": NCCL_IB_TC not set: the RoCE nics of these configs differ in their lossless "
              "priority (" +
              why + ")");
    return;
  }
  const std::string& key = qos.begin()->first;
  if (key == "none") return;
  const int priority = std::stoi(key);
  // "<priority>/<ecn|->/<traffic class>/<trust>"
  const size_t tc_at = key.find('/', key.find('/') + 1) + 1;
  const int tc = std::stoi(key.substr(tc_at));
  const std::string trust = key.substr(key.rfind('/') + 1);
  if (trust == "pcp") {
    (*data)["NCCL_IB_SL"] = std::to_string(priority);
    return;
  }
  (*data)["NCCL_IB_TC"] = std::to_string(tc);
  if (trust.empty()) {
    view.Warn(name +
              ": NCCL_IB_TC assumes DSCP trust (nics[].roce.trust is not set): with PCP "
              "trust the traffic class does not select the priority");
  }
}

}  // namespace

std::string NcclEnvName(const HostView& view) { return "nccl-env-" + view.NodeOrPoolName(); }

namespace {

// spec.kubernetes.nccl.version below 2.21 ("2.18.5", "v2.20.3-1").
bool NcclBeforeGidAutoSelect(const HostView& view) {
  const std::optional<std::string>& v = view.Kubernetes().nccl_version;
  if (!v) return false;
  int major = 0, minor = 0;
  const char* text = v->c_str();
  if (*text == 'v') ++text;
  if (std::sscanf(text, "%d.%d", &major, &minor) != 2) return false;
  return major < 2 || (major == 2 && minor < 21);
}

// NCCL_IB_GID_INDEX for NCCL before 2.21 (the comment at the top).
void GidIndexEnv(HostView& view, const std::string& name,
                 const std::vector<std::string>& fixed_index_configs,
                 const std::vector<std::string>& other_roce_configs, json* data) {
  if (!NcclBeforeGidAutoSelect(view)) return;
  if (fixed_index_configs.empty() && other_roce_configs.empty()) return;
  if (other_roce_configs.empty()) {
    (*data)["NCCL_IB_GID_INDEX"] = "3";
    return;
  }
  std::string list;
  for (const auto& c : other_roce_configs) list += (list.empty() ? "" : ", ") + c;
  view.Warn(name + ": NCCL_IB_GID_INDEX not set for NCCL " + *view.Kubernetes().nccl_version +
            " (before 2.21 NCCL uses GID index 0, RoCE v1): the RoCE v2 GID index of " + list +
            " differs from pod to pod (shared netns mode, or an IPv6 address); run NCCL 2.21 "
            "or later, or set it per pod from `show_gids`");
}

}  // namespace

StatusOr<std::vector<Manifest>> NcclEnvConfigMaps(HostView& view) {
  const DesiredState& d = view.desired();
  const bool shared_plugin = d.kubernetes && d.kubernetes->rdma_shared_device_plugin;
  std::set<std::string> namespaces;
  std::set<std::string> exclusive_prefixes;
  // The RoCE QoS of the nics behind the RDMA configs: "<priority>/<ecn>/<trust>".
  std::map<std::string, std::vector<std::string>> qos;
  std::vector<std::string> shared_hcas;
  bool vf_shared_mode = false, unknown = false, all_ipv6 = true;
  // RoCE configs whose pods' RoCE v2 IPv4 GID is index 3, and the others.
  std::vector<std::string> fixed_gid_configs, other_roce_configs;
  for (const auto& mc : d.multus_configs) {
    ASSIGN_OR_RETURN(NicRef ref, view.FindNic(mc.nic));
    if (IsVfCni(mc.cni_type) && view.VfIsRdma(ref, mc)) {
      if (view.RdmaIsolation(ref, mc)) {
        std::string prefix = VfDevicePrefix(view, ref);
        if (prefix.empty())
          unknown = true;
        else
          exclusive_prefixes.insert(prefix);
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
    // InfiniBand: host.yaml sets no SL (the subnet manager's applies).
    if (ref.nic->link_type && *ref.nic->link_type == "ib") continue;
    const bool ipv4_only = !mc.ippools.ipv4.empty() && mc.ippools.ipv6.empty();
    (IsVfCni(mc.cni_type) && view.RdmaIsolation(ref, mc) && ipv4_only ? fixed_gid_configs
                                                                      : other_roce_configs)
        .push_back(mc.name);
    const std::optional<int> prio = LosslessPriority(*ref.nic);
    std::string key = "none";
    if (prio) {
      key = std::to_string(*prio) + "/" + (EcnOn(*ref.nic, *prio) ? "ecn" : "-") + "/" +
            std::to_string(TrafficClassFor(*ref.nic, *prio)) + "/" +
            ref.nic->roce->trust.value_or("");
    }
    auto& nics = qos[key];
    if (std::find(nics.begin(), nics.end(), ref.nic->name) == nics.end()) {
      nics.push_back(ref.nic->name);
    }
  }
  std::vector<Manifest> out;
  if (namespaces.empty()) return out;

  json data = {{"NCCL_SOCKET_IFNAME", "=eth0"}};
  const std::string name = NcclEnvName(view);
  if (vf_shared_mode) {
    view.Warn(name +
              ": NCCL_IB_HCA not set: in shared netns mode a pod with an SR-IOV VF sees "
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
  RoceQosEnv(view, name, qos, &data);
  GidIndexEnv(view, name, fixed_gid_configs, other_roce_configs, &data);
  const std::vector<std::string>& workload = view.Kubernetes().workload_namespaces;
  if (!workload.empty()) {
    namespaces = std::set<std::string>(workload.begin(), workload.end());
  } else {
    std::string list;
    for (const auto& ns : namespaces) list += (list.empty() ? "" : ", ") + ns;
    view.Warn(name + " is written into " + list +
              ", the namespace of the multus configs; a pod reads ConfigMaps of its own "
              "namespace only (and Spiderpool's injection webhook skips kube-system and "
              "spiderpool): set spec.kubernetes.workloadNamespaces to where the workloads run");
  }
  for (const auto& ns : namespaces) {
    json doc = Object("v1", "ConfigMap", name, ns);
    doc["data"] = data;
    out.push_back(Manifest{"ConfigMap", name, doc});
  }
  return out;
}

}  // namespace provisioner::manifests
