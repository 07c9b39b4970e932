#include "engine/output/facts_output.h"

#include "gtest/gtest.h"

namespace provisioner {
namespace {

using nlohmann::json;

TEST(FactsJsonTest, NicsAreFoundByAddressAfterTheyAreAdded) {
  json doc;
  FactsJson out(&doc);
  EXPECT_EQ(out.Nic("0000:af:00.0"), nullptr);
  out.AddNic("0000:af:00.0", {{"pciAddress", "0000:af:00.0"}});
  out.AddNic("0000:af:00.1", {{"pciAddress", "0000:af:00.1"}});
  ASSERT_NE(out.Nic("0000:af:00.1"), nullptr);
  (*out.Nic("0000:af:00.1"))["sriov"] = nullptr;
  EXPECT_EQ(doc["nics"].size(), 2u);
  EXPECT_EQ(doc["nics"][1], json({{"pciAddress", "0000:af:00.1"}, {"sriov", nullptr}}));
  EXPECT_FALSE(doc["nics"][0].contains("sriov"));
  EXPECT_EQ(out.Nic("0000:af:00.2"), nullptr);
}

TEST(FactsJsonTest, StringListAndJoin) {
  EXPECT_EQ(StringList({}), json::array());
  EXPECT_EQ(StringList({"a", "b"}), json({"a", "b"}));
  EXPECT_EQ(JoinNames({}, "-"), "-");
  EXPECT_EQ(JoinNames({"eth0"}), "eth0");
  EXPECT_EQ(JoinNames({"eth0", "mlx5_0"}, "-"), "eth0,mlx5_0");
}

TEST(TextTableTest, ColumnsAlignedTwoSpacesApartTrailingSpaceTrimmed) {
  EXPECT_EQ(TextTable({}), "");
  EXPECT_EQ(TextTable({{"PCI", "ID", "NAME"}, {"0000:af:00.0", "15b3:1017", ""}}),
            "PCI           ID         NAME\n"
            "0000:af:00.0  15b3:1017\n");
  EXPECT_EQ(TextTable({{"A", "B"}, {"long", "x"}}, "  "),
            "  A     B\n"
            "  long  x\n");
}

}  // namespace
}  // namespace provisioner
