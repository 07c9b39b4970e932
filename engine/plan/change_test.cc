#include "engine/plan/change.h"

#include <string>

#include "gtest/gtest.h"

namespace provisioner {
namespace {

using nlohmann::json;

Change Sample() {
  Change c;
  c.id = "sriov/0000:af:00.0/numVfs";
  c.module = "sriov";
  c.target = "0000:af:00.0";
  c.attribute = "numVfs";
  c.before = 0;
  c.after = 12;
  c.disruption = Disruption::kReboot;
  c.reason = "nic x wants 12 VFs";
  c.phase = kPhaseNumVfs;
  c.field_path = "spec.nics[0].numVfs";
  c.detail = {{"path", "/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs"}};
  return c;
}

TEST(MakeChangeTest, IdIsModuleTargetAttribute) {
  Change c = MakeChange("link", "ens6f0np0", "mtu", 1500, 9000, Disruption::kLive, 7,
                        "nic rail0 wants mtu 9000", "spec.nics[0].mtu");
  EXPECT_EQ(c.id, "link/ens6f0np0/mtu");
  EXPECT_EQ(c.module, "link");
  EXPECT_EQ(c.target, "ens6f0np0");
  EXPECT_EQ(c.attribute, "mtu");
  EXPECT_EQ(c.before, 1500);
  EXPECT_EQ(c.after, 9000);
  EXPECT_EQ(c.disruption, Disruption::kLive);
  EXPECT_EQ(c.phase, 7);
  EXPECT_EQ(c.reason, "nic rail0 wants mtu 9000");
  EXPECT_EQ(c.field_path, "spec.nics[0].mtu");
  EXPECT_TRUE(c.detail.is_object());
  EXPECT_TRUE(c.detail.empty());
}

TEST(ChangeRecordTest, RoundTrips) {
  auto back = ParseChangeRecord(ChangeToRecord(Sample()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ChangeToRecord(*back), ChangeToRecord(Sample()));
}

TEST(ChangeRecordTest, WrongShapesAreErrorsNamingTheField) {
  struct Case {
    const char* field;
    json value;
    const char* want;
  } cases[] = {
      {"id", 7, "id: want a string"},
      {"module", json::array(), "module: want a string"},
      {"phase", "50", "phase: want an integer"},
      {"disruption", "soon", "disruption: soon is not"},
      {"detail", "x", "detail: want an object"},
  };
  for (const auto& c : cases) {
    json r = ChangeToRecord(Sample());
    r[c.field] = c.value;
    auto parsed = ParseChangeRecord(r);
    ASSERT_FALSE(parsed.ok()) << c.field;
    EXPECT_NE(parsed.status().message().find(c.want), std::string::npos)
        << parsed.status().message();
  }
  json r = ChangeToRecord(Sample());
  r.erase("module");
  EXPECT_FALSE(ParseChangeRecord(r).ok());
  EXPECT_FALSE(ParseChangeRecord(json::array()).ok());
}

TEST(SavedPlanTest, ParsesWhatPlanWrites) {
  json j = {{"kind", kSavedPlanKind},
            {"formatVersion", kSavedPlanFormatVersion},
            {"root", "/tmp/h"},
            {"desiredFile", "/etc/provisioner/host.yaml"},
            {"digests", {{"desired", "00aa"}, {"facts", "00bb"}}},
            {"changes", json::array({ChangeToRecord(Sample())})}};
  auto p = ParseSavedPlan(j.dump());
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->has_value());
  EXPECT_EQ((*p)->root, "/tmp/h");
  EXPECT_EQ((*p)->facts_digest, "00bb");
  ASSERT_EQ((*p)->changes.size(), 1u);
  EXPECT_EQ((*p)->changes[0].after, 12);

  // Not a saved plan: a host.yaml, other JSON, garbage.
  for (const char* text : {"apiVersion: provisioner/v1alpha1\n", "{\"kind\": \"HostConfig\"}",
                           "[1,2]", "\xff\xfe", ""}) {
    auto q = ParseSavedPlan(text);
    ASSERT_TRUE(q.ok()) << text;
    EXPECT_FALSE(q->has_value()) << text;
  }
  // Claims to be one but is broken: an error saying where.
  j["changes"][0]["phase"] = "late";
  auto bad = ParseSavedPlan(j.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("changes[0]"), std::string::npos) << bad.status().message();
  j.erase("digests");
  EXPECT_FALSE(ParseSavedPlan(j.dump()).ok());
}

// Issue 26 items 5 and 14: a change without detail ("detail": null, as the
// kmod module's) reads back as written; a saved plan of another format, or
// JSON cut short, is an error about the plan, not a host.yaml.
TEST(SavedPlanTest, RecordsRoundTripAndOtherFormatsAreRefused) {
  Change c = Sample();
  c.detail = nullptr;
  auto back = ParseChangeRecord(ChangeToRecord(c));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(ChangeToRecord(*back), ChangeToRecord(c));
  json j = {{"kind", kSavedPlanKind},
            {"formatVersion", 2},
            {"root", "/"},
            {"desiredFile", "/h.yaml"},
            {"digests", {{"desired", "1"}, {"facts", "2"}}},
            {"changes", json::array()}};
  auto other = ParseSavedPlan(j.dump());
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("formatVersion: 2"), std::string::npos);
  const std::string cut = j.dump(2).substr(0, 40);
  auto broken = ParseSavedPlan(cut);
  ASSERT_FALSE(broken.ok()) << cut;
  EXPECT_NE(broken.status().message().find("not valid JSON: parse error at line"),
            std::string::npos)
      << broken.status().message();
}

}  // namespace
}  // namespace provisioner
