// Which network stack configures the root's interfaces (issue 39 item 4,
// the detection part): netplan (/etc/netplan/*.yaml), systemd-networkd
// (/etc/systemd/network/*.network), NetworkManager keyfiles
// (/etc/NetworkManager/system-connections/*), ifupdown
// (/etc/network/interfaces and interfaces.d/*), and which NIC netdevs their
// files name (a whole-word match of the netdev's name). Read through the
// host layer; files above 1 MiB are skipped.
#ifndef PROVISIONER_MODULES_RAILNET_NETWORK_STACK_H_
#define PROVISIONER_MODULES_RAILNET_NETWORK_STACK_H_

#include <set>
#include <string>

#include "engine/host/host_fs.h"
#include "engine/model/railnet_facts.h"

namespace provisioner {

// Fills facts.network_stacks, facts.configured_by and facts.foreign_configs
// for `netdevs` (current and lasting names), and facts.persist_files with
// the files of ours found there (persist_planner.h).
void DetectNetworkStacks(const HostFs& fs, const std::set<std::string>& netdevs,
                         RailnetFacts& facts);

// Whether `text` names `word` as a whole word (not part of a longer name).
bool NamesWord(const std::string& text, const std::string& word);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_RAILNET_NETWORK_STACK_H_
