#include "engine/manifests/host_view.h"

#include <cctype>

#include "engine/config/checks.h"
#include "engine/model/selector.h"
#include "engine/model/topology.h"

namespace provisioner::manifests {
namespace {

const KubernetesSpec& DefaultKubernetes() {
  static const KubernetesSpec* k = new KubernetesSpec();
  return *k;
}

// "spec.nics[3]" -> " (spec.rails rail 4)" when spec.rails made it.
std::string RailNote(const DesiredState& d, size_t i) {
  const std::string path = DesiredState::NicPath(i);
  for (const auto& o : d.rail_origins) {
    if (o.path == path) return " (from spec.rails, rail " + std::to_string(o.rail) + ")";
  }
  return "";
}

}  // namespace

nlohmann::json Object(const std::string& api_version, const std::string& kind,
                      const std::string& name, const std::optional<std::string>& ns) {
  nlohmann::json meta = {{"name", name}};
  if (ns) meta["namespace"] = *ns;
  return {{"apiVersion", api_version}, {"kind", kind}, {"metadata", meta}};
}

std::string HostView::NicField(size_t i, const std::string& field) {
  return DesiredState::NicPath(i) + "." + field;
}

Status HostView::CheckInputs() const {
  for (size_t i = 0; i < d_.nics.size(); ++i) {
    if (d_.nics[i].selector.near_gpu && facts() == nullptr) {
      return InvalidArgumentError(
          NicField(i, "nicSelector.nearGpu") + RailNote(d_, i) +
          ": which NIC is nearest to GPU " + std::to_string(*d_.nics[i].selector.near_gpu) +
          " is known only from the host's PCIe topology; give --root DIR (the host, or a "
          "snapshot of it) so that the manifests select that NIC and not every NIC of the "
          "same vendor and device");
    }
  }
  if (facts() != nullptr) {
    std::vector<std::pair<std::string, std::string>> problems = CheckNearGpu(d_, *facts());
    for (auto& p : CheckNicOverlaps(d_, *facts())) problems.push_back(std::move(p));
    if (!problems.empty()) {
      std::string msg = problems.front().first + ": " + problems.front().second;
      if (problems.size() > 1) {
        msg += " (and " + std::to_string(problems.size() - 1) + " more: see provisioner plan)";
      }
      return InvalidArgumentError(msg);
    }
  }
  for (const auto& nic : d_.nics) {
    if (nic.num_vfs.value_or(0) <= 0) continue;
    const std::string name = PolicyName(nic);
    if (!config::IsDnsSubdomain(name)) {
      return InvalidArgumentError(
          "SriovNetworkNodePolicy name " + name + " (nic " + nic.name + ", node " + d_.name +
          ") is not a valid Kubernetes name (a DNS-1123 subdomain of at most 253 characters)" +
          (IsPool() ? "" : "; set spec.kubernetes.nodeSelector to name policies per pool"));
    }
  }
  return OkStatus();
}

StatusOr<NicRef> HostView::FindNic(const std::string& name) const {
  for (size_t i = 0; i < d_.nics.size(); ++i) {
    if (d_.nics[i].name == name) return NicRef{i, &d_.nics[i]};
  }
  return InvalidArgumentError("multusConfigs: nic " + name + " is not a spec.nics[].name");
}

std::vector<const PciFunction*> HostView::SpecificPfs(const NicRef& ref) const {
  const NicSelector& sel = ref.nic->selector;
  const bool specific = sel.near_gpu || !sel.root_devices.empty() || !sel.pf_names.empty();
  if (facts() == nullptr || !specific) return {};
  return SelectPfs(*ref.nic, *facts());
}

std::vector<std::string> HostView::RootDevices(const NicRef& ref) const {
  if (!ref.nic->selector.root_devices.empty()) return ref.nic->selector.root_devices;
  std::vector<std::string> out;
  if (ref.nic->selector.near_gpu) {
    for (const PciFunction* pf : SpecificPfs(ref)) out.push_back(pf->pci_address);
  }
  return out;
}

StatusOr<std::vector<std::string>> HostView::PfNetdevs(const NicRef& ref, bool required) const {
  // nics[].names: the name the names module gives the PF on every node
  // (the nic selects one PF), whatever it is called before apply.
  if (ref.nic->names && ref.nic->names->netdev) {
    return std::vector<std::string>{*ref.nic->names->netdev};
  }
  if (!ref.nic->selector.pf_names.empty()) return ref.nic->selector.pf_names;
  std::vector<std::string> out;
  for (const PciFunction* pf : SpecificPfs(ref)) {
    if (!pf->netdevs.empty()) out.push_back(pf->netdevs.front());
  }
  if (!out.empty() || !required) return out;
  if (facts() != nullptr) {
    // A netdev is needed (a macvlan master): a vendor/deviceID selector's
    // PFs on this host are the only way to name one.
    for (const PciFunction* pf : SelectPfs(*ref.nic, *facts())) {
      if (!pf->netdevs.empty()) out.push_back(pf->netdevs.front());
    }
    if (!out.empty()) return out;
    return NotFoundError(NicField(ref.index, "nicSelector") +
                         ": no PF with a netdev on this host matches it");
  }
  return InvalidArgumentError(
      NicField(ref.index, "nicSelector.pfNames") +
      ": needed to name the PF netdev (give it, or rootDevices with --root to discover it)");
}

std::string HostView::NetnsMode() {
  if (netns_mode_) return *netns_mode_;
  if (d_.rdma && d_.rdma->netns_mode) {
    netns_mode_ = *d_.rdma->netns_mode;
  } else if (facts() != nullptr && facts()->rdma_netns_mode) {
    netns_mode_ = *facts()->rdma_netns_mode;
  } else {
    netns_mode_ = "shared";
    bool rdma_vfs = false;
    for (const auto& mc : d_.multus_configs) {
      rdma_vfs = rdma_vfs || mc.cni_type == "sriov" || mc.cni_type == "ib-sriov";
    }
    if (rdma_vfs) {
      Warn("spec.rdma.netnsMode is not set: sriov/ib-sriov configs get rdmaIsolation: false "
           "(the kernel's default netns mode, shared); set it, or give --root to read the "
           "host's mode");
    }
  }
  return *netns_mode_;
}

bool HostView::RdmaIsolation(const NicRef& ref) {
  return NetnsMode() == "exclusive" && ref.nic->is_rdma.value_or(false);
}

const KubernetesSpec& HostView::Kubernetes() const {
  return d_.kubernetes ? *d_.kubernetes : DefaultKubernetes();
}

std::string HostView::SpiderpoolVersion() const {
  return Kubernetes().spiderpool_version.value_or(kSpiderpoolDefault);
}

bool HostView::SpiderpoolV09() const {
  const std::string v = SpiderpoolVersion();
  const size_t start = !v.empty() && v[0] == 'v' ? 1 : 0;
  return v.compare(start, 3, "0.9") == 0;
}

bool HostView::BundledOperatorReplacesIbGuids() const {
  if (SpiderpoolV09()) return true;
  const std::string v = SpiderpoolVersion();
  const size_t start = !v.empty() && v[0] == 'v' ? 1 : 0;
  // The schema allows 0.9 and 1.<minor>[.<patch>] only.
  if (v.compare(start, 2, "1.") != 0) return false;
  const std::string minor = v.substr(start + 2, v.find('.', start + 2) - (start + 2));
  return !minor.empty() && minor.size() <= 3 && std::stoi(minor) <= 2;
}

std::string HostView::ResourcePrefix() const { return Kubernetes().resource_prefix; }

StatusOr<std::string> HostView::SriovResource(const NicRef& ref) const {
  if (!ref.nic->resource_name) {
    return InvalidArgumentError(NicField(ref.index, "resourceName") + ": needed for " +
                                "an SR-IOV multus config or a numVfs > 0 NIC");
  }
  return *ref.nic->resource_name;
}

std::optional<VfGroupSpec> HostView::ConfigGroup(const NicRef& ref,
                                                 const MultusConfigSpec& mc) const {
  const NicSpec& nic = *ref.nic;
  std::optional<VfGroupSpec> only;
  int resources = 0;
  for (const VfGroupSpec& g : nic.vf_groups) {
    VfGroupSpec e = EffectiveVfGroup(nic, g);
    if (!e.resource_name) continue;
    if (mc.resource_name && *e.resource_name == *mc.resource_name) return e;
    ++resources;
    only = std::move(e);
  }
  // The loader's checks refuse a config that names none or leaves it open
  // among several.
  if (!mc.resource_name && resources == 1) return only;
  return std::nullopt;
}

StatusOr<std::string> HostView::SriovResource(const NicRef& ref, const MultusConfigSpec& mc) const {
  if (ref.nic->vf_groups.empty()) return SriovResource(ref);
  std::optional<VfGroupSpec> g = ConfigGroup(ref, mc);
  if (!g) {
    return InvalidArgumentError(NicField(ref.index, "vfGroups") + ": no group's resource for " +
                                "multus config " + mc.name + " (set its resourceName)");
  }
  return *g->resource_name;
}

StatusOr<HostView::ResourceVlan> HostView::VfVlanOf(const std::string& resource) const {
  std::optional<ResourceVlan> out;
  auto text = [](const std::optional<VfVlanSpec>& v) {
    return v ? "vlan " + std::to_string(v->id) + " qos " + std::to_string(v->qos) + " proto " +
                   v->proto
             : std::string("no vfVlan");
  };
  for (size_t i = 0; i < d_.nics.size(); ++i) {
    const NicSpec& nic = d_.nics[i];
    if (nic.num_vfs.value_or(0) <= 0) continue;
    std::vector<ResourceVlan> found;
    if (nic.vf_groups.empty()) {
      if (nic.resource_name == resource) found.push_back({nic.vf_vlan, NicField(i, "vfVlan")});
    }
    for (size_t k = 0; k < nic.vf_groups.size(); ++k) {
      const VfGroupSpec e = EffectiveVfGroup(nic, nic.vf_groups[k]);
      if (e.resource_name != resource) continue;
      const std::string group = NicField(i, "vfGroups[" + std::to_string(k) + "]");
      found.push_back({e.vf_vlan, nic.vf_groups[k].vf_vlan
                                      ? group + ".vfVlan"
                                      : NicField(i, "vfVlan") + " (" + group + ")"});
    }
    for (ResourceVlan& r : found) {
      if (!out) {
        out = std::move(r);
        continue;
      }
      const bool same = out->vlan.has_value() == r.vlan.has_value() &&
                        (!r.vlan || (out->vlan->id == r.vlan->id && out->vlan->qos == r.vlan->qos &&
                                     out->vlan->proto == r.vlan->proto));
      if (!same) {
        return InvalidArgumentError(
            "resource " + resource + ": its VFs get different port VLANs (" + out->field + ": " +
            text(out->vlan) + "; " + r.field + ": " + text(r.vlan) +
            "): a pod gets any VF of the resource, and sriov-cni sets one VLAN for all of them; "
            "give each VLAN its own resourceName");
      }
    }
  }
  if (!out) return ResourceVlan{};
  return *out;
}

bool HostView::VfIsRdma(const NicRef& ref, const MultusConfigSpec& mc) const {
  if (ref.nic->vf_groups.empty()) return ref.nic->is_rdma.value_or(false);
  std::optional<VfGroupSpec> g = ConfigGroup(ref, mc);
  return g ? g->is_rdma.value_or(false) : ref.nic->is_rdma.value_or(false);
}

bool HostView::RdmaIsolation(const NicRef& ref, const MultusConfigSpec& mc) {
  return NetnsMode() == "exclusive" && VfIsRdma(ref, mc);
}

bool HostView::NicNumaRemote(const NicSpec& nic) const {
  if (facts() == nullptr || !nic.selector.near_gpu || !nic.selector.allow_remote) return false;
  NearGpuChoice c = ChooseNearGpu(nic.selector, *facts());
  if (c.pf == nullptr || !c.gpu) return false;
  // NUMA nodes as the kernel reports them; unknown on either side (-1, a
  // single-node machine): the topology level says (SYS = across nodes).
  if (c.pf->numa_node >= 0 && c.gpu->numa_node >= 0) return c.pf->numa_node != c.gpu->numa_node;
  return c.level == PcieLevel::kSys;
}

bool HostView::ExcludeTopology(const std::string& resource) const {
  for (const NicSpec& nic : d_.nics) {
    if (nic.num_vfs.value_or(0) <= 0 || !NicNumaRemote(nic)) continue;
    if (nic.resource_name == resource) return true;
    for (const VfGroupSpec& g : nic.vf_groups) {
      if (EffectiveVfGroup(nic, g).resource_name == resource) return true;
    }
  }
  return false;
}

std::string HostView::NodeOrPoolName() const {
  if (!IsPool()) return d_.name;
  if (Kubernetes().pool_name) return *Kubernetes().pool_name;
  // The selector's values, in key order: "linux", "gpu-a100"; lower-cased,
  // other characters as '-', at most 40 characters.
  std::string out;
  for (const auto& [key, value] : Kubernetes().node_selector) {
    std::string v = value.empty() ? key.substr(key.rfind('/') + 1) : value;
    if (!out.empty()) out += '-';
    for (char c : v) {
      const unsigned char u = static_cast<unsigned char>(c);
      out += std::isalnum(u) ? static_cast<char>(std::tolower(u)) : '-';
    }
  }
  if (out.size() > 40) out.resize(40);
  while (!out.empty() && out.back() == '-') out.pop_back();
  while (!out.empty() && out.front() == '-') out.erase(0, 1);
  return out.empty() ? "pool" : out;
}

std::map<std::string, std::string> HostView::NodeOrPoolSelector() const {
  if (IsPool()) return Kubernetes().node_selector;
  return {{"kubernetes.io/hostname", d_.name}};
}

std::string HostView::PolicyName(const NicSpec& nic) const {
  return IsPool() ? nic.name : nic.name + "-" + d_.name;
}

std::string HostView::PolicyName(const NicSpec& nic, const VfGroupSpec& group) const {
  const std::string base = nic.name + "-vf" + group.RangeText();
  return IsPool() ? base : base + "-" + d_.name;
}

// The PF netdevs of a nic with vfGroups, each with "#first-last": the
// operator's and the device plugin's way to select some of a PF's VFs.
StatusOr<std::vector<std::string>> RangedPfNames(const HostView& view, const NicRef& ref,
                                                 const VfGroupSpec& g) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, view.PfNetdevs(ref, /*required=*/true));
  for (auto& n : names) n += "#" + g.RangeText();
  return names;
}

}  // namespace provisioner::manifests
