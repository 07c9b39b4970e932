// What other fields need of the firmware: roce.ecn / roce.cnp where the
// driver has no runtime setting, and numVfs above what the firmware enables.
#include "modules/firmware/firmware_plan_steps.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/model/selector.h"
#include "modules/firmware/firmware_reset.h"
#include "modules/firmware/mstconfig_query.h"

namespace provisioner::firmware_plan {
namespace {

// A numeric parameter's Want: before/after numbers.
Want NumberWant(const std::string& param, long value, const std::string& field, std::string reason,
                std::string missing) {
  Want w;
  w.param = param;
  w.text = std::to_string(value);
  w.after = value;
  w.field = field;
  w.reason = std::move(reason);
  w.before = [](const std::string& printed) -> nlohmann::json {
    auto n = MstconfigValueNumber(printed);
    if (n) return *n;
    return printed;
  };
  w.show = [](const std::string& printed) { return printed; };
  w.missing = std::move(missing);
  return w;
}

// True, with the error, when `p` would need a change but is read-only.
bool ReadOnly(const FirmwareParam& p, const std::string& dev, const std::string& name,
              const std::string& field, PlanSink& sink) {
  if (!p.read_only) return false;
  sink.Error(field, dev + " " + name + " is read-only (mstconfig marks it RO): it reads " +
                        p.next_boot + " and cannot be raised");
  return true;
}

}  // namespace

RoceFirmwareNeeds RoceNeeds(const NicSpec& nic, const PciFunction& pf, const HostFacts& facts) {
  RoceFirmwareNeeds n;
  if (!nic.roce || pf.netdevs.empty()) return n;
  auto it = facts.roce.netdevs.find(pf.netdevs.front());
  if (it == facts.roce.netdevs.end() || !it->second.ecn_error.empty()) return n;
  const RoceNetdevFacts& f = it->second;
  n.ifname = it->first;
  n.ecn = nic.roce->ecn && !nic.roce->ecn->empty() && !f.ecn_dir;
  if (nic.roce->cnp) {
    n.cnp_dscp = nic.roce->cnp->dscp && !f.cnp_dscp;
    n.cnp_prio = nic.roce->cnp->priority && !f.cnp_802p_prio;
  }
  return n;
}


// roce.ecn / roce.cnp where the driver has no runtime setting for them:
// ROCE_CC_PRIO_MASK_P<n> (a bitmask of the priorities with RoCE congestion
// control; the wanted ones are added, the others kept, as the runtime ECN
// is), CNP_DSCP_P<n> (with CNP_DSCP_MODE_P<n> FIXED_VALUE(1) where the card
// has it: "DSCP is taken from CNP_DSCP") and CNP_802P_PRIO_P<n>. Names and
// widths from mstflint's mlxconfig_host.db (nv_roce_cc, nv_roce_cc_ecn).
void PlanRoceFirmware(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                      Planned& planned, PlanSink& sink) {
  for (const PciFunction* pf : SelectPfs(nic, facts)) {
    const RoceFirmwareNeeds need = RoceNeeds(nic, *pf, facts);
    if (!need.Any()) continue;
    const std::string field = path + (need.ecn ? ".roce.ecn" : ".roce.cnp");
    const std::string dev = FirmwareDevice(pf->pci_address);
    if (auto it = facts.firmware.find(dev); it != facts.firmware.end() && !it->second.unread &&
                                            !it->second.tool_missing && !it->second.error.empty()) {
      sink.Error(field, need.ifname + " has no ECN settings in sysfs (/sys/class/net/" +
                            need.ifname + "/ecn" + (need.ecn ? "" : "/roce_np/cnp_*") +
                            ": NVIDIA's out-of-tree mlx5 has them, the upstream driver not), " +
                            "so they are set in the firmware of " + dev +
                            ", which cannot be read: " + it->second.error);
      continue;
    }
    const FirmwareFacts* fw = Lookup(
        facts, *pf, field,
        "RoCE congestion control (" + need.ifname + " has no ecn/ " + "settings in sysfs)", sink);
    if (fw == nullptr) continue;
    const std::string port = "_P" + std::to_string(FirmwarePort(pf->pci_address));
    const std::string why = " (" + need.ifname + " has no /sys/class/net/" + need.ifname + "/ecn" +
                            (need.ecn ? "" : "/roce_np/cnp_*") +
                            ", as with the upstream mlx5 driver: set in the firmware of " + dev +
                            ", takes effect after a reboot)";
    auto missing = [&](const std::string& param) {
      return "the firmware of " + dev + " (" + DeviceType(*fw) + ") has no " + param + " and " +
             need.ifname + " no runtime setting for it" + why;
    };
    if (need.ecn) {
      const std::string param = "ROCE_CC_PRIO_MASK" + port;
      long mask = 0;
      for (int p : *nic.roce->ecn) mask |= 1L << p;
      auto it = fw->params.find(param);
      if (it != fw->params.end()) {
        auto now = MstconfigValueNumber(it->second.next_boot);
        if (!now) {
          sink.Error(path + ".roce.ecn",
                     dev + " " + param + " reads \"" + it->second.next_boot + "\", not a number");
          continue;
        }
        mask |= *now;
      }
      PlanParam(*fw, dev,
                NumberWant(param, mask, path + ".roce.ecn",
                           "nic " + nic.name + " wants ECN on priorities " +
                               nlohmann::json(*nic.roce->ecn).dump() + why,
                           missing(param)),
                nic, pf->pci_address, planned, sink);
    }
    if (need.cnp_dscp) {
      const std::string field_dscp = path + ".roce.cnp.dscp";
      const std::string mode = "CNP_DSCP_MODE" + port;
      if (fw->params.count(mode) != 0) {
        PlanParam(*fw, dev,
                  NumberWant(mode, 1, field_dscp,
                             "nic " + nic.name + " sets the CNP DSCP: FIXED_VALUE(1) takes it " +
                                 "from CNP_DSCP" + port + why,
                             missing(mode)),
                  nic, pf->pci_address, planned, sink);
      }
      const std::string param = "CNP_DSCP" + port;
      PlanParam(*fw, dev,
                NumberWant(param, *nic.roce->cnp->dscp, field_dscp,
                           "nic " + nic.name + " wants CNP DSCP " +
                               std::to_string(*nic.roce->cnp->dscp) + why,
                           missing(param)),
                nic, pf->pci_address, planned, sink);
    }
    if (need.cnp_prio) {
      const std::string param = "CNP_802P_PRIO" + port;
      PlanParam(*fw, dev,
                NumberWant(param, *nic.roce->cnp->priority, path + ".roce.cnp.priority",
                           "nic " + nic.name + " wants CNP 802.1p priority " +
                               std::to_string(*nic.roce->cnp->priority) + why,
                           missing(param)),
                nic, pf->pci_address, planned, sink);
    }
  }
}

// numVfs above what the firmware enables: SRIOV_EN=1, NUM_OF_VFS >= numVfs.
// Only for cards whose configuration could be read; otherwise the sriov
// planner's error about sriov_totalvfs stands.
void PlanVfLimit(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                 Planned& planned, PlanSink& sink) {
  const int want = *nic.num_vfs;
  const std::string field = path + ".numVfs";
  for (const PciFunction* pf : SelectPfs(nic, facts)) {
    auto it = facts.firmware.find(FirmwareDevice(pf->pci_address));
    if (it == facts.firmware.end() || !it->second.error.empty()) continue;
    const FirmwareFacts& fw = it->second;
    const std::string dev = it->first;
    if (auto en = fw.params.find("SRIOV_EN"); en != fw.params.end()) {
      auto next = MstconfigValueNumber(en->second.next_boot);
      if (next && *next == 0 && !ReadOnly(en->second, dev, "SRIOV_EN", field, sink)) {
        planned.Add(sink, FirmwareChange(dev, "SRIOV_EN", false, true,
                                         "nic " + nic.name + " wants " + std::to_string(want) +
                                             " VFs: the firmware of " + dev +
                                             " has SR-IOV off (takes effect after a reboot)",
                                         field, nic, pf->pci_address));
      }
    }
    if (auto n = fw.params.find("NUM_OF_VFS"); n != fw.params.end()) {
      auto next = MstconfigValueNumber(n->second.next_boot);
      if (next && *next < want && !ReadOnly(n->second, dev, "NUM_OF_VFS", field, sink)) {
        planned.Add(sink,
                    FirmwareChange(dev, "NUM_OF_VFS", *next, want,
                                   "nic " + nic.name + " wants " + std::to_string(want) +
                                       " VFs: the firmware of " + dev + " enables " +
                                       std::to_string(*next) + " (takes effect after a reboot)",
                                   field, nic, pf->pci_address));
      }
    }
  }
}

}  // namespace provisioner::firmware_plan
