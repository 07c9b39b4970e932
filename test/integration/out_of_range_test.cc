// Values out of their kernel range in a tree (issue 19, item 7): each is a
// warning on that function, and the rest of the host is still discovered.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

const char kPf0[] = "/sys/bus/pci/devices/0000:af:00.0";

const json* Nic(const json& j, const std::string& bdf) {
  for (const json& n : j["nics"]) {
    if (n["pciAddress"] == bdf) return &n;
  }
  return nullptr;
}

std::string Warnings(const json& j) { return j["warnings"].dump(); }

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

struct BadCount {
  const char* file;
  const char* value;
  const char* range;
};

class OutOfRangeCountTest : public ::testing::TestWithParam<BadCount> {};

// A count that is not a number in the kernel's range: that PF's SR-IOV facts
// are left out with a warning; the other PF keeps its own.
TEST_P(OutOfRangeCountTest, IsAWarningOnThatFunction) {
  const BadCount& p = GetParam();
  const std::string root = ExtractHost("cx5-roce");
  Write(root + kPf0 + "/" + p.file, std::string(p.value) + "\n");
  json j = DiscoverJson(root);
  const json* pf0 = Nic(j, "0000:af:00.0");
  const json* pf1 = Nic(j, "0000:af:00.1");
  ASSERT_NE(pf0, nullptr);
  ASSERT_NE(pf1, nullptr);
  EXPECT_TRUE(!pf0->contains("sriov") || (*pf0)["sriov"].is_null()) << pf0->dump();
  EXPECT_EQ((*pf1)["sriov"]["totalVfs"], 127);
  EXPECT_NE(Warnings(j).find(std::string("0000:af:00.0: SR-IOV left out: ") + kPf0 + "/" + p.file +
                             " reads \\\"" + p.value + "\\\", not a number in the kernel's range " +
                             p.range),
            std::string::npos)
      << Warnings(j);
  EXPECT_FALSE(j["rdmaDevices"].empty());  // the rest of the host is there
}

INSTANTIATE_TEST_SUITE_P(
    Counts, OutOfRangeCountTest,
    ::testing::Values(BadCount{"sriov_numvfs", "99999999999999999999", "0..127"},
                      BadCount{"sriov_numvfs", "128", "0..127"},
                      BadCount{"sriov_totalvfs", "-5", "0..65535"},
                      BadCount{"sriov_totalvfs", "0x10000", "0..65535"}));

// discover of the cx5-roce-vfs tree with PF 0's link `virtfn` re-pointed
// at `target`.
json DiscoverWithVirtfn(const std::string& virtfn, const std::string& target) {
  const std::string root = ExtractHost("cx5-roce-vfs");
  const std::string link = root + kPf0 + "/" + virtfn;
  EXPECT_EQ(::unlink(link.c_str()), 0);
  EXPECT_EQ(::symlink(target.c_str(), link.c_str()), 0);
  return DiscoverJson(root);
}

TEST(OutOfRangeTest, VirtfnLinkToThePfItselfIsNoVf) {
  json j = DiscoverWithVirtfn("virtfn1", "../0000:af:00.0");
  const json* pf0 = Nic(j, "0000:af:00.0");
  ASSERT_NE(pf0, nullptr);
  for (const json& vf : (*pf0)["sriov"]["vfs"]) EXPECT_NE(vf["pciAddress"], "0000:af:00.0");
  EXPECT_EQ((*pf0)["sriov"]["vfs"].size(), 3u);
  EXPECT_NE(Warnings(j).find("virtfn1 -> \\\"0000:af:00.0\\\" is not a VF of it (the PF itself)"),
            std::string::npos)
      << Warnings(j);
}

TEST(OutOfRangeTest, VirtfnLinkLeavingTheTreeIsNoVf) {
  json j = DiscoverWithVirtfn("virtfn0", "../../../../../../../../../../etc");
  const json* pf0 = Nic(j, "0000:af:00.0");
  ASSERT_NE(pf0, nullptr);
  for (const json& vf : (*pf0)["sriov"]["vfs"]) EXPECT_NE(vf["pciAddress"], "etc");
  EXPECT_NE(Warnings(j).find("virtfn0 -> "), std::string::npos) << Warnings(j);
  EXPECT_NE(Warnings(j).find("not a PCI function): skipped"), std::string::npos) << Warnings(j);
}

// A capture without sys/bus/pci still has its RDMA facts.
TEST(OutOfRangeTest, TreeWithoutPciKeepsItsRdmaFacts) {
  const std::string root = ExtractHost("cx5-roce");
  std::filesystem::remove_all(root + "/sys/bus/pci");
  json j = DiscoverJson(root);
  EXPECT_EQ(j["nics"], json::array());
  EXPECT_FALSE(j["rdmaDevices"].empty()) << j.dump(2).substr(0, 2000);
  EXPECT_NE(Warnings(j).find("/sys/bus/pci/devices is not in the tree"), std::string::npos);
}

// A missing string attribute is null, as a missing number is.
TEST(OutOfRangeTest, MissingStringsAreNullLikeMissingNumbers) {
  const std::string root = ExtractHost("cx5-roce");
  std::filesystem::remove(root + "/sys/class/infiniband/mlx5_0/node_guid");
  std::filesystem::remove(root + "/sys/class/infiniband/mlx5_0/ports/1/lid");
  json j = DiscoverJson(root);
  bool seen = false;
  for (const json& d : j["rdmaDevices"]) {
    if (d["name"] != "mlx5_0") continue;
    seen = true;
    EXPECT_TRUE(d["nodeGuid"].is_null()) << d.dump();
    EXPECT_TRUE(d["ports"][0]["lid"].is_null()) << d.dump();
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace provisioner::testing
