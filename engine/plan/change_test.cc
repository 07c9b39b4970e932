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

TEST(ChangeRecordTest, RoundTripsResourceAndDependencies) {
  Change c = Sample();
  c.resource = "pf:0000:af:00.0";
  c.depends_on = {"card:0000:af:00.0", "kmod:vfio_pci"};
  auto back = ParseChangeRecord(ChangeToRecord(c));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->resource, "pf:0000:af:00.0");
  EXPECT_EQ(back->depends_on, c.depends_on);
  EXPECT_EQ(ChangeToRecord(*back), ChangeToRecord(c));
  // A record from before the graph (no resource): a barrier.
  json old = ChangeToRecord(Sample());
  old.erase("resource");
  old.erase("dependsOn");
  auto parsed = ParseChangeRecord(old);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->resource, "");
  EXPECT_TRUE(parsed->depends_on.empty());
  old["dependsOn"] = json::array({1});
  auto bad = ParseChangeRecord(old);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("dependsOn: want a list of strings"), std::string::npos);
}

Change On(const std::string& id, const std::string& resource,
          std::vector<std::string> depends_on = {}) {
  Change c = MakeChange("m", id, "a", 0, 1, Disruption::kLive, 0, "", "");
  c.resource = resource;
  c.depends_on = std::move(depends_on);
  return c;
}

TEST(PlanGraphTest, ChainsPerResourceBarriersAndDeclaredDependencies) {
  // 0 barrier (a module load); 1,2 PF a; 3 PF b; 4 card a; 5 PF b after card a;
  // 6 barrier; 7 PF a.
  std::vector<Change> plan = {On("kmod", ""),   On("a1", "pf:a"),   On("a2", "pf:a"),
                              On("b1", "pf:b"), On("fw", "card:a"), On("b2", "pf:b", {"card:a"}),
                              On("netns", ""),  On("a3", "pf:a")};
  auto g = BuildPlanGraph(plan);
  ASSERT_TRUE(g.ok()) << g.status().message();
  using V = std::vector<size_t>;
  EXPECT_EQ(g->preds[0], V{});
  EXPECT_EQ(g->preds[1], V{0});
  EXPECT_EQ(g->preds[2], (V{0, 1}));
  EXPECT_EQ(g->preds[3], V{0});
  EXPECT_EQ(g->preds[4], V{0});
  EXPECT_EQ(g->preds[5], (V{0, 3, 4}));
  EXPECT_EQ(g->preds[6], (V{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(g->preds[7], V{6});
  EXPECT_EQ(g->succs[0], (V{1, 2, 3, 4, 5, 6}));
  // kmod -> b1 -> b2 -> netns -> a3 (or through a1, a2: also 5).
  EXPECT_EQ(g->longest_chain, 5u);
  // Every edge goes forward: plan order is a topological order.
  for (size_t i = 0; i < plan.size(); ++i) {
    for (size_t j : g->preds[i]) EXPECT_LT(j, i);
  }
}

TEST(PlanGraphTest, IndependentResourcesHaveShortChains) {
  std::vector<Change> plan;
  for (int pf = 0; pf < 8; ++pf) {
    plan.push_back(On("n" + std::to_string(pf), "pf:" + std::to_string(pf)));
  }
  for (int pf = 0; pf < 8; ++pf) {
    plan.push_back(On("v" + std::to_string(pf), "pf:" + std::to_string(pf)));
  }
  auto g = BuildPlanGraph(plan);
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->longest_chain, 2u);
  EXPECT_EQ(g->preds[8 + 3], std::vector<size_t>{3});
}

TEST(PlanGraphTest, UnknownResourcesAndCyclesAreErrorsNamingTheChange) {
  auto bad_kind = BuildPlanGraph({On("x", "gpu:0")});
  ASSERT_FALSE(bad_kind.ok());
  EXPECT_NE(bad_kind.status().message().find("change 1 of the plan (m/x/a): resource \"gpu:0\""),
            std::string::npos)
      << bad_kind.status().message();
  EXPECT_FALSE(BuildPlanGraph({On("x", "pf:")}).ok());
  EXPECT_FALSE(BuildPlanGraph({On("x", "pf:a", {"nonsense"})}).ok());
  // b must follow card a's changes, but card a's change is planned after b.
  auto cycle = BuildPlanGraph({On("b", "pf:b", {"card:a"}), On("fw", "card:a")});
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().message().find("dependency cycle"), std::string::npos)
      << cycle.status().message();
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
// Found by plan_file_fuzzer: a number too large for a double threw
// json's out_of_range out of ParseSavedPlan; it is an error like any other.
TEST(SavedPlanTest, ANumberTooLargeIsAnErrorNotAnException) {
  auto p = ParseSavedPlan("{\"kind\": 8e193275}");
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("not valid JSON"), std::string::npos) << p.status().message();
}

}  // namespace provisioner
