#include "modules/firmware/mstconfig_query.h"

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "test/support/files.h"

namespace provisioner {
namespace {

std::string Testdata(const std::string& name) {
  std::string text = testing::ReadFile("modules/firmware/testdata/" + name);
  EXPECT_NE(text, "") << name;
  return text;
}

// One captured `mstconfig query` and what it must parse into.
using Column = std::map<std::string, std::optional<std::string>>;  // nullopt: no value there
struct QueryCase {
  std::string name, file;
  std::string device_type, card_name, device;  // "": not checked
  std::optional<bool> has_default, has_current;
  Column default_value, current, next_boot;  // parameter -> value in that column
  std::vector<std::string> absent;           // parameters not in the query
};

void PrintTo(const QueryCase& c, std::ostream* os) { *os << c.file; }

class MstconfigCaptureTest : public ::testing::TestWithParam<QueryCase> {};

TEST_P(MstconfigCaptureTest, Parses) {
  const QueryCase& tc = GetParam();
  auto q = ParseMstconfigQuery(Testdata(tc.file));
  ASSERT_TRUE(q.ok()) << q.status().message();
  if (!tc.device_type.empty()) {
    EXPECT_EQ(q->device_type, tc.device_type);
  }
  if (!tc.card_name.empty()) {
    EXPECT_EQ(q->name, tc.card_name);
  }
  if (!tc.device.empty()) {
    EXPECT_EQ(q->device, tc.device);
  }
  if (tc.has_default) {
    EXPECT_EQ(q->has_default, *tc.has_default);
  }
  if (tc.has_current) {
    EXPECT_EQ(q->has_current, *tc.has_current);
  }
  for (const std::string& param : tc.absent) {
    EXPECT_EQ(q->params.count(param), 0u) << param;
  }
  using Read = std::optional<std::string> (*)(const FirmwareParam&);
  const std::pair<const Column*, Read> columns[] = {
      {&tc.default_value, [](const FirmwareParam& p) { return p.default_value; }},
      {&tc.current, [](const FirmwareParam& p) { return p.current; }},
      {&tc.next_boot, [](const FirmwareParam& p) { return std::optional(p.next_boot); }}};
  for (const auto& [want, read] : columns) {
    for (const auto& [param, value] : *want) {
      auto it = q->params.find(param);
      ASSERT_NE(it, q->params.end()) << param;
      EXPECT_EQ(read(it->second), value) << param;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Captures, MstconfigCaptureTest,
                         ::testing::Values(
                             // Default, current and next boot columns; a value wider than its
                             // column (PCI_ATOMIC_MODE) still lands in the right columns.
                             QueryCase{
                                 "ConnectX5VpiWithDefaultCurrentNext",
                                 "cx5-vpi-ib.query",
                                 "ConnectX5",
                                 "MCX556A-ECA_Ax",
                                 "0000:86:00.0",
                                 true,
                                 true,
                                 {{"LINK_TYPE_P1", "IB(1)"}, {"NUM_OF_VFS", "8"}},
                                 {{"LINK_TYPE_P1", "IB(1)"}, {"LRO_LOG_TIMEOUT1", "7"}},
                                 {{"LINK_TYPE_P1", "IB(1)"},
                                  {"NUM_OF_VFS", "16"},
                                  {"SRIOV_EN", "True(1)"},
                                  {"PCI_ATOMIC_MODE", "PCI_ATOMIC_DISABLED_EXT_ATOMIC_ENABLED(0)"}},
                                 {}},
                             QueryCase{"PendingChangeShowsCurrentAndNextBoot",
                                       "cx5-vpi-pending-eth.query",
                                       "",
                                       "",
                                       "",
                                       std::nullopt,
                                       std::nullopt,
                                       {},
                                       {{"LINK_TYPE_P1", "IB(1)"}},
                                       {{"LINK_TYPE_P1", "ETH(2)"}, {"LINK_TYPE_P2", "IB(1)"}},
                                       {}},
                             QueryCase{"ConnectX6NextBootOnly",
                                       "cx6-vpi-eth-sriov-off.query",
                                       "ConnectX6",
                                       "",
                                       "",
                                       false,
                                       false,
                                       {},
                                       {{"LINK_TYPE_P2", std::nullopt}},
                                       {{"LINK_TYPE_P2", "ETH(2)"}, {"SRIOV_EN", "False(0)"}},
                                       {}},
                             QueryCase{"ConnectX6LxHasNoLinkType",
                                       "cx6lx-eth.query",
                                       "",
                                       "",
                                       "",
                                       false,
                                       true,
                                       {},
                                       {{"NUM_OF_VFS", "8"}},
                                       {},
                                       {"LINK_TYPE_P1"}},
                             QueryCase{"ConnectX7WideColumns",
                                       "cx7-ib-wide.query",
                                       "ConnectX7",
                                       "",
                                       "",
                                       std::nullopt,
                                       std::nullopt,
                                       {},
                                       {},
                                       {{"LINK_TYPE_P1", "IB(1)"}},
                                       {"LINK_TYPE_P2"}}),
                         [](const ::testing::TestParamInfo<QueryCase>& i) { return i.param.name; });

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
  EXPECT_NE(twice.status().message().find("line 3: LINK_TYPE_P1 is listed twice"),
            std::string::npos)
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
  // (printed value, value set, whether mstconfig reads them as the same)
  const std::tuple<const char*, const char*, bool> kCases[] = {{"True(1)", "true", true},
                                                               {"True(1)", "TRUE", true},
                                                               {"True(1)", "1", true},
                                                               {"True(1)", "false", false},
                                                               {"False(0)", "true", false},
                                                               {"ETH(2)", "eth", true},
                                                               {"ETH(2)", "2", true},
                                                               {"ETH(2)", "IB", false},
                                                               {"8", "8", true},
                                                               {"8", "0x8", true},
                                                               {"8", "16", false},
                                                               {"N/A", "0", false},
                                                               {"8", "", false}};
  for (const auto& [printed, set, same] : kCases) {
    EXPECT_EQ(MstconfigValueMatches(printed, set), same) << printed << " / " << set;
  }
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
