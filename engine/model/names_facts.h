// Persistent-name facts (module names), kept apart from host_model.h.
#ifndef PROVISIONER_ENGINE_MODEL_NAMES_FACTS_H_
#define PROVISIONER_ENGINE_MODEL_NAMES_FACTS_H_

#include <map>
#include <optional>
#include <string>

namespace provisioner {

// The udev rules file the names module owns, under the root.
inline constexpr char kNamesRulesFile[] = "/etc/udev/rules.d/10-provisioner-names.rules";

struct NamesFacts {
  // The rules file as read; nullopt when absent.
  std::optional<std::string> rules;
  // /sys/class/net/<if>/phys_port_name of the PF netdevs that have one
  // ("p0"; a driver without a devlink port answers EOPNOTSUPP: absent).
  std::map<std::string, std::string> phys_port_names;
};

}  // namespace provisioner

#endif  // PROVISIONER_ENGINE_MODEL_NAMES_FACTS_H_
