#include "modules/sriov/testing/discover.h"

#include "engine/host/host_fs.h"
#include "modules/pci/pci_module.h"
#include "modules/sriov/sriov_module.h"

namespace provisioner::sriov_testing {

StatusOr<HostFacts> DiscoverPciAndSriov(const std::string& root) {
  auto fs = NewLocalHostFs(root);
  HostContext ctx;
  ctx.fs = fs.get();
  HostFacts facts;
  PciModule pci;
  SriovModule sriov;
  RETURN_IF_ERROR(pci.Discover(ctx, facts));
  RETURN_IF_ERROR(sriov.Discover(ctx, facts));
  return facts;
}

}  // namespace provisioner::sriov_testing
