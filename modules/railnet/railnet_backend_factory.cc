// The railnet module's one choice of backends per root: rtnetlink on the
// live root (reporting to `fs` for snapshot), the capture files under a tree.
#include "modules/link/address_backend.h"
#include "modules/railnet/policy_routing.h"

namespace provisioner {

std::unique_ptr<PolicyRoutingBackend> NewPolicyRoutingBackend(HostFs& fs) {
  if (fs.IsLiveRoot()) return NewNetlinkPolicyRoutingBackend(&fs);
  return NewTreePolicyRoutingBackend(fs);
}

}  // namespace provisioner
