// The registered modules' declared `after` names give the order discovery,
// plan and doctor have always had (engine/module/registry.h).
#include <string>
#include <vector>

#include "engine/module/registry.h"
#include "gtest/gtest.h"

namespace provisioner {
namespace {

TEST(ModuleOrderTest, EveryModuleInItsPlace) {
  auto order = ModuleRegistry::Order();
  ASSERT_TRUE(order.ok()) << order.status().message();
  EXPECT_EQ(*order, (std::vector<std::string>{"pci", "firmware", "kernel", "kmod", "rdma", "sriov",
                                              "eswitch", "vf", "link", "ipoib", "names", "roce",
                                              "sriov-operator", "topology", "health", "pcie",
                                              "railnet"}));
  EXPECT_EQ(ModuleRegistry::Names(), *order);
  auto modules = ModuleRegistry::CreateAll();
  ASSERT_EQ(modules.size(), order->size());
  for (size_t i = 0; i < modules.size(); ++i) EXPECT_EQ(modules[i]->name(), (*order)[i]);
}

}  // namespace
}  // namespace provisioner
