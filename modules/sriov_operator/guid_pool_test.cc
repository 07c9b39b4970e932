// The operator's IB GUID pool: planned entries hold exactly the GUIDs the vf
// module sets, other entries survive, a file in another spelling of the same
// GUIDs is converged, a malformed file is an error naming it.
#include "modules/sriov_operator/guid_pool.h"

#include <map>

#include "gtest/gtest.h"
#include "modules/vf/vf_planner.h"
#include "test/support/fake_pci_module.h"

namespace provisioner {
namespace {

using nlohmann::json;

constexpr char kPf[] = "0000:86:00.0";
constexpr char kPfGuid[] = "0c42:a103:005b:7c2e";  // sysfs node_guid form

HostFacts IbHost(int num_vfs, std::optional<std::string> pool) {
  HostFacts f;
  PciFunction pf = testing::NetworkPf(kPf, "ibs5f0", "15b3", "1017", testing::kInfinibandClass);
  SriovInfo s;
  s.total_vfs = 16;
  s.num_vfs = num_vfs;
  s.ib_node_guid = kPfGuid;
  pf.sriov = s;
  f.pci.push_back(pf);
  f.sriov_operator_ib_guid_pool = std::move(pool);
  return f;
}

DesiredState WantVfs(int n) {
  DesiredState d;
  NicSpec nic;
  nic.name = "ib-nic";
  nic.selector.root_devices = {kPf};
  nic.num_vfs = n;
  nic.link_type = "ib";
  d.nics.push_back(nic);
  return d;
}

std::vector<Change> Plan(const DesiredState& d, const HostFacts& f, PlanSink* sink_out = nullptr) {
  PlanSink sink;
  PlanGuidPool(d, f, sink);
  if (sink_out != nullptr) *sink_out = sink;
  return sink.changes();
}

json Derived(int n) {
  json out = json::array();
  for (int i = 0; i < n; ++i) out.push_back(FormatGuidBytes(DeriveVfGuid(*ParseGuid(kPfGuid), i)));
  return out;
}

TEST(GuidPoolTest, AbsentFileGetsOneEntryPerIbPfWithTheVfModulesGuids) {
  auto changes = Plan(WantVfs(4), IbHost(0, std::nullopt));
  ASSERT_EQ(changes.size(), 1u);
  const Change& c = changes[0];
  EXPECT_EQ(c.id, "sriov-operator/0000:86:00.0/ibGuidPool");
  EXPECT_TRUE(c.before.is_null());
  ASSERT_EQ(c.after.size(), 4u);
  EXPECT_EQ(c.after, Derived(4));
  // The same GUIDs the vf module plans for an ib-sriov config on this PF.
  DesiredState d = WantVfs(4);
  MultusConfigSpec mc;
  mc.name = "ib";
  mc.cni_type = "ib-sriov";
  mc.nic = "ib-nic";
  d.multus_configs.push_back(mc);
  PlanSink vf_sink;
  PlanVf(d, IbHost(0, std::nullopt), vf_sink);
  const Change* guids = nullptr;
  for (const auto& vc : vf_sink.changes()) {
    if (vc.attribute == kIbGuidsAttribute) guids = &vc;
  }
  ASSERT_NE(guids, nullptr);
  ASSERT_EQ(guids->after.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(ParseGuid(guids->after[i].get<std::string>()),
              ParseGuid(c.after[i].get<std::string>()))
        << i;
  }
  EXPECT_EQ(c.after[0], "0e:42:a1:00:01:5b:7c:2e");  // locally administered, VF index + 1
}

TEST(GuidPoolTest, SameGuidsInAnotherSpellingAreConverged) {
  json pool = json::array({{{"pciAddress", "0000:86:00.0"}, {"guids", json::array()}}});
  for (const auto& g : Derived(2)) {
    std::string up = g.get<std::string>();
    for (char& ch : up) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    pool[0]["guids"].push_back(up);
  }
  EXPECT_TRUE(Plan(WantVfs(2), IbHost(2, pool.dump())).empty());
  // A different count is a change from the listed GUIDs to the new list.
  auto changes = Plan(WantVfs(3), IbHost(2, pool.dump()));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].before, Derived(2));
  EXPECT_EQ(changes[0].after, Derived(3));
}

TEST(GuidPoolTest, OtherPfsEntriesStayAndOursIsReplacedInPlace) {
  json pool = json::array(
      {{{"pciAddress", "0000:3b:00.0"}, {"guids", {"00:01:02:03:04:05:06:07"}}},
       {{"pfGuid", "0c:42:a1:03:00:5b:7c:2e"},
        {"guidsRange", {{"start", "00:00:00:00:00:00:00:01"}, {"end", "00:00:00:00:00:00:00:09"}}}},
       {{"pfGuid", "aa:aa:aa:aa:aa:aa:aa:aa"}, {"guids", {"00:00:00:00:00:00:00:0a"}}}});
  ASSERT_TRUE(ParseGuidPool(pool.dump()).ok()) << ParseGuidPool(pool.dump()).status().message();
  // Our PF is listed by its GUID with a range: that entry is ours to replace.
  json got = SetPoolEntry(pool, kPf, "0c:42:a1:03:00:5b:7c:2e", Derived(2));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], pool[0]);
  EXPECT_EQ(got[1], json({{"pciAddress", kPf}, {"guids", Derived(2)}}));
  EXPECT_EQ(got[2], pool[2]);
  // null removes it; the others stay.
  json removed = SetPoolEntry(got, kPf, "", nullptr);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0], pool[0]);
  EXPECT_EQ(removed[1], pool[2]);
  EXPECT_EQ(RenderGuidPool(json::array()), "[]\n");
}

// The operator (v1.4.0 and later) reads a range as guidsRange: {start, end}
// and refuses the whole file for one entry it cannot read: such an entry,
// kept as another PF's, would make the daemon drop our GUIDs too.
TEST(GuidPoolTest, EntriesTheOperatorRefusesAreErrorsNamingThem) {
  const std::string range = R"([{"pfGuid": "aa:aa:aa:aa:aa:aa:aa:aa",
      "guidsRange": {"start": "00:00:00:00:00:00:00:01", "end": "00:00:00:00:00:00:00:09"}}])";
  EXPECT_TRUE(ParseGuidPool(range).ok()) << ParseGuidPool(range).status().message();
  struct Bad {
    const char* text;
    const char* says;
  };
  for (const Bad& b : {
           Bad{R"([{"pfGuid": "aa:aa:aa:aa:aa:aa:aa:aa", "rangeStart": "00:00:00:00:00:00:00:01",
                    "rangeEnd": "00:00:00:00:00:00:00:09"}])",
               "a range is \"guidsRange\""},
           Bad{R"([{"pciAddress": "0000:3b:00.0", "guids": []}])", "non-empty guids list"},
           Bad{R"([{"guids": ["00:00:00:00:00:00:00:01"]}])", "either pciAddress or pfGuid"},
           Bad{R"([{"pciAddress": "0000:3b:00.0", "pfGuid": "aa:aa:aa:aa:aa:aa:aa:aa",
                    "guids": ["00:00:00:00:00:00:00:01"]}])",
               "either pciAddress or pfGuid"},
           Bad{R"([{"pciAddress": "0000:3b:00.0", "guids": ["nope"]}])", "is not a GUID"},
           Bad{R"([{"pciAddress": "0000:3b:00.0", "guidsRange": {"start": "00:00:00:00:00:00:00:09",
                    "end": "00:00:00:00:00:00:00:01"}}])",
               "ends before it starts"},
       }) {
    auto got = ParseGuidPool(std::string(b.text));
    ASSERT_FALSE(got.ok()) << b.text;
    EXPECT_NE(got.status().message().find(b.says), std::string::npos) << got.status().message();
    EXPECT_NE(got.status().message().find("entry 0"), std::string::npos) << got.status().message();
  }
}

TEST(GuidPoolTest, EthernetPfsAndPfsWithoutVfsGetNoEntry) {
  HostFacts eth = IbHost(0, std::nullopt);
  eth.pci[0].sriov->ib_node_guid.clear();  // RoCE: no IB port
  EXPECT_TRUE(Plan(WantVfs(4), eth).empty());
  EXPECT_TRUE(Plan(WantVfs(0), IbHost(0, std::nullopt)).empty());
  EXPECT_TRUE(Plan(WantVfs(17), IbHost(0, std::nullopt)).empty());  // above totalvfs: sriov's error
}

TEST(GuidPoolTest, MalformedFileIsAPlanErrorNamingIt) {
  for (const char* text : {"{\"pciAddress\": \"x\"}", "not json", "[1, 2]"}) {
    PlanSink sink;
    EXPECT_TRUE(Plan(WantVfs(2), IbHost(0, std::string(text)), &sink).empty()) << text;
    ASSERT_EQ(sink.diagnostics().size(), 1u) << text;
    EXPECT_EQ(sink.diagnostics()[0].path, "spec.nics[0].numVfs");
    EXPECT_NE(sink.diagnostics()[0].message.find("/etc/sriov-operator/infiniband/guids"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace provisioner
