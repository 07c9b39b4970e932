#include "engine/config/build.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/pkey.h"
#include "engine/model/ipoib_facts.h"
#include "engine/model/selector.h"

namespace provisioner::config {
namespace {

using nlohmann::json;

const json* Field(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

std::optional<std::string> String(const json& obj, const char* key) {
  const json* v = Field(obj, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

std::optional<bool> Bool(const json& obj, const char* key) {
  const json* v = Field(obj, key);
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

// Only integers that fit an int; the schema bounds each field much tighter.
std::optional<int> Int(const json& obj, const char* key) {
  const json* v = Field(obj, key);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT_MAX)) return std::nullopt;
    return static_cast<int>(u);
  }
  int64_t i = v->get<int64_t>();
  if (i < INT_MIN || i > INT_MAX) return std::nullopt;
  return static_cast<int>(i);
}

// Every item of a list of strings; non-strings become "" to keep indexes.
std::vector<std::string> Strings(const json& obj, const char* key) {
  std::vector<std::string> out;
  const json* v = Field(obj, key);
  if (v == nullptr || !v->is_array()) return out;
  for (const auto& e : *v) out.push_back(e.is_string() ? e.get<std::string>() : "");
  return out;
}

// A list of priorities 0..7, sorted and once each; nullopt when absent (the
// schema reports other values).
std::optional<std::vector<int>> Priorities(const json& obj, const char* key) {
  const json* v = Field(obj, key);
  if (v == nullptr || !v->is_array()) return std::nullopt;
  std::vector<int> out;
  for (const auto& e : *v) {
    if (!e.is_number_integer()) continue;
    const int64_t p = e.get<int64_t>();
    if (p < 0 || p > 7) continue;
    out.push_back(static_cast<int>(p));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// vfMtu, vfLinkState, vfRate, vfVlan: of a nic (NicSpec) or of a VF group
// (VfGroupSpec), the same fields.
template <typename Spec>
void BuildVfSettings(const json& j, Spec& out) {
  out.vf_mtu = Int(j, "vfMtu");
  out.vf_link_state = String(j, "vfLinkState");
  if (const json* rate = Field(j, "vfRate"); rate != nullptr && rate->is_object()) {
    out.vf_rate = VfRateSpec{Int(*rate, "min").value_or(0), Int(*rate, "max").value_or(0)};
  }
  // Without its id (a schema error) vfVlan is not built: no second message.
  if (const json* vlan = Field(j, "vfVlan"); vlan != nullptr && Int(*vlan, "id")) {
    out.vf_vlan = VfVlanSpec{Int(*vlan, "id").value_or(0), Int(*vlan, "qos").value_or(0),
                             String(*vlan, "proto").value_or("802.1Q")};
  }
  out.vf_mac = String(j, "vfMac");
}

// "0-3" -> 0, 3; "5" -> 5, 5. A range the schema let through but that does
// not parse (too long a number) stays first 0, last -1: checks.cc reports it.
VfGroupSpec BuildVfGroup(const json& j) {
  VfGroupSpec g;
  g.range = String(j, "range").value_or("");
  const size_t dash = g.range.find('-');
  const std::string a = g.range.substr(0, dash);
  const std::string b = dash == std::string::npos ? a : g.range.substr(dash + 1);
  auto number = [](const std::string& t) -> std::optional<int> {
    if (t.empty() || t.size() > 6) return std::nullopt;
    int v = 0;
    for (char c : t) {
      if (c < '0' || c > '9') return std::nullopt;
      v = v * 10 + (c - '0');
    }
    return v;
  };
  if (auto first = number(a), last = number(b); first && last) {
    g.first = *first;
    g.last = *last;
  }
  g.device_type = String(j, "deviceType");
  g.is_rdma = Bool(j, "isRdma");
  g.resource_name = String(j, "resourceName");
  g.addresses = Strings(j, "addresses");
  BuildVfSettings(j, g);
  return g;
}

NicSpec BuildNic(const json& j) {
  NicSpec nic;
  nic.name = String(j, "name").value_or("");
  if (const json* sel = Field(j, "nicSelector")) {
    if (auto v = String(*sel, "vendor")) nic.selector.vendor = Lower(*v);
    if (auto v = String(*sel, "deviceID")) nic.selector.device_id = Lower(*v);
    for (const auto& r : Strings(*sel, "rootDevices")) {
      nic.selector.root_devices.push_back(CanonicalPciAddress(r));  // "AF:00.0" -> "0000:af:00.0"
    }
    nic.selector.pf_names = Strings(*sel, "pfNames");
    nic.selector.near_gpu = Int(*sel, "nearGpu");
    nic.selector.allow_remote = Bool(*sel, "allowRemote").value_or(false);
  }
  nic.link_type = String(j, "linkType");
  nic.num_vfs = Int(j, "numVfs");
  nic.mtu = Int(j, "mtu");
  nic.device_type = String(j, "deviceType");
  nic.is_rdma = Bool(j, "isRdma");
  nic.resource_name = String(j, "resourceName");
  nic.vf_trust = Bool(j, "vfTrust");
  nic.vf_spoof_chk = Bool(j, "vfSpoofChk");
  if (const json* groups = Field(j, "vfGroups"); groups != nullptr && groups->is_array()) {
    for (const auto& g : *groups) nic.vf_groups.push_back(BuildVfGroup(g));
  }
  BuildVfSettings(j, nic);
  nic.eswitch_mode = String(j, "eswitchMode");  // switchdev (issue 28 item 5)
  if (const json* fw = Field(j, "firmware"); fw != nullptr && fw->is_object()) {
    for (const auto& [name, v] : fw->items()) {
      FirmwareSetting f;
      if (v.is_boolean()) {
        f.kind = FirmwareSetting::Kind::kBool;
        f.text = v.get<bool>() ? "true" : "false";
      } else if (v.is_number_integer()) {
        f.kind = FirmwareSetting::Kind::kInt;
        f.text = v.dump();
      } else if (v.is_string()) {
        f.text = v.get<std::string>();
      } else {
        continue;  // the schema reports it
      }
      nic.firmware[name] = std::move(f);
    }
  }
  nic.firmware_reset = Bool(j, "firmwareReset").value_or(false);
  if (const json* v = Field(j, "firmwareVersion"); v != nullptr && v->is_object()) {
    FirmwareVersionSpec f;
    f.version = String(*v, "version").value_or("");
    f.image = String(*v, "image");
    f.policy = String(*v, "policy").value_or("validate");
    nic.firmware_version = f;
  }
  if (const json* names = Field(j, "names"); names != nullptr && names->is_object()) {
    NicNamesSpec n;
    n.netdev = String(*names, "netdev");
    n.rdma = String(*names, "rdma");
    nic.names = n;
  }
  if (const json* pcie = Field(j, "pcie"); pcie != nullptr && pcie->is_object()) {
    NicPcieSpec p;
    p.max_read_request = Int(*pcie, "maxReadRequest");
    nic.pcie = p;
  }
  if (Field(j, "addresses") != nullptr) nic.addresses = Strings(j, "addresses");
  if (const json* r = Field(j, "routing"); r != nullptr && r->is_object()) {
    NicRoutingSpec routing;
    if (const json* t = Field(*r, "table"); t != nullptr && t->is_number_integer()) {
      routing.table = t->get<long long>();
    }
    routing.table_name = String(*r, "tableName");
    routing.gateway = String(*r, "gateway");
    routing.routes = Strings(*r, "routes");
    routing.priority = Int(*r, "priority");
    nic.routing = routing;
  }
  if (const json* sc = Field(j, "sysctl"); sc != nullptr && sc->is_object()) {
    for (const auto& [key, v] : sc->items()) {
      if (v.is_number_integer()) nic.sysctl[key] = v.get<long long>();
    }
  }
  if (const json* ib = Field(j, "ipoib"); ib != nullptr && ib->is_object()) {
    IpoibSpec p;
    p.mode = String(*ib, "mode");
    p.mtu = Int(*ib, "mtu");
    if (Field(*ib, "addresses") != nullptr) p.addresses = Strings(*ib, "addresses");
    p.pkeys = Strings(*ib, "pkeys");
    for (auto& k : p.pkeys) {  // "8001" -> "0x8001"; "0x1" stays as written
      if (ParsePkey(k)) continue;
      if (auto v = ParsePkeySpelling(k)) k = PkeyText(*v);
    }
    nic.ipoib = p;
  }
  if (const json* roce = Field(j, "roce"); roce != nullptr && roce->is_object()) {
    NicRoceSpec r;
    r.trust = String(*roce, "trust");
    r.pfc = Priorities(*roce, "pfc");
    r.ecn = Priorities(*roce, "ecn");
    if (const json* cnp = Field(*roce, "cnp"); cnp != nullptr && cnp->is_object()) {
      r.cnp = RoceCnpSpec{Int(*cnp, "dscp"), Int(*cnp, "priority")};
    }
    r.tos = Int(*roce, "tos");
    r.pause = Bool(*roce, "pause");
    r.dcbx = String(*roce, "dcbx");
    r.cable_length = Int(*roce, "cableLength");
    if (const json* b = Field(*roce, "buffers"); b != nullptr && b->is_object()) {
      RoceBufferSpec buf;
      // Wrong types and ranges are the schema's to report.
      if (const json* p = Field(*b, "prio2buffer"); p != nullptr && p->is_array()) {
        std::vector<int> v;
        for (const auto& e : *p) {
          if (e.is_number_integer()) v.push_back(e.get<int>());
        }
        buf.prio2buffer = std::move(v);
      }
      if (const json* z = Field(*b, "sizes"); z != nullptr && z->is_array()) {
        std::vector<long long> v;
        for (const auto& e : *z) {
          if (e.is_number_integer()) v.push_back(e.get<long long>());
        }
        buf.sizes = std::move(v);
      }
      r.buffers = std::move(buf);
    }
    if (const json* m = Field(*roce, "dscpMap"); m != nullptr && m->is_object()) {
      std::map<int, int> map;
      for (const auto& [dscp, prio] : m->items()) {
        // The schema reports values that are not 0..7; CheckDesiredState
        // the keys that are no DSCP.
        if (dscp.empty() || dscp.size() > 2 ||
            dscp.find_first_not_of("0123456789") != std::string::npos || std::stoi(dscp) > 63) {
          r.dscp_map_bad_keys.push_back(dscp);
          continue;
        }
        if (prio.is_number_integer()) map[std::stoi(dscp)] = prio.get<int>();
      }
      r.dscp_map = std::move(map);
    }
    nic.roce = r;
  }
  return nic;
}

IpPoolSpec BuildPool(const json& j) {
  IpPoolSpec pool;
  pool.name = String(j, "name").value_or("");
  pool.subnet = String(j, "subnet").value_or("");
  pool.ips = Strings(j, "ips");
  pool.gateway = String(j, "gateway");
  pool.vlan = Int(j, "vlan");
  pool.exclude_ips = Strings(j, "excludeIPs");
  return pool;
}

MultusConfigSpec BuildMultus(const json& j) {
  MultusConfigSpec m;
  m.name = String(j, "name").value_or("");
  if (auto ns = String(j, "namespace")) m.namespace_name = *ns;
  m.cni_type = String(j, "cniType").value_or("");
  m.nic = String(j, "nic").value_or("");
  if (const json* refs = Field(j, "ippools")) {
    m.ippools.ipv4 = Strings(*refs, "ipv4");
    m.ippools.ipv6 = Strings(*refs, "ipv6");
  }
  m.pkey = String(j, "pkey");
  // As ib-kubernetes needs it ("0x" and hex); the loader turned an integer
  // into its source text and the checks refuse what does not parse.
  if (m.pkey) {
    if (auto v = ParsePkeySpelling(*m.pkey)) m.pkey = PkeyText(*v);
  }
  m.rdma_resource_inject = String(j, "rdmaResourceInject");
  m.resource_name = String(j, "resourceName");
  m.vlan = Int(j, "vlan");
  return m;
}

template <typename T, typename F>
std::vector<T> BuildList(const json& spec, const char* key, F build) {
  std::vector<T> out;
  const json* list = Field(spec, key);
  if (list == nullptr || !list->is_array()) return out;
  for (const auto& item : *list) out.push_back(build(item));
  return out;
}

}  // namespace

DesiredState BuildDesiredState(const json& root) {
  DesiredState s;
  s.api_version = String(root, "apiVersion").value_or("");
  s.kind = String(root, "kind").value_or("");
  if (const json* md = Field(root, "metadata")) s.name = String(*md, "name").value_or("");

  const json* spec = Field(root, "spec");
  if (spec == nullptr || !spec->is_object()) return s;

  if (const json* rdma = Field(*spec, "rdma"); rdma != nullptr && rdma->is_object()) {
    RdmaSpec r;
    r.netns_mode = String(*rdma, "netnsMode");
    r.persist = Bool(*rdma, "persist").value_or(true);
    s.rdma = r;
  }

  if (const json* pcie = Field(*spec, "pcie"); pcie != nullptr && pcie->is_object()) {
    PcieSpec p;
    p.disable_acs = String(*pcie, "disableAcs");
    s.pcie = p;
  }

  if (const json* fw = Field(*spec, "firmware"); fw != nullptr && fw->is_object()) {
    FirmwareActivationSpec f;
    f.activation = String(*fw, "activation").value_or("reboot");
    s.firmware = f;
  }

  if (const json* agent = Field(*spec, "agent"); agent != nullptr && agent->is_object()) {
    if (const json* a = Field(*agent, "autoApply"); a != nullptr && a->is_array()) {
      s.agent.auto_apply = Strings(*agent, "autoApply");
    }
  }

  if (const json* net = Field(*spec, "network"); net != nullptr && net->is_object()) {
    NetworkSpec n;
    if (auto o = String(*net, "owner")) n.owner = *o;
    s.network = n;
  }

  if (const json* kernel = Field(*spec, "kernel"); kernel != nullptr && kernel->is_object()) {
    KernelSpec k;
    k.cmdline = Strings(*kernel, "cmdline");
    k.cmdline_remove = Strings(*kernel, "cmdlineRemove");
    s.kernel = k;
  }

  s.kernel_modules = BuildList<KernelModuleSpec>(*spec, "kernelModules", [](const json& item) {
    KernelModuleSpec k;
    if (item.is_string()) {
      k.name = item.get<std::string>();
    } else {
      k.name = String(item, "name").value_or("");
      k.required = Bool(item, "required").value_or(true);
    }
    return k;
  });
  s.nics = BuildList<NicSpec>(*spec, "nics", BuildNic);
  s.ip_pools = BuildList<IpPoolSpec>(*spec, "ipPools", BuildPool);
  s.multus_configs = BuildList<MultusConfigSpec>(*spec, "multusConfigs", BuildMultus);

  if (const json* k8s = Field(*spec, "kubernetes"); k8s != nullptr && k8s->is_object()) {
    KubernetesSpec k;
    if (auto p = String(*k8s, "resourcePrefix")) k.resource_prefix = *p;
    if (auto n = String(*k8s, "sriovOperatorNamespace")) k.sriov_operator_namespace = *n;
    if (auto n = String(*k8s, "poolName")) k.pool_name = *n;
    if (const json* sel = Field(*k8s, "nodeSelector"); sel != nullptr && sel->is_object()) {
      for (const auto& [key, value] : sel->items()) {
        k.node_selector[key] = value.is_string() ? value.get<std::string>() : "";
      }
    }
    if (const json* dp = Field(*k8s, "rdmaSharedDevicePlugin"); dp != nullptr && dp->is_object()) {
      RdmaSharedDevicePluginSpec d;
      if (auto n = String(*dp, "resourceName")) d.resource_name = *n;
      if (auto m = Int(*dp, "rdmaHcaMax")) d.rdma_hca_max = *m;
      k.rdma_shared_device_plugin = d;
    }
    if (const json* sp = Field(*k8s, "spiderpool"); sp != nullptr && sp->is_object()) {
      k.spiderpool_version = String(*sp, "version");
    }
    k.workload_namespaces = Strings(*k8s, "workloadNamespaces");
    if (const json* n = Field(*k8s, "nccl"); n != nullptr && n->is_object()) {
      k.nccl_version = String(*n, "version");
    }
    if (const json* ib = Field(*k8s, "ibKubernetes"); ib != nullptr && ib->is_object()) {
      IbKubernetesSpec i;
      if (auto p = String(*ib, "smPlugin")) i.sm_plugin = *p;
      if (auto n = String(*ib, "namespace")) i.namespace_name = *n;
      k.ib_kubernetes = i;
    }
    s.kubernetes = k;
  }
  return s;
}

}  // namespace provisioner::config
