// spec.kubernetes.ibKubernetes: Mellanox/ib-kubernetes (read at v1.1.1 and
// main, network-operator-v26.4.0-22-g528f63f: pkg/config/config.go,
// pkg/guid/guid_pool.go, deployment/ib-kubernetes.yaml) gives each pod's
// InfiniBand VF a GUID from its pool and registers it with the subnet
// manager. Its deployment reads DAEMON_SM_PLUGIN (required),
// DAEMON_PERIODIC_UPDATE and GUID_POOL_RANGE_START/END from the ConfigMap
// ib-kubernetes-config (kube-system in its manifests); the pool defaults to
// 02:00:00:00:00:00:00:00-02:FF:FF:FF:FF:FF:FF:FF, a range must not start at
// 0 or end at FF:FF:FF:FF:FF:FF:FF:FF.
// The VF GUIDs apply sets (modules/vf DeriveVfGuid) are the PF's node GUID
// with byte 0 made locally administered and unicast ((b | 0x02) & ~0x01) and
// bytes 3-4 the VF's number plus one (never 0). So the pool written here,
// 02:00:00:00:00:00:00:00-02:00:00:00:00:FF:FF:FF (16M GUIDs, bytes 1-4
// zero), never holds one of them, on any host; and the default pool holds
// all of a PF's exactly when the PF's byte 0 is 00-03 (Mellanox's OUI
// 00:02:c9: 02:02:c9:...), which with discovered facts is a warning when
// ibKubernetes is not set.
#include <cstdio>
#include <string>

#include "engine/manifests/host_view.h"
#include "engine/model/selector.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

constexpr const char* kPoolStart = "02:00:00:00:00:00:00:00";
constexpr const char* kPoolEnd = "02:00:00:00:00:FF:FF:FF";

// Byte 0 of a node GUID "0002:c903:00a1:b2c3" (or "00:02:c9:..."); -1 when
// it does not parse.
int GuidFirstByte(const std::string& guid) {
  unsigned b = 0;
  if (guid.size() < 2 || std::sscanf(guid.substr(0, 2).c_str(), "%2x", &b) != 1) return -1;
  return static_cast<int>(b);
}

}  // namespace

bool VfGuidsInIbKubernetesDefaultPool(const std::string& pf_node_guid) {
  const int b = GuidFirstByte(pf_node_guid);
  return b >= 0 && ((b | 0x02) & ~0x01) == 0x02;
}

std::optional<Manifest> IbKubernetesConfigMap(HostView& view) {
  const DesiredState& d = view.desired();
  const KubernetesSpec& k = view.Kubernetes();
  if (!k.ib_kubernetes && view.facts() != nullptr) {
    for (const MultusConfigSpec& mc : d.multus_configs) {
      if (mc.cni_type != "ib-sriov") continue;
      StatusOr<NicRef> ref = view.FindNic(mc.nic);
      if (!ref.ok() || ref->nic->num_vfs.value_or(0) <= 0) continue;
      for (const PciFunction* pf : SelectPfs(*ref->nic, *view.facts())) {
        if (!pf->sriov || !VfGuidsInIbKubernetesDefaultPool(pf->sriov->ib_node_guid)) continue;
        view.Warn("nic " + ref->nic->name + ": the VF GUIDs apply sets on " + pf->pci_address +
                  " (node GUID " + pf->sriov->ib_node_guid +
                  ", so 02:...) lie in ib-kubernetes' default GUID pool " +
                  "02:00:00:00:00:00:00:00-02:FF:FF:FF:FF:FF:FF:FF: if ib-kubernetes runs, set "
                  "spec.kubernetes.ibKubernetes to write its ConfigMap with a pool clear of them");
      }
    }
  }
  if (!k.ib_kubernetes) return std::nullopt;
  json doc = Object("v1", "ConfigMap", "ib-kubernetes-config", k.ib_kubernetes->namespace_name);
  doc["data"] = {{"DAEMON_SM_PLUGIN", k.ib_kubernetes->sm_plugin},
                 {"DAEMON_PERIODIC_UPDATE", "5"},
                 {"GUID_POOL_RANGE_START", kPoolStart},
                 {"GUID_POOL_RANGE_END", kPoolEnd}};
  return Manifest{"ConfigMap", "ib-kubernetes-config", doc};
}

}  // namespace provisioner::manifests
