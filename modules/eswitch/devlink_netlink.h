// devlink's messages (generic netlink family "devlink", version 1), built
// and parsed here so that tests can compare them with the kernel's
// structures (include/uapi/linux/devlink.h) and run them against the kernel.
#ifndef PROVISIONER_MODULES_ESWITCH_DEVLINK_NETLINK_H_
#define PROVISIONER_MODULES_ESWITCH_DEVLINK_NETLINK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"

namespace provisioner::devlink {

// DEVLINK_ATTR_PARAM_TYPE of a string param: the kernel's NLA_STRING (5),
// which its devlink_param_type_get_from_info maps to a string param (Linux
// 6.1 net/devlink/leftover.c; DEVLINK_VAR_ATTR_TYPE_STRING, also 5, in 6.13+).
inline constexpr uint8_t kParamTypeString = 5;

// DEVLINK_CMD_ESWITCH_GET / _SET (DEVLINK_ATTR_ESWITCH_MODE u16) for
// pci/<bdf>; `seq` is the message's sequence number.
std::vector<uint8_t> BuildEswitchGet(uint16_t family, uint32_t seq, const std::string& bdf);
std::vector<uint8_t> BuildEswitchSet(uint16_t family, uint32_t seq, const std::string& bdf,
                                     uint16_t mode);
// DEVLINK_CMD_PARAM_GET of one param; DEVLINK_CMD_PARAM_SET of a string
// param in the runtime cmode.
std::vector<uint8_t> BuildParamGet(uint16_t family, uint32_t seq, const std::string& bdf,
                                   const std::string& name);
std::vector<uint8_t> BuildParamSet(uint16_t family, uint32_t seq, const std::string& bdf,
                                   const std::string& name, const std::string& value);

// The reply to ESWITCH_GET: the mode ("legacy" | "switchdev"); an
// NLMSG_ERROR is its errno as a Status.
StatusOr<std::string> ParseEswitchGetReply(const std::vector<uint8_t>& msg);
// The reply to PARAM_GET: the runtime value of a string param.
StatusOr<std::string> ParseParamGetReply(const std::vector<uint8_t>& msg);

// DEVLINK_ESWITCH_MODE_* <-> "legacy" | "switchdev" (nullopt: other).
std::optional<std::string> ModeName(uint16_t mode);
std::optional<uint16_t> ModeValue(const std::string& name);

}  // namespace provisioner::devlink

#endif  // PROVISIONER_MODULES_ESWITCH_DEVLINK_NETLINK_H_
