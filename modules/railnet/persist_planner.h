// Persisting the rails with the node's own network stack, never against it
// (issue 39 item 4). Pure: a function of the wanted rails and the facts.
//
// The stack that persists them is the first one DetectNetworkStacks found
// of netplan (it renders for networkd or NetworkManager: the front end
// wins), NetworkManager, systemd-networkd, ifupdown; none: only our
// sysctl.d and rt_tables.d files, and the live state (apply at boot).
//
// spec.network.owner: stack (default): the rails' addresses, table routes
// and rules in that stack's own files (persist_render.h), one managed file
// per rail or one for all, as the stack reads them:
//
//   railnet/90-provisioner-rails.yaml/file         netplan
//   railnet/10-provisioner-<name>.network/file     systemd-networkd
//   railnet/provisioner-<name>.nmconnection/file   NetworkManager
//   railnet/provisioner-rails/file                 ifupdown
//
// spec.network.owner: provisioner: nothing of the rails in the stack; the
// rail interfaces marked unmanaged in each stack that could take them
// (NetworkManager: conf.d unmanaged-devices; systemd-networkd and netplan's
// networkd renderer: a .network with Unmanaged=yes that sorts first).
// ifupdown configures only the interfaces it has a stanza for: nothing to
// write.
//
// A rail netdev that another file of a stack configures (not ours) is a plan
// error naming the file and the fix (owner: provisioner, or remove the
// interface from it), unless that file already gives it every address the
// rail wants (then no file of ours for that rail: the stack's own config
// says the same thing, a warning says so), or owner is provisioner and the
// stack is one we can mark the interface unmanaged in. Our files that are
// no longer wanted are removed; all are managed files (captured before
// apply, restored by rollback).
#ifndef PROVISIONER_MODULES_RAILNET_PERSIST_PLANNER_H_
#define PROVISIONER_MODULES_RAILNET_PERSIST_PLANNER_H_

#include <string>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/railnet_facts.h"
#include "engine/plan/change.h"
#include "modules/railnet/railnet_planner.h"

namespace provisioner {

inline constexpr char kOwnerProvisioner[] = "provisioner";

// The stack that persists the rails ("netplan", "NetworkManager",
// "systemd-networkd", "ifupdown"), or "" for none.
std::string PersistStack(const RailnetFacts& facts);
// The stack a configuration file at `path` belongs to, or "".
std::string StackOfPath(const std::string& path);
// A file of ours by its name: in a stack's directory, "provisioner" in the
// name. Discovery keeps those with our header (persist_files); CheckChange
// refuses a railnet file change to any other path.
bool IsPersistPath(const std::string& path);

// The persistence changes and diagnostics for `rails` (WantedRails).
void PlanRailPersistence(const DesiredState& desired, const std::vector<RailWant>& rails,
                         const RailnetFacts& now, PlanSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_PERSIST_PLANNER_H_
