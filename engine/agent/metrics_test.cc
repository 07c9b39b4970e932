// The agent's Prometheus endpoint: the exposer on 127.0.0.1 (port 0), the
// agent's families after a Record, and the RDMA port counters of a small
// tree read at scrape time. Scrapes come from other threads while Record
// runs (the exposer's threads): run under --config=tsan too.
#include "engine/agent/metrics.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "test/integration/agent_harness.h"

namespace provisioner::agent {
namespace {

using provisioner::testing::ScrapeMetrics;

void Put(const std::string& path, const std::string& content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << content;
}

TEST(MetricsTest, LoopbackOnlyUnlessGiven) {
  EXPECT_TRUE(CheckMetricsAddress("127.0.0.1:9814", false).ok());
  EXPECT_TRUE(CheckMetricsAddress("[::1]:9814", false).ok());
  EXPECT_TRUE(CheckMetricsAddress("localhost:9814", false).ok());
  Status remote = CheckMetricsAddress("0.0.0.0:9814", false);
  EXPECT_FALSE(remote.ok());
  EXPECT_NE(remote.message().find("not a loopback address"), std::string::npos);
  EXPECT_TRUE(CheckMetricsAddress("0.0.0.0:9814", true).ok());
  EXPECT_FALSE(CheckMetricsAddress("9814", true).ok());
}

TEST(MetricsTest, AgentFamiliesAndRdmaCountersAtScrapeTime) {
  const std::string root = std::string(std::getenv("TEST_TMPDIR")) + "/metrics-root";
  const std::string port = root + "/sys/class/infiniband/mlx5_0/ports/1";
  Put(port + "/counters/port_xmit_data", "1234\n");
  Put(port + "/counters/symbol_error", "0\n");
  Put(port + "/hw_counters/np_cnp_sent", "77\n");
  Put(port + "/hw_counters/out_of_sequence", "5\n");
  Put(port + "/gid_attrs/ndevs/0", "ens1f0np0\n");
  auto metrics = StartMetrics("127.0.0.1:0", root);
  ASSERT_TRUE(metrics.ok()) << metrics.status().message();
  const std::string address = (*metrics)->address();
  ASSERT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;

  // Scrapes from another thread while the loop records.
  std::string during;
  std::thread scraper([&] { during = ScrapeMetrics(address); });
  ReconcileResult r;
  r.result = "applied";
  r.drift_detected = {{"sriov", 1}};
  r.drift_fixed = {{"sriov", 1}};
  r.applied_any = true;
  r.apply_duration = std::chrono::milliseconds(400);
  r.pending.push_back({"sriov/0000:af:00.1/numVfs", "replace", "never", 4, 8});
  (*metrics)->Record(r, 1795913504.5);
  scraper.join();
  EXPECT_NE(during.find("200 OK"), std::string::npos) << during;

  const std::string page = ScrapeMetrics(address);
  for (const char* want : {
           "provisioner_agent_reconcile_runs_total{result=\"applied\"} 1",
           "provisioner_agent_drift_fixed_total{module=\"sriov\"} 1",
           "provisioner_agent_pending_changes{disruption=\"replace\"} 1",
           "provisioner_agent_pending_changes{disruption=\"live\"} 0",
           "provisioner_agent_last_success_timestamp_seconds 1795913504.5",
           "provisioner_agent_apply_duration_seconds_count 1",
           "provisioner_rdma_port_transmit_data_words_total{device=\"mlx5_0\",port=\"1\","
           "netdev=\"ens1f0np0\",rail=\"\"} 1234",
           "provisioner_rdma_np_cnp_sent_total{device=\"mlx5_0\",port=\"1\",netdev=\"ens1f0np0\","
           "rail=\"\"} 77",
           "provisioner_rdma_out_of_sequence_total{device=\"mlx5_0\",port=\"1\",netdev="
           "\"ens1f0np0\","
           "rail=\"\"} 5",
       }) {
    EXPECT_NE(page.find(want), std::string::npos) << want << "\n" << page;
  }
  // Counters this port does not have are left out, not reported as 0.
  EXPECT_EQ(page.find("provisioner_rdma_rp_cnp_handled_total{"), std::string::npos);
  // Read at scrape time: a new value shows in the next scrape.
  Put(port + "/hw_counters/np_cnp_sent", "78\n");
  EXPECT_NE(ScrapeMetrics(address).find("rail=\"\"} 78"), std::string::npos);
  // The ports and their labels are listed again after a reconcile, not at
  // every scrape: a device that comes shows after the next Record.
  Put(root + "/sys/class/infiniband/mlx5_1/ports/1/counters/port_xmit_data", "9\n");
  EXPECT_EQ(ScrapeMetrics(address).find("device=\"mlx5_1\""), std::string::npos);
  (*metrics)->Record(r, 1795913505.5);
  EXPECT_NE(ScrapeMetrics(address).find("device=\"mlx5_1\",port=\"1\",netdev=\"\",rail=\"\"} 9"),
            std::string::npos);
}

}  // namespace
}  // namespace provisioner::agent
