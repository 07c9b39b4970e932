// host.yaml rules of a nic's VFs: the per-VF settings (vfMtu, vfRate,
// vfVlan, vfMac) of a nic and of each of its vfGroups, and the groups'
// ranges and resources.
#include <map>
#include <vector>

#include "engine/config/check_context.h"
#include "engine/config/field_path.h"
#include "engine/config/ip.h"
#include "engine/config/text.h"

namespace provisioner::config {
namespace {

class VfChecks : private CheckContext {
 public:
  explicit VfChecks(const CheckContext& c) : CheckContext(c) {}

  // The nic's own per-VF settings (vfMtu, vfRate, vfVlan, vfMac), and those
  // (its groups' too) that switchdev refuses.
  void CheckNicVfSettings(const NicSpec& nic, const std::string& path) {
    CheckVfMtu(nic.vf_mtu, nic.device_type, JoinField(path, "vfMtu"),
               JoinField(path, "deviceType"), nic.mtu, JoinField(path, "mtu"));
    CheckVfRate(nic.vf_rate, JoinField(path, "vfRate"));
    CheckVfVlan(nic.vf_vlan, JoinField(path, "vfVlan"));
    CheckVfMac(nic.vf_mac, nic, path, JoinField(path, "vfMac"));
    CheckSwitchdevVfSettings(nic, path);
  }

  // eswitchMode switchdev (issue 35.3): mlx5 sets a VF's VLAN, link state
  // and spoof check only in legacy mode (esw/legacy.c
  // mlx5_eswitch_set_vport_vlan, _state, _spoofchk: `esw->mode !=
  // MLX5_ESWITCH_LEGACY` answers EOPNOTSUPP; VLAN 0 alone is accepted and
  // ignored "for libvirt", so vfVlan {id: 0, qos: 0} passes). Each field
  // that asks, the nic's or a vfGroup's, is an error where it is written.
  void CheckSwitchdevVfSettings(const NicSpec& nic, const std::string& path) {
    if (nic.eswitch_mode != "switchdev" || Tainted(path + ".eswitchMode")) return;
    const std::string why =
        " (mlx5 answers EOPNOTSUPP: a VF's VLAN, link state and spoof "
        "check are set only in legacy E-Switch mode; in switchdev they are "
        "the representor's TC rules), but nic " +
        Quote(nic.name) + " has eswitchMode switchdev (" + Where(path + ".eswitchMode") + ")";
    auto check = [&](const std::string& at, const std::optional<std::string>& link_state,
                     const std::optional<VfVlanSpec>& vlan, const std::optional<bool>& spoof) {
      if (link_state && !Tainted(at + ".vfLinkState")) {
        Error(at + ".vfLinkState", "vfLinkState needs the legacy E-Switch" + why);
      }
      if (vlan && (vlan->id != 0 || vlan->qos != 0) && !Tainted(at + ".vfVlan")) {
        Error(at + ".vfVlan", "vfVlan needs the legacy E-Switch" + why);
      }
      if (spoof && !Tainted(at + ".vfSpoofChk")) {
        Error(at + ".vfSpoofChk", "vfSpoofChk needs the legacy E-Switch" + why);
      }
    };
    check(path, nic.vf_link_state, nic.vf_vlan, nic.vf_spoof_chk);
    for (size_t k = 0; k < nic.vf_groups.size(); ++k) {
      const VfGroupSpec& g = nic.vf_groups[k];
      check(JoinIndex(JoinField(path, "vfGroups"), k), g.vf_link_state, g.vf_vlan, std::nullopt);
    }
  }

  // spec.nics[].vfGroups: ranges inside 0..numVfs-1 and apart (the
  // operator's webhook refuses overlapping pfNames ranges on a PF), each
  // group's fields (with the nic's filled in) checked as a nic's, and one
  // resource per group: the operator merges a PF's groups by resourceName and
  // keeps only one of two that share it.
  void CheckVfGroups(const NicSpec& nic, const std::string& nic_path) {
    const std::string list_path = JoinField(nic_path, "vfGroups");
    if (Tainted(list_path)) return;
    const bool count_known = nic.num_vfs.has_value() && !Tainted(nic_path + ".numVfs");
    if (!nic.num_vfs || *nic.num_vfs <= 0) {
      if (count_known || !nic.num_vfs) {
        Error(list_path, "vfGroups split the nic's VFs by index, but nic " + Quote(nic.name) +
                             " sets no numVfs > 0");
      }
      return;
    }
    std::vector<size_t> good;  // groups whose range parsed and fits
    std::map<std::string, size_t> resources;
    for (size_t k = 0; k < nic.vf_groups.size(); ++k) {
      const VfGroupSpec& g = nic.vf_groups[k];
      const std::string path = JoinIndex(list_path, k);
      const std::string range_path = path + ".range";
      if (!Tainted(range_path) && !g.range.empty()) {
        if (g.last < g.first) {
          Error(range_path, Quote(g.range) + ": the range's first index is above its last");
        } else if (count_known && g.last >= *nic.num_vfs) {
          Error(range_path, Quote(g.range) + " is outside the nic's VFs 0-" +
                                std::to_string(*nic.num_vfs - 1) + " (numVfs " +
                                std::to_string(*nic.num_vfs) + ", " + Where(nic_path + ".numVfs") +
                                ")");
        } else {
          for (size_t other : good) {
            const VfGroupSpec& o = nic.vf_groups[other];
            if (g.first <= o.last && o.first <= g.last) {
              Error(range_path, "VFs " + Quote(g.range) + " overlap " + Quote(o.range) + " of " +
                                    Where(JoinIndex(list_path, other)) +
                                    ": a VF belongs to one group");
              break;
            }
          }
          good.push_back(k);
        }
      }
      const VfGroupSpec e = EffectiveVfGroup(nic, g);
      if (e.device_type == "vfio-pci" && e.is_rdma == true && !Tainted(path + ".isRdma") &&
          !Tainted(path + ".deviceType") && !Tainted(nic_path + ".isRdma") &&
          !Tainted(nic_path + ".deviceType")) {
        const bool own = g.is_rdma.has_value();
        Error(own ? path + ".isRdma" : path + ".deviceType",
              std::string(own ? "isRdma" : "deviceType vfio-pci with the nic's isRdma") +
                  " needs deviceType netdevice: VFs bound to vfio-pci have no RDMA device");
      }
      // The group's own per-VF settings, checked as a nic's (the nic's own
      // were, where it sets them). An own vfMtu meets the group's deviceType
      // (its own, else the nic's); an inherited one is for netdevice groups
      // only and is not applied to a vfio-pci group's VFs.
      if (g.vf_mtu) {
        CheckVfMtu(
            g.vf_mtu, e.device_type, JoinField(path, "vfMtu"),
            g.device_type ? JoinField(path, "deviceType") : JoinField(nic_path, "deviceType"),
            nic.mtu, JoinField(nic_path, "mtu"));
      }
      CheckVfRate(g.vf_rate, JoinField(path, "vfRate"));
      CheckVfVlan(g.vf_vlan, JoinField(path, "vfVlan"));
      CheckVfMac(g.vf_mac, nic, nic_path, JoinField(path, "vfMac"));
      CheckHostAddresses(nic, nic_path, k);
      if (e.resource_name && !Tainted(path + ".resourceName") &&
          !Tainted(nic_path + ".resourceName")) {
        auto [it, fresh] = resources.emplace(*e.resource_name, k);
        if (!fresh) {
          Error(g.resource_name ? path + ".resourceName" : path,
                "resourceName " + Quote(*e.resource_name) +
                    (g.resource_name ? "" : " (the nic's)") + " is also " +
                    Where(JoinIndex(list_path, it->second)) +
                    "'s: each group is its own device-plugin resource (the "
                    "sriov-network-operator keeps one group per resource on a PF)");
        }
      }
    }
  }

  // vfGroups[k].addresses (issue 39 item 1): the group's VFs on the host
  // network, one address per VF of the range, each with a prefix length; on
  // netdevs (not vfio-pci); no resourceName of its own (the device plugin
  // would hand the VF, and its address, to a pod).
  void CheckHostAddresses(const NicSpec& nic, const std::string& nic_path, size_t k) {
    const VfGroupSpec& g = nic.vf_groups[k];
    const std::string path = JoinIndex(JoinField(nic_path, "vfGroups"), k);
    const std::string at = JoinField(path, "addresses");
    if (g.addresses.empty() || Tainted(at)) return;
    for (size_t i = 0; i < g.addresses.size(); ++i) {
      const std::string& a = g.addresses[i];
      if (a.find('/') == std::string::npos || !ParseCidr(a)) {
        Error(JoinIndex(at, i),
              Quote(a) + " is not an address with a prefix length (172.16.1.71/24)");
      }
    }
    const int vfs = g.last - g.first + 1;
    if (g.last >= g.first && !Tainted(path + ".range") &&
        static_cast<int>(g.addresses.size()) != vfs) {
      Error(at, std::to_string(g.addresses.size()) + " addresses for the " + std::to_string(vfs) +
                    " VFs of range " + Quote(g.range) + ": give one address per VF (VF " +
                    std::to_string(g.first) + " gets the first)");
    }
    const VfGroupSpec e = EffectiveVfGroup(nic, g);
    if (e.device_type == "vfio-pci") {
      const std::string dt = g.device_type ? path + ".deviceType" : nic_path + ".deviceType";
      if (!Tainted(dt)) {
        Error(at, "addresses go on the VF netdevs, but deviceType vfio-pci (" + Where(dt) +
                      ") leaves the VFs without a netdev");
      }
    }
    if (g.resource_name && !Tainted(path + ".resourceName")) {
      Error(path + ".resourceName",
            "a group with addresses is used on the host network: a device-plugin resource "
            "would hand its VFs, and their addresses, to pods; remove resourceName");
    }
  }

  // A vfMtu (of a nic, or of a VF group: its own vfMtu and deviceType, the
  // nic's mtu): the VFs need a netdev to carry it, and the PF's MTU bounds
  // it (sriov-network-operator refuses a policy's spec.mtu above the PF's
  // on an externallyManaged PF, and mlx5 VFs cannot send above it). The
  // PF's current MTU is plan's to compare (modules/link PlanVfMtu).
  void CheckVfMtu(std::optional<int> vf_mtu, const std::optional<std::string>& device_type,
                  const std::string& path, const std::string& device_type_path,
                  std::optional<int> pf_mtu, const std::string& pf_mtu_path) {
    if (!vf_mtu || Tainted(path)) return;
    if (device_type == "vfio-pci" && !Tainted(device_type_path)) {
      Error(path, "vfMtu sets the VF netdevs' MTU, but deviceType vfio-pci (" +
                      Where(device_type_path) +
                      ") leaves the VFs without a netdev: the VM or DPDK application sets it");
    }
    if (pf_mtu && *vf_mtu > *pf_mtu && !Tainted(pf_mtu_path)) {
      Error(path, std::to_string(*vf_mtu) + " is above the PF's mtu " + std::to_string(*pf_mtu) +
                      " (" + Where(pf_mtu_path) +
                      "): a VF cannot carry frames its PF's port does not; raise mtu to " +
                      std::to_string(*vf_mtu) + " or more");
    }
  }

  // A vfVlan: id 0 is "no port VLAN", so there is no tag to carry the
  // priority (qos is the tag's PCP).
  void CheckVfVlan(const std::optional<VfVlanSpec>& vlan, const std::string& path) {
    if (!vlan || Tainted(path)) return;
    if (vlan->id == 0 && vlan->qos != 0) {
      Error(JoinField(path, "qos"), "qos " + std::to_string(vlan->qos) +
                                        " needs a VLAN: id 0 means no VLAN (give id 1..4095 "
                                        "or leave qos out)");
    }
  }

  // A vfMac: the MAC table is Ethernet's; an InfiniBand VF is addressed by
  // its GUIDs (ib-sriov derives them).
  // `vf_mac` is the nic's or one group's, at `path`.
  void CheckVfMac(const std::optional<std::string>& vf_mac, const NicSpec& nic,
                  const std::string& nic_path, const std::string& path) {
    if (!vf_mac || Tainted(path)) return;
    if (nic.link_type == "ib" && !Tainted(nic_path + ".linkType")) {
      Error(path, "vfMac sets the VFs' Ethernet MACs, but nic " + Quote(nic.name) +
                      " has linkType ib (" + Where(nic_path + ".linkType") +
                      "): an InfiniBand VF has GUIDs instead (a cniType ib-sriov multus config "
                      "derives them)");
    }
  }

  // A vfRate (of a nic or a VF group): the kernel refuses a limit below the
  // guarantee (ndo_set_vf_rate: mlx5 and ice EINVAL when max < min).
  void CheckVfRate(const std::optional<VfRateSpec>& rate, const std::string& path) {
    if (!rate || Tainted(path)) return;
    if (rate->max != 0 && rate->min > rate->max) {
      Error(JoinField(path, "max"), std::to_string(rate->max) + " Mbps is below min " +
                                        std::to_string(rate->min) +
                                        " Mbps: the limit cannot be below the guarantee "
                                        "(0 = no limit)");
    }
  }
};

}  // namespace

void CheckNicVfSettings(const CheckContext& c, const NicSpec& nic, const std::string& nic_path) {
  VfChecks(c).CheckNicVfSettings(nic, nic_path);
}

void CheckVfGroups(const CheckContext& c, const NicSpec& nic, const std::string& nic_path) {
  VfChecks(c).CheckVfGroups(nic, nic_path);
}

}  // namespace provisioner::config
