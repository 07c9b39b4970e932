// The rdma module's one choice of backends per root (rdma_backend.h).
#include "modules/rdma/rdma_backend.h"

namespace provisioner::rdma {

RdmaBackends NewRdmaBackends(HostFs& fs,
                             const std::function<std::unique_ptr<NetnsModeClient>()>& netns_client,
                             bool cross_check_rdma_core) {
  RdmaBackends b;
  if (fs.IsLiveRoot()) {
    b.netns = NewNetlinkNetnsBackend(netns_client());
    b.addresses = NewGetifaddrsAddressBackend(fs);
    b.cross_check_rdma_core = cross_check_rdma_core;
  } else {
    b.netns = NewTreeNetnsBackend(fs);
    b.addresses = NewTreeAddressBackend(fs);
  }
  return b;
}

}  // namespace provisioner::rdma
