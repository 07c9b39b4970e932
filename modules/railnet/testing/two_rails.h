// The railnet tests' host and host.yaml: two Mellanox PFs with netdevs eth0
// and eth1 (0000:10:00.0, 0000:11:00.0), the network stacks discovery found,
// and two rails on them (rail1 172.16.1.7/24 with a gateway and a remote
// route, rail2 172.16.2.7/24), as spec.rails expands them.
#ifndef PROVISIONER_MODULES_RAILNET_TESTING_TWO_RAILS_H_
#define PROVISIONER_MODULES_RAILNET_TESTING_TWO_RAILS_H_

#include <string>
#include <utility>
#include <vector>

#include "engine/model/desired.h"
#include "engine/model/host_model.h"

namespace provisioner::railnet_testing {

inline HostFacts TwoPfs(std::vector<std::string> stacks = {}) {
  HostFacts f;
  for (int i = 0; i < 2; ++i) {
    PciFunction pf;
    pf.pci_address = "0000:1" + std::to_string(i) + ":00.0";
    pf.class_code = 0x020000;
    pf.vendor = "15b3";
    pf.netdevs = {"eth" + std::to_string(i)};
    f.pci.push_back(pf);
  }
  f.railnet.network_stacks = std::move(stacks);
  return f;
}

// Rail i + 1 on eth<i> with `address`.
inline NicSpec RailNic(int i, const std::string& address) {
  NicSpec n;
  n.name = "rail" + std::to_string(i + 1);
  n.selector.pf_names = {"eth" + std::to_string(i)};
  n.addresses = std::vector<std::string>{address};
  return n;
}

inline DesiredState TwoRails() {
  DesiredState d;
  d.nics = {RailNic(0, "172.16.1.7/24"), RailNic(1, "172.16.2.7/24")};
  d.rail_origins = {{DesiredState::NicPath(0), "spec.rails.nic", 1},
                    {DesiredState::NicPath(1), "spec.rails.nic", 2}};
  d.nics[0].routing = NicRoutingSpec{std::nullopt, std::nullopt, "172.16.1.254", {"172.16.0.0/16"},
                                     std::nullopt};
  return d;
}

}  // namespace provisioner::railnet_testing

#endif  // PROVISIONER_MODULES_RAILNET_TESTING_TWO_RAILS_H_
