// What the sriov-cni configuration of a multus config carries, the same in
// both flavors (SpiderMultusConfig's sriov/ibsriov and a NAD's config).
#include "engine/manifests/host_view.h"

namespace provisioner::manifests {

using nlohmann::json;

bool IsVfCni(const std::string& cni) { return cni == "sriov" || cni == "ib-sriov"; }

namespace {
constexpr int kSriovCniMaxVlan = 4094;
}  // namespace

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

}  // namespace provisioner::manifests
