// The rdma module: RDMA devices, ports and GIDs (sysfs, cross-checked with
// rdma-core on the live root), the netns mode (RDMA netlink live, ib_core
// parameter under a tree; modprobe.d persistent), and its doctor checks.
#ifndef PROVISIONER_MODULES_RDMA_RDMA_MODULE_H_
#define PROVISIONER_MODULES_RDMA_RDMA_MODULE_H_

#include <functional>
#include <memory>

#include "engine/module/module.h"
#include "modules/rdma/rdma_backend.h"
#include "modules/rdma/rdma_netlink.h"

namespace provisioner::rdma {

using NetnsClientFactory = std::function<std::unique_ptr<NetnsModeClient>()>;

struct RdmaModuleOptions {
  // The live root's netns mode client (tests inject a fake).
  NetnsClientFactory netns_client = NewNetlinkNetnsModeClient;
  // A refused live switch (EBUSY) is retried this often, this far apart.
  int set_attempts = 3;
  std::chrono::milliseconds set_retry_interval{500};
  // Query rdma-core on the live root and log where it disagrees with sysfs.
  bool cross_check_rdma_core = true;
};

class RdmaModule : public ModuleWithOptions<RdmaModuleOptions> {
 public:
  using ModuleWithOptions::ModuleWithOptions;
  std::string_view name() const override { return "rdma"; }
  // RenderFactsJson (discover output): rdma_render.cc
  PROVISIONER_MODULE_OVERRIDES(Discover, Plan, Apply, Check, RenderFactsJson, RenderFactsTable);

 private:
  // The backends for this root (rdma_backend.h: the one factory).
  RdmaBackends Backends(HostFs& fs) const;
  // The live mode now: the netns backend, else the ib_core parameter.
  StatusOr<std::string> ReadLiveMode(HostContext& ctx) const;
  Status SetLiveMode(const Change& change, const std::string& mode, HostContext& ctx);
  Status WritePersistent(const std::string& mode, HostContext& ctx);
};

}  // namespace provisioner::rdma

#endif  // PROVISIONER_MODULES_RDMA_RDMA_MODULE_H_
