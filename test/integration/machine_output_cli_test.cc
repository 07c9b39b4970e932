// Issue 38 items 10 and 11: saved plans can be read (`show PLANFILE`, plan
// given a saved plan says so, the save hint names the root), and machine
// output that tools can use (located diagnostics in JSON, a JSON document
// even for invalid input, the root as given and absolute, manifests' file
// names with the namespace).
#include <unistd.h>

#include <string>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

json Parse(const RunResult& r) {
  json j = json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "stdout is not one JSON document:\n" << r.out << r.err;
  return j;
}

TEST(MachineOutputCliTest, SavedPlansCanBeRead) {
  const std::string root = ExtractHost("cx5-roce");
  const std::string yaml = Example("roce-sriov.yaml");
  const std::string saved = MakeTempDir("saved") + "/plan.json";
  RunResult p = Provisioner({"plan", yaml, "--root", root, "--out", saved});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_NE(p.err.find("plan for the host under " + root + " saved to " + saved +
                       "; apply it with: provisioner apply " + saved),
            std::string::npos)
      << p.err;

  RunResult show = Provisioner({"show", saved});
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("for the host under " + root), std::string::npos) << show.out;
  // The plan's own lines: the same table plan printed.
  const size_t table = p.out.find("provisioner will make these changes");
  ASSERT_NE(table, std::string::npos) << p.out;
  EXPECT_NE(show.out.find(p.out.substr(table)), std::string::npos) << show.out << "\n---\n"
                                                                   << p.out;
  EXPECT_NE(show.out.find("Apply it with: provisioner apply " + saved), std::string::npos);
  RunResult show_json = Provisioner({"show", saved, "-o", "json"});
  ASSERT_EQ(show_json.exit_code, 0) << show_json.err;
  RunResult plan_json = Provisioner({"plan", yaml, "--root", root, "-o", "json"});
  EXPECT_EQ(Parse(show_json)["changes"], Parse(plan_json)["changes"]);

  // plan given the saved plan: what it is and how to apply it.
  RunResult again = Provisioner({"plan", saved, "--root", root});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find(saved + " is a saved plan (plan --out), not a host.yaml; apply it "
                                   "with: provisioner apply " + saved),
            std::string::npos)
      << again.err;
  EXPECT_EQ(Provisioner({"show", yaml}).exit_code, 1);
}

TEST(MachineOutputCliTest, DiagnosticsAreLocatedAndInvalidInputIsStillJson) {
  const std::string yaml = WriteTempFile("bad.yaml", Pf0Yaml(99999));
  RunResult v = Provisioner({"validate", yaml, "-o", "json"});
  EXPECT_EQ(v.exit_code, 1);
  json d = Parse(v)["diagnostics"][0];
  EXPECT_EQ(d["file"], yaml);
  EXPECT_EQ(d["line"], 9);
  EXPECT_EQ(d["column"], 15);
  EXPECT_EQ(d["severity"], "error");
  EXPECT_EQ(d["field"], "spec.nics[0].numVfs");

  RunResult p = Provisioner({"plan", yaml, "--root", ExtractHost("cx5-roce"), "-o", "json"});
  EXPECT_EQ(p.exit_code, 1);
  json doc = Parse(p);
  EXPECT_EQ(doc["valid"], false);
  ASSERT_FALSE(doc["diagnostics"].empty()) << p.out;
  EXPECT_EQ(doc["diagnostics"][0]["line"], 9);
}

TEST(MachineOutputCliTest, RootIsThePathGivenAndAbsolute) {
  const std::string archive = Example("hosts/cx5-roce.ttar");
  const std::string yaml = Example("roce-sriov.yaml");
  RunResult p = Provisioner({"plan", yaml, "--root", archive, "-o", "json"});
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(Parse(p)["root"], archive);
  RunResult d = Provisioner({"discover", "--root", archive, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(Parse(d)["root"], archive);
  // A relative root is made absolute.
  const std::string tree = ExtractHost("cx5-roce");
  const std::string parent = tree.substr(0, tree.rfind('/'));
  const std::string base = tree.substr(tree.rfind('/') + 1);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  ASSERT_EQ(::chdir(parent.c_str()), 0);
  RunResult rel = Provisioner({"plan", yaml, "--root", base, "-o", "json"});
  ASSERT_EQ(::chdir(cwd), 0);
  ASSERT_EQ(rel.exit_code, 0) << rel.err;
  EXPECT_EQ(Parse(rel)["root"], tree);
}

TEST(MachineOutputCliTest, ManifestFileNamesHaveTheNamespace) {
  const std::string out = MakeTempDir("manifests");
  RunResult m = Provisioner({"manifests", Example("roce-sriov.yaml"), "--root",
                             ExtractHost("cx5-roce"), "--output-dir", out});
  ASSERT_EQ(m.exit_code, 0) << m.err;
  // Every SpiderMultusConfig is namespaced: its file says where.
  EXPECT_NE(m.out.find("/spidermultusconfig-"), std::string::npos) << m.out;
  for (size_t at = m.out.find("/spidermultusconfig-"); at != std::string::npos;
       at = m.out.find("/spidermultusconfig-", at + 1)) {
    const std::string name = m.out.substr(at + 1, m.out.find('\n', at) - at - 1);
    const std::string doc = ReadFile(out + "/" + name);
    const size_t ns = doc.find("\n  namespace: ");
    ASSERT_NE(ns, std::string::npos) << doc;
    std::string space = doc.substr(ns + 14, doc.find('\n', ns + 1) - ns - 14);
    if (space.size() > 1 && space.front() == '"') space = space.substr(1, space.size() - 2);
    EXPECT_EQ(name.find("spidermultusconfig-" + space + "-"), 0u) << name;
  }
}

}  // namespace
}  // namespace provisioner::testing
