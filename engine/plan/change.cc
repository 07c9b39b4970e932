#include "engine/plan/change.h"

namespace provisioner {

const char* DisruptionName(Disruption d) {
  switch (d) {
    case Disruption::kLive: return "live";
    case Disruption::kReboot: return "reboot";
    case Disruption::kFirmwareReset: return "firmware-reset";
  }
  return "live";
}

bool Plan::RebootRequired() const {
  for (const auto& c : changes) {
    if (c.disruption != Disruption::kLive) return true;
  }
  return false;
}

}  // namespace provisioner
