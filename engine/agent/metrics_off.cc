// The portable build's metrics: prometheus-cpp has no static archive and no
// soname shared by the target distributions (third_party/BUILD.bazel), so
// the endpoint is left out and --metrics-address must be "off".
#include "engine/agent/metrics.h"

namespace provisioner::agent {

Status CheckMetricsAddress(const std::string& address, bool allow_remote) {
  (void)address;
  (void)allow_remote;
  return OkStatus();
}

StatusOr<std::unique_ptr<AgentMetrics>> StartMetrics(const std::string& address,
                                                     const std::string& root) {
  (void)root;
  return UnimplementedError("--metrics-address " + address +
                            ": this portable build has no Prometheus endpoint (prometheus-cpp is "
                            "not linked in); run with --metrics-address off, or use the .deb "
                            "or a build from source");
}

}  // namespace provisioner::agent
