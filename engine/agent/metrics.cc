// The agent's metrics through prometheus-cpp 1.0.1 (Debian's
// prometheus-cpp-dev): a Registry of the agent's own families, and a
// Collectable that reads the RDMA port counters at scrape time. Names and
// meanings: docs/agent.md "Metrics".
#include "engine/agent/metrics.h"

#include <arpa/inet.h>

#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "engine/agent/rdma_counters.h"
#include "engine/model/selector.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace provisioner::agent {
namespace {

namespace prom = ::prometheus;

// The PF addresses of the rails: each GPU's closest NIC, GPUs in order
// ("rail0" for the first GPU's), as topology discovery links them.
std::map<std::string, std::string> RailsByPf(const HostFacts& facts) {
  std::map<std::string, std::string> rails;
  int i = 0;
  for (const GpuInfo& gpu : facts.topology.gpus) {
    const GpuNicLink* best = nullptr;
    for (const GpuNicLink& l : facts.topology.links) {
      if (l.gpu != gpu.pci_address) continue;
      if (best == nullptr || l.level < best->level ||
          (l.level == best->level && l.nic < best->nic)) {
        best = &l;
      }
    }
    if (best != nullptr && best->level < PcieLevel::kNode && rails.count(best->nic) == 0) {
      rails[best->nic] = "rail" + std::to_string(i++);
    }
  }
  return rails;
}

// A metric family `name` with its help text, registered in `registry`.
template <typename Builder>
auto& Family(Builder builder, const char* name, const char* help, prom::Registry& registry) {
  return builder.Name(name).Help(help).Register(registry);
}

class PrometheusMetrics final : public AgentMetrics {
 public:
  PrometheusMetrics(const std::string& address, const std::string& root)
      : registry_(std::make_shared<prom::Registry>()),
        runs_(Family(prom::BuildCounter(), "provisioner_agent_reconcile_runs_total",
                     "Reconciles run, by result (converged, applied, pending, failed)",
                     *registry_)),
        detected_(Family(prom::BuildCounter(), "provisioner_agent_drift_detected_total",
                         "Changes a reconcile found needed (drift from host.yaml), by module",
                         *registry_)),
        fixed_(Family(prom::BuildCounter(), "provisioner_agent_drift_fixed_total",
                      "Changes the agent applied and verified, by module", *registry_)),
        pending_(Family(prom::BuildGauge(), "provisioner_agent_pending_changes",
                        "Changes left for a person after the last reconcile, by disruption",
                        *registry_)),
        last_success_(Family(prom::BuildGauge(), "provisioner_agent_last_success_timestamp_seconds",
                             "Unix time of the last reconcile that did not fail", *registry_)
                          .Add({})),
        apply_seconds_(Family(prom::BuildHistogram(), "provisioner_agent_apply_duration_seconds",
                              "Duration of the agent's applies", *registry_)
                           .Add({}, prom::Histogram::BucketBoundaries{0.1, 0.25, 0.5, 1, 2.5, 5, 10,
                                                                      30, 60, 120, 300})),
        vfs_desired_(Family(prom::BuildGauge(), "provisioner_agent_vfs_desired",
                            "VFs host.yaml asks for, per PF", *registry_)),
        vfs_actual_(Family(prom::BuildGauge(), "provisioner_agent_vfs_actual",
                           "VFs the PF has (sriov_numvfs), as last discovered", *registry_)),
        rdma_(std::make_shared<RdmaCounterCollector>(root)),
        exposer_(address, 2) {
    exposer_.RegisterCollectable(registry_);
    exposer_.RegisterCollectable(rdma_);
    const auto ports = exposer_.GetListeningPorts();
    address_ = address.substr(0, address.rfind(':') + 1) +
               std::to_string(ports.empty() ? 0 : ports.front());
  }

  std::string address() const override { return address_; }

  void Record(const ReconcileResult& r, double now_unix) override {
    runs_.Add({{"result", r.result}}).Increment();
    for (const auto& [m, n] : r.drift_detected) detected_.Add({{"module", m}}).Increment(n);
    for (const auto& [m, n] : r.drift_fixed) fixed_.Add({{"module", m}}).Increment(n);
    for (const char* d : {"live", "link-flap", "replace", "reboot", "firmware"}) {
      int n = 0;
      for (const PendingChange& p : r.pending) n += p.disruption == d;
      pending_.Add({{"disruption", d}}).Set(n);
    }
    if (r.result != "failed") last_success_.Set(now_unix);
    if (r.applied_any) apply_seconds_.Observe(r.apply_duration.count() / 1000.0);
    rdma_->ForgetPorts();
    if (!r.facts || !r.desired) return;
    std::map<std::string, std::string> rails = RailsByPf(*r.facts);
    for (const NicSpec& nic : r.desired->nics) {
      if (!nic.num_vfs) continue;
      for (const PciFunction* pf : SelectPfs(nic, *r.facts)) {
        vfs_desired_.Add({{"pf", pf->pci_address}}).Set(*nic.num_vfs);
        vfs_actual_.Add({{"pf", pf->pci_address}}).Set(pf->sriov ? pf->sriov->num_vfs : 0);
      }
    }
    std::map<std::string, std::string> rail_of_device;
    for (const RdmaDevice& dev : r.facts->rdma.devices) {
      auto it = rails.find(dev.pci_address);
      if (it != rails.end()) rail_of_device[dev.name] = it->second;
    }
    rdma_->SetRails(std::move(rail_of_device));
  }

 private:
  std::shared_ptr<prom::Registry> registry_;
  prom::Family<prom::Counter>& runs_;
  prom::Family<prom::Counter>& detected_;
  prom::Family<prom::Counter>& fixed_;
  prom::Family<prom::Gauge>& pending_;
  prom::Gauge& last_success_;
  prom::Histogram& apply_seconds_;
  prom::Family<prom::Gauge>& vfs_desired_;
  prom::Family<prom::Gauge>& vfs_actual_;
  std::shared_ptr<RdmaCounterCollector> rdma_;
  prom::Exposer exposer_;
  std::string address_;
};

}  // namespace

Status CheckMetricsAddress(const std::string& address, bool allow_remote) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 == address.size()) {
    return InvalidArgumentError("--metrics-address " + address + ": not HOST:PORT");
  }
  std::string host = address.substr(0, colon);
  if (host.size() > 1 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned char buf[16];
  const bool loopback = host == "localhost" ||
                        (::inet_pton(AF_INET, host.c_str(), buf) == 1 && buf[0] == 127) ||
                        host == "::1";
  if (!loopback && !allow_remote) {
    return InvalidArgumentError("--metrics-address " + address +
                                ": not a loopback address (give it explicitly to serve it)");
  }
  return OkStatus();
}

StatusOr<std::unique_ptr<AgentMetrics>> StartMetrics(const std::string& address,
                                                     const std::string& root) {
  try {
    return std::unique_ptr<AgentMetrics>(std::make_unique<PrometheusMetrics>(address, root));
  } catch (const std::exception& e) {
    return UnavailableError("listen on " + address + ": " + e.what());
  }
}

}  // namespace provisioner::agent
