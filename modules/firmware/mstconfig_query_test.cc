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

// mstflint >= 4.25 (4.26 on without --read_only) prints "RO" between the
// diff mark and the name; the text and the -j JSON (>= 4.31) of one card
// read the same.
TEST(MstconfigQuery, ReadOnlyColumnAndJsonOfOneCard) {
  auto text = ParseMstconfigQuery(Testdata("cx7-eth-ro.query"));
  ASSERT_TRUE(text.ok()) << text.status().message();
  auto js = ParseMstconfigQuery(Testdata("cx7-eth-ro.json.query"));
  ASSERT_TRUE(js.ok()) << js.status().message();
  for (const MstconfigQuery* q : {&*text, &*js}) {
    EXPECT_EQ(q->device_type, "ConnectX7");
    EXPECT_EQ(q->device, "0000:18:00.0");
    EXPECT_TRUE(q->has_default);
    EXPECT_TRUE(q->has_current);
    const FirmwareParam& pf = q->params.at("NUM_OF_PF");
    EXPECT_TRUE(pf.read_only);
    EXPECT_EQ(pf.next_boot, "1");
    EXPECT_TRUE(q->params.at("NUM_OF_VL_P1").read_only);
    EXPECT_EQ(q->params.at("NUM_OF_VL_P1").next_boot, "_4_VLs(3)");
    EXPECT_FALSE(q->params.at("LINK_TYPE_P1").read_only);
    EXPECT_EQ(q->params.at("LINK_TYPE_P1").next_boot, "ETH(2)");
    EXPECT_EQ(q->params.at("LINK_TYPE_P1").default_value, "IB(1)");
    EXPECT_EQ(q->params.at("NUM_OF_VFS").current, "16");
    EXPECT_EQ(q->params.at("ROCE_CC_PRIO_MASK_P1").next_boot, "255");
  }
  ASSERT_EQ(text->params.size(), js->params.size());
  for (const auto& [name, p] : text->params) {
    const FirmwareParam& o = js->params.at(name);
    EXPECT_EQ(p.next_boot, o.next_boot) << name;
    EXPECT_EQ(p.current, o.current) << name;
    EXPECT_EQ(p.default_value, o.default_value) << name;
    EXPECT_EQ(p.read_only, o.read_only) << name;
  }
  // With the diff mark, too.
  auto marked =
      ParseMstconfigQuery("Configurations:   Current   Next Boot\n*RO     NUM_OF_PF    1    2\n");
  ASSERT_TRUE(marked.ok()) << marked.status().message();
  EXPECT_TRUE(marked->params.at("NUM_OF_PF").read_only);
  EXPECT_EQ(marked->params.at("NUM_OF_PF").next_boot, "2");
}

TEST(MstconfigQuery, SetNextBootKeepsTheReadOnlyColumnAndJson) {
  auto text = SetNextBootValues(Testdata("cx7-eth-ro.query"), {{"LINK_TYPE_P1", 1}});
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_NE(text->find("*       LINK_TYPE_P1"), std::string::npos) << *text;
  EXPECT_NE(text->find(" RO     NUM_OF_PF"), std::string::npos);
  auto js = SetNextBootValues(Testdata("cx7-eth-ro.json.query"),
                              {{"LINK_TYPE_P1", 1}, {"NUM_OF_VFS", 8}});
  ASSERT_TRUE(js.ok()) << js.status().message();
  auto q = ParseMstconfigQuery(*js);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->params.at("LINK_TYPE_P1").next_boot, "IB(1)");
  EXPECT_EQ(q->params.at("NUM_OF_VFS").next_boot, "8");
  EXPECT_TRUE(q->params.at("NUM_OF_PF").read_only);
}

TEST(MstconfigQuery, JsonErrorsNameWhere) {
  auto bad = ParseMstconfigQuery("{\n  \"Device #1\": {\n    \"device\": 0000\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("not JSON at line 3 column"), std::string::npos)
      << bad.status().message();
  auto two = ParseMstconfigQuery(R"({"Device #1": {}, "Device #2": {}})");
  ASSERT_FALSE(two.ok());
  EXPECT_NE(two.status().message().find("one device"), std::string::npos);
  auto value = ParseMstconfigQuery(
      R"({"Device #1": {"tlv_configuration": {"SRIOV_EN": {"next_value": true}}}})");
  ASSERT_FALSE(value.ok());
  EXPECT_NE(value.status().message().find(
                "\"Device #1\".tlv_configuration.SRIOV_EN.next_value: want a number or a string"),
            std::string::npos)
      << value.status().message();
  auto ro = ParseMstconfigQuery(
      R"({"Device #1": {"tlv_configuration": {"X": {"next_value": 1, "read_only": 1}}}})");
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("X.read_only: want true or false"), std::string::npos);
}

// The stand-in reveals what ADVANCED_PCI_SETTINGS=1 lists (mlxconfig_host.db:
// MAX_ACC_OUT_READ, FORCE_ETH_PCI_SUBCLASS, IBM_CAPI_EN), in its layout.
TEST(MstconfigQuery, AdvancedPciSettingsRevealsItsParameters) {
  const std::string before = Testdata("cx7-eth-ro.query");
  auto set = SetNextBootValues(before, {{"ADVANCED_PCI_SETTINGS", 1}});
  ASSERT_TRUE(set.ok()) << set.status().message();
  auto q = ParseMstconfigQuery(*set);
  ASSERT_TRUE(q.ok()) << q.status().message() << *set;
  EXPECT_EQ(q->params.at("ADVANCED_PCI_SETTINGS").next_boot, "True(1)");
  EXPECT_EQ(q->params.at("MAX_ACC_OUT_READ").next_boot, "0");
  EXPECT_EQ(q->params.at("MAX_ACC_OUT_READ").default_value, "0");
  EXPECT_FALSE(q->params.at("MAX_ACC_OUT_READ").read_only);
  EXPECT_EQ(q->params.at("IBM_CAPI_EN").current, "False(0)");
  EXPECT_NE(
      set->find("\n        MAX_ACC_OUT_READ                            0                    0"),
      std::string::npos)
      << *set;
  auto more = SetNextBootValues(*set, {{"MAX_ACC_OUT_READ", 32}});
  ASSERT_TRUE(more.ok()) << more.status().message();
  EXPECT_EQ(ParseMstconfigQuery(*more)->params.at("MAX_ACC_OUT_READ").next_boot, "32");
  EXPECT_EQ(HiddenPciParamDefault("NUM_OF_VFS"), std::nullopt);
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
