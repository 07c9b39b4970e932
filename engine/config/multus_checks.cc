// host.yaml rules of spec.multusConfigs[]: fields that fit the cniType,
// the nic it names and that nic's linkType, VFs and resources, the ipPools
// it names and their IP version, pkey as ib-kubernetes takes it.
#include <algorithm>
#include <optional>
#include <vector>

#include "engine/config/check_context.h"
#include "engine/config/field_path.h"
#include "engine/config/text.h"
#include "engine/config/checks.h"
#include "engine/config/ip.h"
#include "engine/config/pkey.h"
#include "engine/model/ipoib_facts.h"

namespace provisioner::config {
namespace {

class MultusChecks : private CheckContext {
 public:
  MultusChecks(const CheckContext& c, const std::vector<std::optional<IpPrefix>>& subnets)
      : CheckContext(c), subnets_(subnets) {}

  // -- spec.multusConfigs ---------------------------------------------------

  const NicSpec* FindNic(const std::string& name, size_t* index) const {
    for (size_t i = 0; i < s_.nics.size(); ++i) {
      if (s_.nics[i].name == name) {
        *index = i;
        return &s_.nics[i];
      }
    }
    return nullptr;
  }

  // A reference can be called dangling only if every name it could have
  // matched was read cleanly.
  bool NamesTainted(const std::string& list_path, size_t count) const {
    if (Tainted(list_path)) return true;
    for (size_t i = 0; i < count; ++i) {
      if (Tainted(JoinField(JoinIndex(list_path, i), "name"))) return true;
    }
    return false;
  }

  static std::string NameList(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
    return out.empty() ? "none defined" : "defined: " + out;
  }

  // As ib-kubernetes takes it (pkg/utils ParsePKey, the UFM plugin's
  // IsPKeyValid): a 15-bit partition; it adds the pod's GUID as a full member
  // itself, and refuses the full-membership bit. The value is normalized
  // ("0x1000") by the time it gets here.
  void CheckMultusPkey(const std::string& path, const std::string& text) {
    auto v = ParsePkeySpelling(text);
    if (!v) return;  // the schema reports it
    const int partition = *v & ~kPkeyFullMember;
    if (partition == 0) {
      Error(path, Quote(text) + " is no partition (the partition bits 0x7fff are 0)");
    } else if (*v & kPkeyFullMember) {
      Error(path, Quote(text) +
                      " has the full-membership bit 0x8000, which ib-kubernetes "
                      "refuses (it makes the pod's GUID a full member itself): write " +
                      Quote(PkeyText(partition)));
    }
  }

  void CheckMultusConfigs() {
    std::vector<std::string> nic_names, pool_names;
    for (const auto& n : s_.nics) nic_names.push_back(n.name);
    for (const auto& p : s_.ip_pools) pool_names.push_back(p.name);
    bool nics_clean = !NamesTainted("spec.nics", s_.nics.size());
    bool pools_clean = !NamesTainted("spec.ipPools", s_.ip_pools.size());
    std::string netns = s_.rdma && s_.rdma->netns_mode ? *s_.rdma->netns_mode : "";
    bool netns_clean = !Tainted("spec.rdma.netnsMode");

    for (size_t i = 0; i < s_.multus_configs.size(); ++i) {
      const MultusConfigSpec& m = s_.multus_configs[i];
      std::string path = MultusPath(i);
      std::string cni_path = path + ".cniType";
      std::string nic_path = path + ".nic";
      const std::string& cni = m.cni_type;
      bool cni_clean = !cni.empty() && !Tainted(cni_path);

      // The Spiderpool multus config and its pods carry it as a label
      // value (engine/manifests): the API server refuses anything else.
      if (m.rdma_resource_inject && !Tainted(path + ".rdmaResourceInject") &&
          !IsLabelValue(*m.rdma_resource_inject)) {
        Error(path + ".rdmaResourceInject", Quote(*m.rdma_resource_inject) + " " + kNotLabelValue);
      }
      // pkey is an InfiniBand partition: ib-sriov only.
      if (m.pkey && cni_clean && cni != "ib-sriov" && !Tainted(path + ".pkey")) {
        Error(path + ".pkey", "pkey is only for cniType ib-sriov, not " + cni);
      }
      if (m.pkey && !Tainted(path + ".pkey")) CheckMultusPkey(path + ".pkey", *m.pkey);
      // resourceName picks a VF resource: sriov/ib-sriov only.
      if (m.resource_name && cni_clean && cni != "sriov" && cni != "ib-sriov" &&
          !Tainted(path + ".resourceName")) {
        Error(path + ".resourceName",
              "resourceName picks one of the nic's VF resources: only for cniType sriov and "
              "ib-sriov, not " +
                  cni);
      }
      if (m.vlan && cni_clean && (cni == "ib-sriov" || cni == "ipoib") &&
          !Tainted(path + ".vlan")) {
        Error(path + ".vlan", "vlan is Ethernet only; cniType " + cni + " has no VLANs (use pkey)");
      }
      // macvlan/ipvlan share one RDMA device between pods: shared mode only.
      if (cni_clean && netns_clean && netns == "exclusive" &&
          (cni == "macvlan" || cni == "ipvlan")) {
        Error(cni_path, "cniType " + cni +
                            " shares the NIC's RDMA device between pods, which needs "
                            "spec.rdma.netnsMode shared, but it is exclusive (" +
                            Where("spec.rdma.netnsMode") + ")");
      }

      // nic:
      size_t nic_index = 0;
      const NicSpec* nic = nullptr;
      if (!m.nic.empty() && !Tainted(nic_path)) {
        nic = FindNic(m.nic, &nic_index);
        if (nic == nullptr && nics_clean) {
          Error(nic_path, "nic " + Quote(m.nic) + " names no NIC in spec.nics (" +
                              NameList(nic_names) + ")");
        }
      }
      if (nic != nullptr && cni_clean) CheckNicFitsCni(m, path, *nic, nic_index, netns);

      // ippools:
      CheckPoolRefs(m.ippools.ipv4, path + ".ippools.ipv4", 4, pools_clean, pool_names);
      CheckPoolRefs(m.ippools.ipv6, path + ".ippools.ipv6", 6, pools_clean, pool_names);
    }
  }

  void CheckNicFitsCni(const MultusConfigSpec& m, const std::string& path, const NicSpec& nic,
                       size_t nic_index, const std::string& netns) {
    const std::string& cni = m.cni_type;
    std::string nic_path = NicPath(nic_index);
    std::string cni_path = path + ".cniType";
    if (nic.link_type && !Tainted(nic_path + ".linkType")) {
      const std::string& link = *nic.link_type;
      std::string where = " (" + Where(nic_path + ".linkType") + ")";
      if (link == "ib" && cni == "sriov") {
        Error(cni_path, "cniType sriov needs an Ethernet NIC (RoCE), but nic " + Quote(nic.name) +
                            " has linkType ib" + where + "; use ib-sriov for InfiniBand");
      } else if (link == "ib" && cni == "macvlan") {
        Error(cni_path, "cniType macvlan needs an Ethernet NIC, but nic " + Quote(nic.name) +
                            " has linkType ib" + where + "; use ipoib for InfiniBand");
      } else if (link == "eth" && (cni == "ib-sriov" || cni == "ipoib")) {
        Error(cni_path, "cniType " + cni + " needs an InfiniBand NIC, but nic " + Quote(nic.name) +
                            " has linkType eth" + where);
      }
    }
    if (cni == "sriov" || cni == "ib-sriov") {
      std::string ref_path = path + ".nic";
      if (!Tainted(nic_path + ".numVfs") && !(nic.num_vfs && *nic.num_vfs > 0)) {
        Error(ref_path, "cniType " + cni + " needs VFs, but nic " + Quote(nic.name) +
                            " sets no numVfs > 0 (" + Where(nic_path) + ")");
      }
      if (!nic.vf_groups.empty()) {
        CheckGroupResourceRef(m, path, nic, nic_index);
      } else if (m.resource_name && nic.resource_name && *m.resource_name != *nic.resource_name &&
                 !Tainted(path + ".resourceName") && !Tainted(nic_path + ".resourceName")) {
        Error(path + ".resourceName", Quote(*m.resource_name) + " is not nic " + Quote(nic.name) +
                                          "'s resourceName " + Quote(*nic.resource_name) + " (" +
                                          Where(nic_path + ".resourceName") + ")");
      } else if (!Tainted(nic_path + ".resourceName") && !nic.resource_name) {
        Error(ref_path, "cniType " + cni + " needs nic " + Quote(nic.name) +
                            " to set resourceName, the device-plugin resource of its VFs (" +
                            Where(nic_path) + ")");
      }
      if (netns == "shared" && nic.is_rdma == true && !Tainted("spec.rdma.netnsMode")) {
        Warning(cni_path, "the RDMA devices of nic " + Quote(nic.name) +
                              "'s VFs are visible in every pod with spec.rdma.netnsMode "
                              "shared; the RDMA CNI isolates them only in exclusive mode");
      }
    }
  }

  // A sriov/ib-sriov config on a nic with vfGroups: its resourceName names
  // one of the groups' resources, or the nic has exactly one.
  void CheckGroupResourceRef(const MultusConfigSpec& m, const std::string& path, const NicSpec& nic,
                             size_t nic_index) {
    const std::string groups_path = JoinField(NicPath(nic_index), "vfGroups");
    if (TaintedWithin(groups_path) || Tainted(path + ".resourceName")) return;
    std::vector<std::string> names;
    for (const VfGroupSpec& g : nic.vf_groups) {
      const VfGroupSpec e = EffectiveVfGroup(nic, g);
      if (e.resource_name &&
          std::find(names.begin(), names.end(), *e.resource_name) == names.end()) {
        names.push_back(*e.resource_name);
      }
    }
    if (m.resource_name) {
      if (std::find(names.begin(), names.end(), *m.resource_name) == names.end()) {
        Error(path + ".resourceName", Quote(*m.resource_name) + " is none of nic " +
                                          Quote(nic.name) + "'s vfGroups resources (" +
                                          Join(names, ", ") + "; " + Where(groups_path) + ")");
      }
    } else if (names.size() != 1) {
      Error(path + ".nic", "nic " + Quote(nic.name) + " has vfGroups with " +
                               (names.empty() ? std::string("no resourceName")
                                              : "several resources (" + Join(names, ", ") + ")") +
                               ": set resourceName here to say which one the pods get (" +
                               Where(groups_path) + ")");
    }
  }

  void CheckPoolRefs(const std::vector<std::string>& refs, const std::string& list_path,
                     int version, bool pools_clean, const std::vector<std::string>& pool_names) {
    for (size_t k = 0; k < refs.size(); ++k) {
      std::string path = JoinIndex(list_path, k);
      if (refs[k].empty() || Tainted(path)) continue;
      auto it = std::find(pool_names.begin(), pool_names.end(), refs[k]);
      if (it == pool_names.end()) {
        if (pools_clean) {
          Error(path, "ippool " + Quote(refs[k]) + " names no pool in spec.ipPools (" +
                          NameList(pool_names) + ")");
        }
        continue;
      }
      size_t pool = static_cast<size_t>(it - pool_names.begin());
      const auto& subnet = subnets_[pool];
      if (subnet && subnet->address.version != version) {
        Error(path, "ippool " + Quote(refs[k]) + " is " +
                        IpVersionName(subnet->address.version) + " (subnet " +
                        subnet->ToString() + ") but is listed under " +
                        (version == 4 ? "ipv4" : "ipv6"));
      }
    }
  }

  const std::vector<std::optional<IpPrefix>>& subnets_;
};

}  // namespace

void CheckMultusConfigs(const CheckContext& c,
                        const std::vector<std::optional<IpPrefix>>& pool_subnets) {
  MultusChecks(c, pool_subnets).CheckMultusConfigs();
}

}  // namespace provisioner::config
