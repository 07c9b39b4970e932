#include "engine/agent/rdma_counters.h"

#include <cstdlib>
#include <utility>

#include "engine/base/strings.h"

namespace provisioner::agent {

namespace prom = ::prometheus;

namespace {
// A counter is a u64 in decimal and a newline (21 bytes).
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
  ports_.reset();
}

void RdmaCounterCollector::ForgetPorts() {
  std::lock_guard<std::mutex> lock(mu_);
  ports_.reset();
}

std::vector<RdmaCounterCollector::Port> RdmaCounterCollector::ListPorts() const {
  std::vector<Port> ports;
  for (const std::string& dev : ListDirIfPresent(*fs_, "/sys/class/infiniband")) {
    const std::string base = "/sys/class/infiniband/" + dev;
    std::vector<std::string> netdevs = ListDirIfPresent(*fs_, base + "/device/net");
    for (const std::string& port : ListDirIfPresent(*fs_, base + "/ports")) {
      if (ports.size() >= kMaxRdmaPorts) return ports;
      const std::string pdir = base + "/ports/" + port;
      std::string netdev = netdevs.empty() ? "" : netdevs.front();
      if (auto nd = fs_->ReadAttr(pdir + "/gid_attrs/ndevs/0"); nd.ok() && !nd->empty()) {
        netdev = *nd;
      }
      auto rail = rails_.find(dev);
      ports.push_back({pdir,
                       {{"device", dev},
                        {"port", port},
                        {"netdev", netdev},
                        {"rail", rail == rails_.end() ? "" : rail->second}}});
    }
  }
  return ports;
}

std::vector<prom::MetricFamily> RdmaCounterCollector::Collect() const {
  // One scrape at a time: the ports and their labels are listed at the
  // first scrape after a reconcile (SetRails, ForgetPorts) and kept, so a
  // scrape reads the counters alone (issue 37: 528 ports in < 50 ms).
  std::lock_guard<std::mutex> lock(mu_);
  if (!ports_) ports_ = ListPorts();
  const auto& specs = RdmaCounterSpecs();
  std::vector<prom::MetricFamily> families(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    families[i].name = specs[i].metric;
    families[i].help = specs[i].help;
    families[i].type = prom::MetricType::Counter;
    families[i].metric.reserve(ports_->size());
  }
  // The file names of each directory, read with the directory resolved once.
  std::map<std::string, std::vector<std::string>> names;
  std::map<std::string, std::vector<size_t>> index;
  for (size_t i = 0; i < specs.size(); ++i) {
    names[specs[i].dir].push_back(specs[i].file);
    index[specs[i].dir].push_back(i);
  }
  for (const Port& port : *ports_) {
    for (const auto& [dir, files] : names) {
      // One openat2, read and close a counter: no fstat.
      const auto values = fs_->ReadSmallFilesIn(port.dir + "/" + dir, files, kMaxCounterBytes);
      const std::vector<size_t>& family_of = index.at(dir);
      for (size_t k = 0; k < values.size(); ++k) {
        if (!values[k].ok()) continue;
        char* end = nullptr;
        const double v = std::strtod(values[k]->c_str(), &end);
        if (end == values[k]->c_str()) continue;
        prom::ClientMetric m;
        m.label = port.labels;
        m.counter.value = v;
        families[family_of[k]].metric.push_back(std::move(m));
      }
    }
  }
  return families;
}

}  // namespace provisioner::agent
