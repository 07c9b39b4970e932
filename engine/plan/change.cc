#include "engine/plan/change.h"

#include <cstdint>
#include <cstdio>

namespace provisioner {

const char* DisruptionName(Disruption d) {
  switch (d) {
    case Disruption::kLive: return "live";
    case Disruption::kReboot: return "reboot";
    case Disruption::kFirmwareReset: return "firmware-reset";
  }
  return "live";
}

Disruption DisruptionFromName(const std::string& name) {
  if (name == "reboot") return Disruption::kReboot;
  if (name == "firmware-reset") return Disruption::kFirmwareReset;
  return Disruption::kLive;
}

nlohmann::json ChangeToRecord(const Change& c) {
  return {{"id", c.id},
          {"module", c.module},
          {"target", c.target},
          {"attribute", c.attribute},
          {"before", c.before},
          {"after", c.after},
          {"disruption", DisruptionName(c.disruption)},
          {"reason", c.reason},
          {"phase", c.phase},
          {"fieldPath", c.field_path},
          {"detail", c.detail}};
}

Change ChangeFromRecord(const nlohmann::json& j) {
  Change c;
  if (!j.is_object()) return c;
  c.id = j.value("id", "");
  c.module = j.value("module", "");
  c.target = j.value("target", "");
  c.attribute = j.value("attribute", "");
  c.before = j.value("before", nlohmann::json());
  c.after = j.value("after", nlohmann::json());
  c.disruption = DisruptionFromName(j.value("disruption", "live"));
  c.reason = j.value("reason", "");
  c.phase = j.value("phase", 0);
  c.field_path = j.value("fieldPath", "");
  c.detail = j.value("detail", nlohmann::json::object());
  return c;
}

std::string Digest(const std::string& bytes) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : bytes) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

bool Plan::RebootRequired() const {
  for (const auto& c : changes) {
    if (c.disruption != Disruption::kLive) return true;
  }
  return false;
}

}  // namespace provisioner
