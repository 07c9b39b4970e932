// Doctor checks of the ipoib module (pure, over the facts), per IPoIB netdev
// of the NICs (those host.yaml gives an ipoib block, else every one):
//   ipoib.mode-mtu   the MTU fits the mode: datagram carries at most the IB
//                    MTU - 4 (4092; less when the SM's broadcast group is
//                    smaller), connected up to 65520; connected mode needs
//                    the RC flag in the hardware address (not mlx5's
//                    enhanced IPoIB)
//   ipoib.pkey       each child's (and each wanted) P_Key is in the port's
//                    P_Key table (ports/<n>/pkeys/*), which only the subnet
//                    manager fills: else the child carries no traffic
#ifndef PROVISIONER_MODULES_IPOIB_IPOIB_CHECKS_H_
#define PROVISIONER_MODULES_IPOIB_IPOIB_CHECKS_H_

#include "engine/model/desired.h"
#include "engine/model/host_model.h"
#include "engine/module/check.h"

namespace provisioner {

void CheckIpoib(const DesiredState* desired, const HostFacts& facts, CheckSink& sink);

}  // namespace provisioner

#endif  // PROVISIONER_MODULES_IPOIB_IPOIB_CHECKS_H_
