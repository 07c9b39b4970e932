// nics[].firmwareVersion: the pinned version checked (policy validate) or
// burned (policy update).
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

// nics[].firmwareVersion: the running version of each selected card
// (mstflint's FW Version(Running) while a burned image waits, else FW
// Version) must be the pinned one. policy validate: else a plan error naming
// both and the card's PSID (the image to burn must be built for it). policy
// update: a burn of the image, checked first (its PSID the card's, its
// version the pinned one); a card whose flash already holds the pinned
// version (burned, not running) needs its activation only: `pending` gets
// it (a reset, or a warning that the reboot is pending).
void PlanFirmwareVersions(const DesiredState& desired, const HostFacts& facts, PlanSink& sink,
                          std::set<std::string>& pending) {
  const bool by_reset = desired.firmware && desired.firmware->activation == "reset";
  std::map<std::string, std::string> pinned;  // card -> the first nic's version
  for (size_t i = 0; i < desired.nics.size(); ++i) {
    const NicSpec& nic = desired.nics[i];
    if (!nic.firmware_version) continue;
    const FirmwareVersionSpec& pin = *nic.firmware_version;
    const std::string field = DesiredState::NicPath(i) + ".firmwareVersion.version";
    std::set<std::string> seen;
    for (const PciFunction* pf : SelectPfs(nic, facts)) {
      const std::string dev = FirmwareDevice(pf->pci_address);
      if (!seen.insert(dev).second) continue;
      auto it = facts.firmware.find(dev);
      if (it == facts.firmware.end()) {
        sink.Error(field, pf->pci_address + " (vendor " + pf->vendor +
                              ") is not an NVIDIA/Mellanox ConnectX: no firmware version to check");
        continue;
      }
      if (auto [p, fresh] = pinned.emplace(dev, pin.version); !fresh && p->second != pin.version) {
        sink.Error(field, "nic " + nic.name + " pins firmware " + pin.version + " on " + dev +
                              ", which another nic pins to " + p->second);
        continue;
      }
      const FirmwareFacts& fw = it->second;
      if (!fw.flint_error.empty() || !fw.flint_read) {
        sink.Error(field, "cannot read the firmware version of " + dev + " (mstflint -d " + dev +
                              " query): " + (fw.flint_error.empty() ? "not read" : fw.flint_error));
        continue;
      }
      const std::string psid = fw.psid.empty() ? "unknown" : fw.psid;
      const std::string running = fw.fw_running.empty() ? fw.fw_version : fw.fw_running;
      if (running == pin.version) continue;
      const std::string image = pin.image.value_or("<image>");
      const std::string burn = "mstflint -d " + dev + " -i " + image + " -y burn";
      if (pin.policy != "update") {
        std::string msg = dev + " (PSID " + psid + ") runs firmware " + running;
        if (!fw.fw_running.empty()) msg += " (" + fw.fw_version + " burned, not running yet)";
        msg += ", but nic " + nic.name + " pins " + pin.version +
               " (policy validate): burn an image of that version built for PSID " +
               (fw.psid.empty() ? "<psid>" : fw.psid) + " (" + burn +
               "), then reset the firmware or reboot";
        sink.Error(field, msg);
        continue;
      }
      if (fw.fw_version == pin.version) {
        // Burned already (an earlier apply): the activation is what is left.
        if (by_reset) {
          pending.insert(dev);
        } else {
          sink.Warning(field, dev + " has firmware " + pin.version + " on its flash but runs " +
                                  running + ": a reboot is pending (or set spec.firmware." +
                                  "activation: reset)");
        }
        continue;
      }
      const std::string image_field = DesiredState::NicPath(i) + ".firmwareVersion.image";
      if (!pin.image) {
        sink.Error(image_field,
                   dev + " runs firmware " + running + ", nic " + nic.name + " pins " +
                       pin.version +
                       ": policy update needs the image to burn (firmwareVersion.image)");
        continue;
      }
      auto img = fw.images.find(*pin.image);
      if (img == fw.images.end()) {
        sink.Error(image_field, "internal error: the firmware image " + *pin.image +
                                    " was not read for this plan");
        continue;
      }
      if (!img->second.error.empty()) {
        sink.Error(image_field, img->second.error);
        continue;
      }
      if (img->second.psid != fw.psid) {
        sink.Error(image_field, "the firmware image " + *pin.image + " is built for PSID " +
                                    (img->second.psid.empty() ? "<none>" : img->second.psid) +
                                    ", but " + dev + " is " + psid +
                                    " (mstflint refuses another PSID): use the image for " + psid);
        continue;
      }
      if (img->second.fw_version != pin.version) {
        sink.Error(image_field, "the firmware image " + *pin.image + " holds firmware " +
                                    img->second.fw_version + ", but nic " + nic.name + " pins " +
                                    pin.version);
        continue;
      }
      Change c = MakeChange(kFirmwareModule, dev, kBurnAttribute, running, pin.version,
                            Disruption::kReboot, kPhaseFirmware,
                            "nic " + nic.name + " pins firmware " + pin.version +
                                " (policy update): " + burn + " (PSID " + psid +
                                "; not reversible: a rollback leaves the burned image; " +
                                "takes effect after a reboot)",
                            DesiredState::NicPath(i) + ".firmwareVersion");
      c.detail["nic"] = nic.name;
      c.detail["pf"] = pf->pci_address;
      c.detail["image"] = *pin.image;
      c.detail["psid"] = fw.psid;
      c.detail["version"] = pin.version;
      c.detail["inverse"] = "none";
      sink.Warning(c.field_path, c.id + " burns " + *pin.image +
                                     " and cannot be undone: a rollback of this apply leaves " +
                                     pin.version + " on the flash of " + dev);
      sink.AddChange(std::move(c));
    }
  }
}

}  // namespace provisioner::firmware_plan
