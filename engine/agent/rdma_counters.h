// The RDMA port counters a RoCE/InfiniBand fabric is run by, read at scrape
// time in one bounded pass over /sys/class/infiniband/<dev>/ports/<n>/
// counters/ and hw_counters/ (drivers/infiniband/core/sysfs.c: the IB PMA
// counters and the driver's rdma_hw_stats; mlx5's names in
// drivers/infiniband/hw/mlx5/counters.c). Labels: device, port, netdev, rail.
#ifndef PROVISIONER_ENGINE_AGENT_RDMA_COUNTERS_H_
#define PROVISIONER_ENGINE_AGENT_RDMA_COUNTERS_H_

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "engine/host/host_fs.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace provisioner::agent {

// One counter: where it is read and the metric it becomes.
struct RdmaCounterSpec {
  const char* dir;   // "counters" | "hw_counters"
  const char* file;  // "port_xmit_data"
  const char* metric;
  const char* help;
};
const std::vector<RdmaCounterSpec>& RdmaCounterSpecs();

// Ports read at most per scrape (a 64-card host with 8 ports each has 512).
inline constexpr size_t kMaxRdmaPorts = 1024;

class RdmaCounterCollector final : public ::prometheus::Collectable {
 public:
  explicit RdmaCounterCollector(const std::string& root);
  std::vector<::prometheus::MetricFamily> Collect() const override;
  // device -> rail label, from the last discovery (forgets the ports too).
  void SetRails(std::map<std::string, std::string> rails);
  // After every reconcile (an event, the resync): the next scrape lists the
  // devices, their ports and labels again; the scrapes between read the
  // counters of the ports listed.
  void ForgetPorts();

 private:
  struct Port {
    std::string dir;  // /sys/class/infiniband/<dev>/ports/<n>
    std::vector<::prometheus::ClientMetric::Label> labels;
  };
  std::vector<Port> ListPorts() const;  // mu_ held

  std::unique_ptr<HostFs> fs_;
  mutable std::mutex mu_;
  std::map<std::string, std::string> rails_;
  mutable std::optional<std::vector<Port>> ports_;
};

}  // namespace provisioner::agent

#endif  // PROVISIONER_ENGINE_AGENT_RDMA_COUNTERS_H_
