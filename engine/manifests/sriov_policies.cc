// The sriov-network-operator's objects: a SriovNetworkNodePolicy per nic
// with VFs (or per vfGroup), the warnings of what the operator needs, and the
// comment the first policy carries.
#include <set>

#include "engine/manifests/host_view.h"
#include "engine/model/selector.h"

namespace provisioner::manifests {

using nlohmann::json;

namespace {

// The policy as the sriov-network-operator of the Spiderpool line reads it.
// v0.9: the chart's bundled operator is v1.2.0, whose SriovNetworkNodePolicy
// has no externallyManaged (a strict apply refuses the field; it came in
// v1.3.0), so the operator owns the PF's VFs there, from the same numVfs,
// mtu, link and device type as host.yaml; and its webhook
// (pkg/webhook/validate.go, staticValidateSriovNetworkNodePolicy) refuses
// linkType ib without isRdma: true (later releases dropped that rule).
Status ForBundledOperator(const HostView& view, const std::string& is_rdma_field,
                          std::optional<bool> is_rdma, json& spec) {
  if (!view.SpiderpoolV09()) return OkStatus();
  spec.erase("externallyManaged");
  if (spec.value("linkType", "") != "ib") return OkStatus();
  if (is_rdma == false) {
    return InvalidArgumentError(
        is_rdma_field +
        ": false with linkType ib: the sriov-network-operator v1.2.0 of "
        "Spiderpool " +
        view.SpiderpoolVersion() +
        " refuses an InfiniBand policy without isRdma: true (its webhook); drop isRdma or set "
        "it true");
  }
  spec["isRdma"] = true;
  return OkStatus();
}

}  // namespace

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
  RETURN_IF_ERROR(ForBundledOperator(view, HostView::NicField(i, "isRdma"), nic.is_rdma, spec));
  json doc =
      Object(kSriovApi, "SriovNetworkNodePolicy", name, view.Kubernetes().sriov_operator_namespace);
  doc["spec"] = spec;
  return Manifest{"SriovNetworkNodePolicy", name, doc};
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
  RETURN_IF_ERROR(ForBundledOperator(
      view, HostView::NicField(i, "vfGroups") + " range " + group.range + " isRdma", g.is_rdma,
      spec));
  json doc =
      Object(kSriovApi, "SriovNetworkNodePolicy", name, view.Kubernetes().sriov_operator_namespace);
  doc["spec"] = spec;
  return Manifest{"SriovNetworkNodePolicy", name, doc};
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
  // Every Spiderpool release through v1.2.x bundles a sriov-network-operator
  // of v1.3.0 or earlier, which sets random VF GUIDs on each sync (it reads
  // no /etc/sriov-operator/infiniband/guids: v1.4.0 on).
  if (view.BundledOperatorReplacesIbGuids()) {
    for (size_t i = 0; i < d.nics.size(); ++i) {
      if (d.nics[i].num_vfs.value_or(0) <= 0 || d.nics[i].link_type != "ib") continue;
      view.Warn(HostView::NicField(i, "linkType") + ": ib with VFs on Spiderpool " +
                view.SpiderpoolVersion() +
                ", whose bundled sriov-network-operator (v1.3.0 or earlier) replaces the VF "
                "GUIDs provisioner apply sets on every sync: install sriov-network-operator "
                "v1.4.0 or later (sriov.install=false in the chart) to keep them");
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

// The comment before the first policy: what the operator of the policy's
// line needs, and who owns the VFs there (docs/kubernetes.md).
std::string Preamble(const Manifest& m) {
  if (m.kind != "SriovNetworkNodePolicy") return "";
  const auto spec = m.doc.find("spec");
  const bool external = spec != m.doc.end() && spec->contains("externallyManaged");
  const std::string common =
      "# - its config daemon runs only on nodes matching the SriovOperatorConfig's\n"
      "#   configDaemonNodeSelector: the operator's default (standalone, and under\n"
      "#   Spiderpool v0.9) is node-role.kubernetes.io/worker= and kubernetes.io/os=linux:\n"
      "#   kubectl label node <node> node-role.kubernetes.io/worker=\n"
      "#   (Spiderpool v1.x's chart sets kubernetes.io/os: linux instead:\n"
      "#   sriov.operatorConfig.configDaemonNodeSelector);\n"
      "# - InfiniBand VF GUIDs are kept from sriov-network-operator v1.4.0 on\n"
      "#   (/etc/sriov-operator/infiniband/guids); v1.3 replaces them (docs/kubernetes.md).\n";
  if (!external) {
    return "# sriov-network-operator v1.2.0 (Spiderpool v0.9): no externallyManaged, so the\n"
           "# operator owns these VFs: it sets the PF's numVfs and, on ConnectX, the\n"
           "# firmware's NUM_OF_VFS to this policy's numVfs (a drain and reboot when that\n"
           "# changes), from the same numVfs, mtu, linkType and deviceType as host.yaml, so\n"
           "# provisioner apply and the operator agree. Before creating this policy:\n"
           "# - provision the host (provisioner apply, and the reboot it asks for);\n" +
           common;
  }
  return "# sriov-network-operator, externallyManaged: true. Before creating this policy:\n"
         "# - provision the host (provisioner apply, and the reboot it asks for): the\n"
         "#   operator's webhook refuses this policy while the PF has fewer VFs, a\n"
         "#   smaller MTU or another link type, and its daemon fails the sync while the\n"
         "#   firmware's NUM_OF_VFS or link type differs;\n" +
         common;
}

}  // namespace provisioner::manifests
