// devlink notifications as agent events: what the kernel multicasts to the
// "config" group of the "devlink" generic netlink family
// (include/uapi/linux/devlink.h DEVLINK_GENL_MCGRP_CONFIG_NAME; net/devlink/
// netlink.c devlink_nl_notify_send). The live event source joins that group
// when the kernel has devlink (live_event_source.cc).
#ifndef PROVISIONER_ENGINE_AGENT_DEVLINK_EVENTS_H_
#define PROVISIONER_ENGINE_AGENT_DEVLINK_EVENTS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/base/status.h"

struct nlmsghdr;

namespace provisioner::agent {

// The event line for a notification that can undo a converged host, nullopt
// for the others (traps, health reporters, regions, params, rates, flash
// progress: nothing the agent restores). Read in Linux 6.18's net/devlink
// (dev.c, port.c at torvalds/linux 1962afd2):
//   DEVLINK_CMD_NEW / DEL        an instance registered or gone: a driver
//                                probe or removal, a devlink reload
//                                ("devlink pci/0000:af:00.0: new")
//   DEVLINK_CMD_PORT_NEW / DEL   a port added, changed or removed: the VF
//                                representors an E-Switch mode change
//                                creates or deletes, SFs
//                                ("devlink pci/0000:af:00.0 port 2: new (pf0vf0)")
//   DEVLINK_CMD_ESWITCH_GET/SET  taken too, though 6.18 multicasts no E-Switch
//                                message: a mode change is seen through the
//                                representor ports it adds or removes.
// `family` is the devlink family's id; a message of another type is nullopt.
// A truncated message or bad attributes: kInvalidArgument.
StatusOr<std::optional<std::string>> DescribeDevlinkNotification(nlmsghdr* h, uint16_t family);
StatusOr<std::optional<std::string>> DescribeDevlinkNotification(const std::vector<uint8_t>& msg,
                                                                 uint16_t family);

}  // namespace provisioner::agent

#endif  // PROVISIONER_ENGINE_AGENT_DEVLINK_EVENTS_H_
