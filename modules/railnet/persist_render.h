// The rails' addresses, per-rail table routes and `from <addr> lookup
// <table>` rules in the native files of the node's network stack (issue 39
// item 4), and the files that mark the rail interfaces unmanaged there
// (spec.network.owner: provisioner). Pure: text from RailWant. Each file
// starts with our header ("# written by provisioner"), which every one of
// these formats reads as a comment. The formats, as read from the tools:
//
//   netplan 0.106 (Debian 12; doc/netplan-yaml.md, src/parse.c): one YAML
//     for all rails, `ethernets.<name>.addresses`, `routes` with `to`,
//     `via`, `from` (the preferred source), `scope`, `table`, and
//     `routing-policy` with `from`, `table`, `priority`; `optional: true`
//     (boot does not wait for a rail). Mode 0600: netplan 0.106 warns about
//     a file others can read.
//   systemd-networkd 252 (systemd.network(5)): a .network per rail,
//     `[Match] Name=`, `[Link] RequiredForOnline=no`, one `[Address]` per
//     address, `[Route] Destination= Gateway= PreferredSource= Scope=
//     Table=`, `[RoutingPolicyRule] From= Table= Priority=`.
//   NetworkManager 1.42 keyfile (nm-settings-keyfile(5), nm-settings-nmcli
//     (5); nmstate's nm/nm_dbus/gen_conf/route*.rs writes the same keys): a
//     .nmconnection per rail, mode 0600 (NM ignores a keyfile others can
//     read), `ipv4.addressN`, `ipv4.routeN` with `routeN_options=table=..`
//     (per route, not ipv4.route-table, which would also move the
//     address's prefix route out of the main table), `ipv4.routing-ruleN=
//     priority P from A/32 table T`.
//   ifupdown (Debian's 0.8, interfaces(5)): an `iface <name> inet static`
//     stanza per rail in /etc/network/interfaces.d/ with `post-up ip
//     route replace ... table T`, `post-up ip rule add ...` and the
//     matching `pre-down ip rule del` (ifupdown has no rule keyword;
//     Debian's /etc/network/interfaces sources interfaces.d/*).
//   Unmanaged: NetworkManager.conf(5) `[keyfile] unmanaged-devices+=
//     interface-name:<name>;...` in conf.d (`+=` appends to the list other
//     files set); networkd `[Match] Name=<names>` `[Link] Unmanaged=yes` in
//     a file that sorts before netplan's 10-netplan-*.network.
#ifndef PROVISIONER_MODULES_RAILNET_PERSIST_RENDER_H_
#define PROVISIONER_MODULES_RAILNET_PERSIST_RENDER_H_

#include <string>
#include <vector>

#include "modules/railnet/railnet_planner.h"

namespace provisioner {

inline constexpr const char* kNetplanRailsFile = "/etc/netplan/90-provisioner-rails.yaml";
inline constexpr const char* kNetworkdDir = "/etc/systemd/network";
inline constexpr const char* kNmConnectionsDir = "/etc/NetworkManager/system-connections";
inline constexpr const char* kIfupdownRailsFile = "/etc/network/interfaces.d/provisioner-rails";
inline constexpr const char* kNmUnmanagedFile =
    "/etc/NetworkManager/conf.d/90-provisioner-rails-unmanaged.conf";
inline constexpr const char* kNetworkdUnmanagedFile =
    "/etc/systemd/network/05-provisioner-rails-unmanaged.network";

// /etc/systemd/network/10-provisioner-<name>.network,
// /etc/NetworkManager/system-connections/provisioner-<name>.nmconnection
// (name: the netdev's lasting name).
std::string NetworkdRailPath(const RailWant& w);
std::string NmRailPath(const RailWant& w);

std::string RenderNetplanRails(const std::vector<const RailWant*>& rails);
std::string RenderNetworkdRail(const RailWant& w);
std::string RenderNmKeyfileRail(const RailWant& w);
std::string RenderIfupdownRails(const std::vector<const RailWant*>& rails);
std::string RenderNmUnmanaged(const std::vector<std::string>& names);
std::string RenderNetworkdUnmanaged(const std::vector<std::string>& names);

// A stable UUID for the keyfile of connection `id` (NetworkManager wants
// one; the same text each plan so that a second plan has nothing to do).
std::string StableUuid(const std::string& id);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_PERSIST_RENDER_H_
