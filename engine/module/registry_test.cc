#include "engine/module/registry.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

using Names = std::vector<std::string>;

TEST(OrderModulesTest, AfterItsDependenciesThenByName) {
  auto order = OrderModules({{"vf", {"sriov"}},
                             {"topology", {"pci", "link"}},
                             {"sriov", {"pci"}},
                             {"link", {"pci", "sriov", "vf"}},
                             {"kmod", {"pci"}},
                             {"pci", {}}});
  ASSERT_TRUE(order.ok()) << order.status().message();
  EXPECT_EQ(*order, (Names{"pci", "kmod", "sriov", "vf", "link", "topology"}));
}

TEST(OrderModulesTest, AnUnknownNameIsAnError) {
  auto order = OrderModules({{"pci", {}}, {"vf", {"sriov"}}});
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(order.status().message(), "module vf runs after sriov, which is not registered");
}

TEST(OrderModulesTest, ACycleIsAnError) {
  auto order = OrderModules({{"pci", {}}, {"a", {"pci", "b"}}, {"b", {"a"}}, {"c", {"b"}}});
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().message(), "modules in a cycle of `after` (or after one): a, b, c");
}

TEST(OrderModulesTest, ASelfDependencyIsACycle) {
  EXPECT_FALSE(OrderModules({{"pci", {"pci"}}}).ok());
}

TEST(OrderModulesTest, TwoModulesOfOneNameAreAnError) {
  auto order = OrderModules({{"pci", {}}, {"pci", {}}});
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.status().message(), "module pci is registered twice");
}

TEST(OrderModulesTest, RepeatedNamesInAfterCountOnce) {
  auto order = OrderModules({{"pci", {}}, {"vf", {"pci", "pci"}}});
  ASSERT_TRUE(order.ok()) << order.status().message();
  EXPECT_EQ(*order, (Names{"pci", "vf"}));
}

}  // namespace
}  // namespace provisioner
