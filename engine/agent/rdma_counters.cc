#include "engine/agent/rdma_counters.h"

#include <cstdlib>
#include <string_view>
#include <utility>

#include "engine/base/strings.h"

namespace provisioner::agent {

namespace prom = ::prometheus;

namespace {
// A counter is a u64 in decimal and a newline (21 bytes); a GID's netdev
// name is at most IFNAMSIZ.
constexpr size_t kMaxCounterBytes = 64;
}  // namespace

const std::vector<RdmaCounterSpec>& RdmaCounterSpecs() {
  static const std::vector<RdmaCounterSpec> kSpecs = {
      {"counters", "port_xmit_data", "provisioner_rdma_port_transmit_data_words_total",
       "Data octets sent on the port, divided by 4 (IB PMA PortXmitData)"},
      {"counters", "port_rcv_data", "provisioner_rdma_port_receive_data_words_total",
       "Data octets received on the port, divided by 4 (IB PMA PortRcvData)"},
      {"counters", "port_xmit_packets", "provisioner_rdma_port_transmit_packets_total",
       "Packets sent on the port"},
      {"counters", "port_rcv_packets", "provisioner_rdma_port_receive_packets_total",
       "Packets received on the port"},
      {"counters", "symbol_error", "provisioner_rdma_port_symbol_errors_total",
       "Minor link errors detected on one or more physical lanes"},
      {"counters", "link_error_recovery", "provisioner_rdma_port_link_error_recoveries_total",
       "Successful link error recoveries"},
      {"counters", "link_downed", "provisioner_rdma_port_link_downed_total",
       "Times the link error recovery failed and the link went down"},
      {"hw_counters", "np_cnp_sent", "provisioner_rdma_np_cnp_sent_total",
       "Congestion notification packets sent as notification point (ECN-marked packets received)"},
      {"hw_counters", "rp_cnp_handled", "provisioner_rdma_rp_cnp_handled_total",
       "Congestion notification packets handled as reaction point (rate reduced)"},
      {"hw_counters", "np_ecn_marked_roce_packets",
       "provisioner_rdma_np_ecn_marked_roce_packets_total", "RoCE packets received ECN-marked"},
      {"hw_counters", "out_of_buffer", "provisioner_rdma_out_of_buffer_total",
       "Packets dropped for lack of a receive WQE (receive queue empty)"},
      {"hw_counters", "out_of_sequence", "provisioner_rdma_out_of_sequence_total",
       "Out-of-sequence packets received"},
      {"hw_counters", "packet_seq_err", "provisioner_rdma_packet_sequence_errors_total",
       "NAKs for packet sequence errors received"},
      {"hw_counters", "local_ack_timeout_err", "provisioner_rdma_local_ack_timeout_errors_total",
       "ACK timer expirations of QPs (retransmissions)"},
  };
  return kSpecs;
}

RdmaCounterCollector::RdmaCounterCollector(const std::string& root)
    : fs_(NewLocalHostFs(root)) {}

void RdmaCounterCollector::SetRails(std::map<std::string, std::string> rails) {
  std::lock_guard<std::mutex> lock(mu_);
  rails_ = std::move(rails);
}

std::vector<prom::MetricFamily> RdmaCounterCollector::Collect() const {
  std::map<std::string, std::string> rails;
  {
    std::lock_guard<std::mutex> lock(mu_);
    rails = rails_;
  }
  const auto& specs = RdmaCounterSpecs();
  std::vector<prom::MetricFamily> families(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    families[i].name = specs[i].metric;
    families[i].help = specs[i].help;
    families[i].type = prom::MetricType::Counter;
  }
  // The file names of each directory, read with the directory resolved once.
  std::map<std::string, std::vector<std::string>> names;
  std::map<std::string, std::vector<size_t>> index;
  for (size_t i = 0; i < specs.size(); ++i) {
    names[specs[i].dir].push_back(specs[i].file);
    index[specs[i].dir].push_back(i);
  }
  size_t ports_read = 0;
  for (const std::string& dev : ListDirIfPresent(*fs_, "/sys/class/infiniband")) {
    const std::string base = "/sys/class/infiniband/" + dev;
    std::vector<std::string> netdevs = ListDirIfPresent(*fs_, base + "/device/net");
    for (const std::string& port : ListDirIfPresent(*fs_, base + "/ports")) {
      if (ports_read++ >= kMaxRdmaPorts) return families;
      const std::string pdir = base + "/ports/" + port;
      std::string netdev = netdevs.empty() ? "" : netdevs.front();
      if (auto nd = fs_->ReadSmallFilesIn(pdir + "/gid_attrs/ndevs", {"0"}, kMaxCounterBytes);
          nd[0].ok()) {
        std::string_view name = *nd[0];
        while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.remove_suffix(1);
        if (!name.empty()) netdev = std::string(name);
      }
      auto rail = rails.find(dev);
      const prom::ClientMetric::Label labels[] = {
          {"device", dev},
          {"port", port},
          {"netdev", netdev},
          {"rail", rail == rails.end() ? "" : rail->second}};
      for (const auto& [dir, files] : names) {
        // One openat2, read and close a counter (no fstat: issue 37's
        // 50 ms scrape of 528 ports).
        const auto values = fs_->ReadSmallFilesIn(pdir + "/" + dir, files, kMaxCounterBytes);
        for (size_t k = 0; k < values.size(); ++k) {
          if (!values[k].ok()) continue;
          char* end = nullptr;
          const double v = std::strtod(values[k]->c_str(), &end);
          if (end == values[k]->c_str()) continue;
          prom::ClientMetric m;
          m.label.assign(std::begin(labels), std::end(labels));
          m.counter.value = v;
          families[index[dir][k]].metric.push_back(std::move(m));
        }
      }
    }
  }
  return families;
}

}  // namespace provisioner::agent
