// spec.nics[].linkType: LINK_TYPE_P<n> of the card of each selected PF.
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

void PlanLinkType(const NicSpec& nic, const std::string& path, const HostFacts& facts,
                  Planned& planned, PlanSink& sink) {
  const std::string field = path + ".linkType";
  auto want = LinkTypeValue(*nic.link_type);
  if (!want) {
    sink.Error(field, "must be eth or ib, not " + *nic.link_type);
    return;
  }
  std::vector<const PciFunction*> pfs = SelectPfs(nic, facts);
  // A selector matching nothing: reported once, by the pci module.
  for (const PciFunction* pf : pfs) {
    if (RunningMatches(facts, *pf, *nic.link_type)) continue;
    const FirmwareFacts* fw = Lookup(facts, *pf, field, "link type", sink);
    if (fw == nullptr) continue;
    const std::string dev = FirmwareDevice(pf->pci_address);
    const std::string param = "LINK_TYPE_P" + std::to_string(FirmwarePort(pf->pci_address));
    auto it = fw->params.find(param);
    if (it != fw->params.end() && !MstconfigValueNumber(it->second.next_boot)) {
      sink.Error(field,
                 dev + " " + param + " reads \"" + it->second.next_boot + "\", not a number");
      continue;
    }
    Want w;
    w.param = param;
    w.text = std::to_string(*want);
    w.after = *nic.link_type;
    w.field = field;
    w.reason = "nic " + nic.name + " wants linkType " + *nic.link_type + " (port " +
               param.substr(11) + " of " + dev + "; takes effect after a reboot)";
    w.before = [](const std::string& printed) -> nlohmann::json {
      return LinkTypeName(MstconfigValueNumber(printed).value_or(0));
    };
    w.show = [](const std::string& printed) {
      auto n = MstconfigValueNumber(printed);
      return n ? LinkTypeName(*n) : printed;
    };
    w.missing = "the firmware of " + dev + " (" + DeviceType(*fw) + ") has no " + param +
                ": its port type is fixed (not a VPI card)";
    PlanParam(*fw, dev, w, nic, pf->pci_address, planned, sink);
  }
}

}  // namespace provisioner::firmware_plan
