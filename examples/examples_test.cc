// Every examples/*.yaml loads with no diagnostic at all (not even a warning).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

std::vector<std::string> ExampleFiles() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("examples", ec)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ExamplesTest, TheGuidesScenariosArePresent) {
  std::vector<std::string> files = ExampleFiles();
  for (const char* name : {"examples/roce-shared-macvlan.yaml", "examples/roce-sriov.yaml",
                           "examples/ib-sriov.yaml", "examples/ipoib.yaml",
                           "examples/rails-8gpu.yaml"}) {
    EXPECT_NE(std::find(files.begin(), files.end(), name), files.end()) << name;
  }
}

TEST(ExamplesTest, EveryExampleLoadsCleanly) {
  std::vector<std::string> files = ExampleFiles();
  ASSERT_FALSE(files.empty()) << "no examples/*.yaml in the runfiles";
  for (const auto& file : files) {
    LoadResult r = LoadDesiredStateFromFile(file);
    for (const auto& d : r.diagnostics) {
      ADD_FAILURE() << FormatDiagnostic(file, r.marks, d);
    }
    EXPECT_TRUE(r.state.has_value()) << file;
  }
}

TEST(ExamplesTest, QuickstartSelectsTheConnectX5Pf) {
  LoadResult r = LoadDesiredStateFromFile("examples/roce-sriov.yaml");
  ASSERT_TRUE(r.state.has_value());
  const DesiredState& s = *r.state;
  ASSERT_EQ(s.nics.size(), 1u);
  EXPECT_EQ(s.nics[0].selector.root_devices, std::vector<std::string>{"0000:af:00.0"});
  EXPECT_EQ(s.nics[0].num_vfs, 12);
  EXPECT_EQ(s.nics[0].is_rdma, true);
  EXPECT_EQ(s.rdma->netns_mode, "exclusive");
  ASSERT_EQ(s.multus_configs.size(), 1u);
  EXPECT_EQ(s.multus_configs[0].cni_type, "sriov");
  EXPECT_EQ(s.multus_configs[0].rdma_resource_inject, "rdma-network");
}

TEST(ExamplesTest, RailsHaveOneNicPoolAndConfigPerGpu) {
  LoadResult r = LoadDesiredStateFromFile("examples/rails-8gpu.yaml");
  ASSERT_TRUE(r.state.has_value());
  const DesiredState& s = *r.state;
  ASSERT_EQ(s.nics.size(), 8u);
  ASSERT_EQ(s.ip_pools.size(), 8u);
  ASSERT_EQ(s.multus_configs.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    std::string n = std::to_string(i + 1);
    EXPECT_EQ(s.nics[i].name, "gpu" + n + "-nic");
    EXPECT_EQ(s.nics[i].resource_name, "gpu" + n + "sriov");
    EXPECT_EQ(s.nics[i].num_vfs, 12);
    EXPECT_EQ(s.ip_pools[i].subnet, "172.16.1" + n + ".0/24");
    EXPECT_EQ(s.multus_configs[i].nic, "gpu" + n + "-nic");
  }
  ASSERT_EQ(s.kernel_modules.size(), 3u);
  EXPECT_EQ(s.kernel_modules[2].name, "nvidia_peermem");
  EXPECT_FALSE(s.kernel_modules[2].required);
}

TEST(ExamplesTest, GpudirectTunedSetsAcsMaxReadRequestAndAts) {
  LoadResult r = LoadDesiredStateFromFile("examples/gpudirect-tuned.yaml");
  ASSERT_TRUE(r.state.has_value());
  const DesiredState& s = *r.state;
  ASSERT_TRUE(s.pcie.has_value());
  EXPECT_EQ(s.pcie->disable_acs, "gpuNicPaths");
  ASSERT_EQ(s.nics.size(), 1u);
  ASSERT_TRUE(s.nics[0].pcie.has_value());
  EXPECT_EQ(s.nics[0].pcie->max_read_request, 4096);
  ASSERT_EQ(s.nics[0].firmware.count("ATS_ENABLED"), 1u);
  EXPECT_EQ(s.nics[0].firmware.at("ATS_ENABLED").text, "true");
  EXPECT_EQ(s.nics[0].selector.device_id, "1021");  // the ConnectX-7 rail NICs
}

}  // namespace
}  // namespace provisioner
