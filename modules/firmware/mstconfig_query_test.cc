#include "modules/firmware/mstconfig_query.h"

#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

std::string Testdata(const std::string& name) {
  std::ifstream in("modules/firmware/testdata/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_TRUE(in.good() || in.eof()) << name;
  return ss.str();
}

TEST(MstconfigQuery, ConnectX5VpiWithDefaultCurrentNext) {
  auto q = ParseMstconfigQuery(Testdata("cx5-vpi-ib.query"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->device_type, "ConnectX5");
  EXPECT_EQ(q->name, "MCX556A-ECA_Ax");
  EXPECT_EQ(q->device, "0000:86:00.0");
  EXPECT_TRUE(q->has_default);
  EXPECT_TRUE(q->has_current);
  const FirmwareParam& lt = q->params.at("LINK_TYPE_P1");
  EXPECT_EQ(lt.default_value, "IB(1)");
  EXPECT_EQ(lt.current, "IB(1)");
  EXPECT_EQ(lt.next_boot, "IB(1)");
  EXPECT_EQ(q->params.at("NUM_OF_VFS").next_boot, "16");
  EXPECT_EQ(q->params.at("NUM_OF_VFS").default_value, "8");
  EXPECT_EQ(q->params.at("SRIOV_EN").next_boot, "True(1)");
  // A value wider than its column still lands in the right columns.
  EXPECT_EQ(q->params.at("PCI_ATOMIC_MODE").next_boot, "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)");
  EXPECT_EQ(q->params.at("LRO_LOG_TIMEOUT1").current, "7");
}

TEST(MstconfigQuery, PendingChangeShowsCurrentAndNextBoot) {
  auto q = ParseMstconfigQuery(Testdata("cx5-vpi-pending-eth.query"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->params.at("LINK_TYPE_P1").current, "IB(1)");
  EXPECT_EQ(q->params.at("LINK_TYPE_P1").next_boot, "ETH(2)");
  EXPECT_EQ(q->params.at("LINK_TYPE_P2").next_boot, "IB(1)");
}

TEST(MstconfigQuery, ConnectX6NextBootOnly) {
  auto q = ParseMstconfigQuery(Testdata("cx6-vpi-eth-sriov-off.query"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_FALSE(q->has_default);
  EXPECT_FALSE(q->has_current);
  EXPECT_EQ(q->device_type, "ConnectX6");
  EXPECT_FALSE(q->params.at("LINK_TYPE_P2").current.has_value());
  EXPECT_EQ(q->params.at("LINK_TYPE_P2").next_boot, "ETH(2)");
  EXPECT_EQ(q->params.at("SRIOV_EN").next_boot, "False(0)");
}

TEST(MstconfigQuery, ConnectX6LxHasNoLinkType) {
  auto q = ParseMstconfigQuery(Testdata("cx6lx-eth.query"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_TRUE(q->has_current);
  EXPECT_FALSE(q->has_default);
  EXPECT_EQ(q->params.count("LINK_TYPE_P1"), 0u);
  EXPECT_EQ(q->params.at("NUM_OF_VFS").current, "8");
}

TEST(MstconfigQuery, ConnectX7WideColumns) {
  auto q = ParseMstconfigQuery(Testdata("cx7-ib-wide.query"));
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->device_type, "ConnectX7");
  EXPECT_EQ(q->params.at("LINK_TYPE_P1").next_boot, "IB(1)");
  EXPECT_EQ(q->params.count("LINK_TYPE_P2"), 0u);
}

TEST(MstconfigQuery, Errors) {
  auto e = ParseMstconfigQuery("-E- Failed to open the device\n");
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("Failed to open the device"), std::string::npos);
  EXPECT_FALSE(ParseMstconfigQuery("").ok());
  EXPECT_FALSE(ParseMstconfigQuery("Configurations:   Next Boot\n").ok());  // no parameter
  auto short_line =
      ParseMstconfigQuery("Configurations:   Current   Next Boot\n         LINK_TYPE_P1  IB(1)\n");
  ASSERT_FALSE(short_line.ok());
  EXPECT_NE(short_line.status().message().find("line 2"), std::string::npos)
      << short_line.status().message();
  EXPECT_FALSE(ParseMstconfigQuery("Configurations:   Default\n   X 1\n").ok());  // no Next Boot
  // Found by the mstconfig fuzzer: a parameter listed twice made the
  // next-boot rewrite edit the wrong column. Refused at parse time now.
  auto twice = ParseMstconfigQuery(
      "Configurations:   Current   Next Boot\n"
      "         LINK_TYPE_P1  IB(1)  ETH(2)\n"
      "         LINK_TYPE_P1  IB(1)  IB(1)\n");
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("line 3: LINK_TYPE_P1 is listed twice"), std::string::npos)
      << twice.status().message();
}

TEST(MstconfigQuery, ValueNumbers) {
  EXPECT_EQ(MstconfigValueNumber("ETH(2)"), 2);
  EXPECT_EQ(MstconfigValueNumber("True(1)"), 1);
  EXPECT_EQ(MstconfigValueNumber("16"), 16);
  EXPECT_EQ(MstconfigValueNumber("0x10"), 16);
  EXPECT_FALSE(MstconfigValueNumber("N/A").has_value());
  EXPECT_FALSE(MstconfigValueNumber("Array[0..7]").has_value());
  EXPECT_EQ(LinkTypeValue("ib"), 1);
  EXPECT_EQ(LinkTypeValue("eth"), 2);
  EXPECT_FALSE(LinkTypeValue("ETH").has_value());
  EXPECT_EQ(LinkTypeName(3), "vpi");
}

// Found by the mstconfig fuzzer: a tab-indented parameter line was parsed
// but not rewritten by the `set` stand-in.
TEST(MstconfigQuery, SetNextBootOnTabIndentedLine) {
  const std::string text =
      "Configurations:   Default   Current   Next Boot\n"
      "\t        LINK_TYPE_P1   IB(1)   IB(1)   IB(1)\n";
  auto set = SetNextBootValues(text, {{"LINK_TYPE_P1", 2}});
  ASSERT_TRUE(set.ok()) << set.status().message();
  auto q = ParseMstconfigQuery(*set);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(MstconfigValueNumber(q->params.at("LINK_TYPE_P1").next_boot), 2) << *set;
}

TEST(MstconfigQuery, SetNextBootRewritesOnlyThatColumn) {
  const std::string before = Testdata("cx5-vpi-ib.query");
  auto after = SetNextBootValues(before, {{"LINK_TYPE_P1", 2}, {"NUM_OF_VFS", 32}});
  ASSERT_TRUE(after.ok()) << after.status().message();
  auto q = ParseMstconfigQuery(*after);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->params.at("LINK_TYPE_P1").next_boot, "ETH(2)");
  EXPECT_EQ(q->params.at("LINK_TYPE_P1").current, "IB(1)");
  EXPECT_EQ(q->params.at("NUM_OF_VFS").next_boot, "32");
  EXPECT_EQ(q->params.at("LINK_TYPE_P2").next_boot, "IB(1)");
  EXPECT_NE(after->find("*        LINK_TYPE_P1"), std::string::npos);
  // Setting it back restores the original bytes of that line.
  auto back = SetNextBootValues(*after, {{"LINK_TYPE_P1", 1}, {"NUM_OF_VFS", 16}});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, before);
  EXPECT_FALSE(SetNextBootValues(before, {{"NO_SUCH", 1}}).ok());
  EXPECT_FALSE(SetNextBootValues(before, {{"LINK_TYPE_P1", 7}}).ok());
}

TEST(MstconfigValue, MatchesAsMstconfigReadsASet) {
  EXPECT_TRUE(MstconfigValueMatches("True(1)", "true"));
  EXPECT_TRUE(MstconfigValueMatches("True(1)", "TRUE"));
  EXPECT_TRUE(MstconfigValueMatches("True(1)", "1"));
  EXPECT_FALSE(MstconfigValueMatches("True(1)", "false"));
  EXPECT_FALSE(MstconfigValueMatches("False(0)", "true"));
  EXPECT_TRUE(MstconfigValueMatches("ETH(2)", "eth"));
  EXPECT_TRUE(MstconfigValueMatches("ETH(2)", "2"));
  EXPECT_FALSE(MstconfigValueMatches("ETH(2)", "IB"));
  EXPECT_TRUE(MstconfigValueMatches("8", "8"));
  EXPECT_TRUE(MstconfigValueMatches("8", "0x8"));
  EXPECT_FALSE(MstconfigValueMatches("8", "16"));
  EXPECT_FALSE(MstconfigValueMatches("N/A", "0"));
  EXPECT_FALSE(MstconfigValueMatches("8", ""));
}

TEST(MstconfigValue, ResolvesWhatTheTextOrThePrintedValueTells) {
  EXPECT_EQ(ResolveMstconfigValue("ATS_ENABLED", "False(0)", "true"), 1);
  EXPECT_EQ(ResolveMstconfigValue("NUM_OF_VFS", "8", "0x10"), 16);
  EXPECT_EQ(ResolveMstconfigValue("CQE_COMPRESSION", "BALANCED(0)", "balanced"), 0);
  EXPECT_EQ(ResolveMstconfigValue("LINK_TYPE_P1", "IB(1)", "ETH"), 2);
  EXPECT_FALSE(ResolveMstconfigValue("CQE_COMPRESSION", "BALANCED(0)", "AGGRESSIVE"));
}

}  // namespace
}  // namespace provisioner
