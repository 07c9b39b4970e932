// P_Key spellings: what ib-kubernetes and the Spiderpool guides write, read
// as hex and normalized; and every hint the loader prints about a pkey,
// applied to the file, loads cleanly.
#include "engine/config/pkey.h"

#include <algorithm>
#include <regex>
#include <string>

#include "engine/config/loader.h"
#include "engine/config/test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace provisioner::config {
namespace {

using namespace testing;  // NOLINT: test_util.h's vocabulary

// An IB nic with VFs and IPoIB children `pkeys` (line 11), an ib-sriov
// multus config with `pkey_line` (line 18).
std::string Doc(const std::string& pkey_line, const std::string& ipoib_pkeys = "[\"0x8001\"]") {
  return OneNicSpec("ib-nic", "{pfNames: [ibs5f0]}",
                    "      linkType: ib\n"  // 9
                    "      ipoib:\n"        // 10
                    "        pkeys: " +
                        ipoib_pkeys +
                        "\n"                                // 11
                        "      numVfs: 4\n"                 // 12
                        "      resourceName: ibsriov\n"     // 13
                        "  rdma: {netnsMode: exclusive}\n"  // 14
                        "  multusConfigs:\n"                // 15
                        "    - name: ib\n"                  // 16
                        "      cniType: ib-sriov\n"         // 17
                        "      nic: ib-nic\n"               // 18
                        "      " +
                        pkey_line + "\n");  // 19
}

std::string LoadedPkey(const std::string& pkey_line) {
  LoadResult r = LoadDesiredStateFromString(Doc(pkey_line), "host.yaml");
  if (!r.state) return "(not loaded)";
  return r.state->multus_configs[0].pkey.value_or("(none)");
}

TEST(PkeyTest, ParsesHexWithOrWithoutThePrefix) {
  EXPECT_EQ(ParsePkeySpelling("0x1000"), 0x1000);
  EXPECT_EQ(ParsePkeySpelling("0X1000"), 0x1000);
  EXPECT_EQ(ParsePkeySpelling("1000"), 0x1000);
  EXPECT_EQ(ParsePkeySpelling("0x0001000"), 0x1000);  // ib-kubernetes: ParseUint base 16
  EXPECT_EQ(ParsePkeySpelling("7fff"), 0x7fff);
  EXPECT_EQ(ParsePkeySpelling("0x10000"), std::nullopt);
  EXPECT_EQ(ParsePkeySpelling("0x"), std::nullopt);
  EXPECT_EQ(ParsePkeySpelling(""), std::nullopt);
  EXPECT_EQ(ParsePkeySpelling("10g0"), std::nullopt);
  EXPECT_EQ(ParsePkeySpelling("-1"), std::nullopt);
}

// The AI guide's `pkey: 1000`, its quoted form and the 0x form all mean
// partition 0x1000, and reach the manifests as "0x1000" (ib-kubernetes
// refuses a P_Key without 0x).
TEST(PkeyTest, EverySpellingOfTheGuideLoadsAsTheSamePartition) {
  for (const char* line : {"pkey: 1000", "pkey: \"1000\"", "pkey: \"0x1000\"", "pkey: 0x1000",
                           "pkey: '0X1000'", "pkey: \"0x01000\""}) {
    EXPECT_THAT(Diagnose(Doc(line)), IsEmpty()) << line;
    EXPECT_EQ(LoadedPkey(line), "0x1000") << line;
  }
  // IPoIB children: 8001 and "8001" are 0x8001 too.
  for (const char* pkeys : {"[8001]", "[\"8001\"]", "[0x8001]"}) {
    LoadResult r = LoadDesiredStateFromString(Doc("pkey: 1000", pkeys), "host.yaml");
    ASSERT_TRUE(r.state.has_value()) << pkeys;
    EXPECT_EQ(r.state->nics[0].ipoib->pkeys, std::vector<std::string>({"0x8001"})) << pkeys;
  }
}

TEST(PkeyTest, RefusedAsIbKubernetesRefusesThem) {
  ExpectDiagnoses({
      {Doc("pkey: \"0x9000\""),
       ElementsAre("host.yaml:19:13: spec.multusConfigs[0].pkey: \"0x9000\" has the "
                   "full-membership bit 0x8000, which ib-kubernetes refuses (it makes the "
                   "pod's GUID a full member itself): write \"0x1000\"")},
      {Doc("pkey: \"0x8000\""),
       ElementsAre("host.yaml:19:13: spec.multusConfigs[0].pkey: \"0x8000\" is no "
                   "partition (the partition bits 0x7fff are 0)")},
      {Doc("pkey: \"0x1g\""),
       ElementsAre("host.yaml:19:13: spec.multusConfigs[0].pkey: \"0x1g\" is not an "
                   "InfiniBand partition key in hex, like \"0x1000\" (0x optional)")},
  });
}

// spec.kubernetes.spiderpool.version as a release, quoted or not: 1.10 is
// not 1.1.
TEST(PkeyTest, SpiderpoolVersionIsReadByItsDigits) {
  for (const char* v : {"0.9", "\"0.9\"", "v0.9.10", "1.10", "\"v1.0\""}) {
    std::string doc = Doc("pkey: 1000") + "  kubernetes:\n    spiderpool: {version: " + v + "}\n";
    LoadResult r = LoadDesiredStateFromString(doc, "host.yaml");
    ASSERT_TRUE(r.state.has_value()) << v << ": " << (Diagnose(doc).empty() ? "" : Diagnose(doc)[0]);
    std::string want = v;
    want.erase(std::remove(want.begin(), want.end(), '"'), want.end());
    EXPECT_EQ(r.state->kubernetes->spiderpool_version.value_or(""), want) << v;
  }
  EXPECT_THAT(Diagnose(Doc("pkey: 1000") + "  kubernetes:\n    spiderpool: {version: 2.0}\n"),
              ElementsAre(::testing::HasSubstr("spec.kubernetes.spiderpool.version: \"2.0\" is "
                                               "not a Spiderpool release")));
}

// Every "did you mean", "quote it" and "write" hint about a P_Key, applied to
// the file as the message says, gives a file that loads without a diagnostic.
TEST(PkeyTest, EveryHintTheLoaderPrintsPassesWhenApplied) {
  struct Case {
    std::string doc;
    std::string line;  // the line the hint is about, as written
  };
  const Case cases[] = {
      {Doc("pkey: \"0x9000\""), "      pkey: \"0x9000\""},
      {Doc("pkey: \"0xffff\""), "      pkey: \"0xffff\""},
      {Doc("pkeys: \"0x1000\""), "      pkeys: \"0x1000\""},
      {Doc("pkey: \"1000\"", "[1e3]"), "        pkeys: [1e3]"},
      {Doc("pkey: 1000").replace(Doc("pkey: 1000").find("pkeys:"), 6, "pkey:"),
       "        pkey: [\"0x8001\"]"},
  };
  const std::regex quote_it(R"re(\(quote it: (".*")\))re");
  const std::regex did_you_mean(R"re(unknown field "([^"]+)" \(did you mean "([^"]+)"\?\))re");
  const std::regex write(R"re(: write (".*")$)re");
  int hints = 0;
  for (const Case& c : cases) {
    std::vector<std::string> diags = Diagnose(c.doc);
    ASSERT_EQ(diags.size(), 1u) << c.doc;
    const std::string& msg = diags[0];
    std::smatch m;
    std::string fixed_line = c.line;
    if (std::regex_search(msg, m, quote_it)) {
      // The scalar as written, replaced by the quoted text.
      const std::string quoted = m[1];
      const std::string bare = quoted.substr(1, quoted.size() - 2);
      const size_t at = fixed_line.rfind(bare);
      ASSERT_NE(at, std::string::npos) << msg;
      fixed_line.replace(at, bare.size(), quoted);
    } else if (std::regex_search(msg, m, did_you_mean)) {
      const size_t at = fixed_line.find(std::string(m[1]) + ":");
      ASSERT_NE(at, std::string::npos) << msg;
      fixed_line.replace(at, std::string(m[1]).size(), m[2]);
    } else if (std::regex_search(msg, m, write)) {
      const size_t colon = fixed_line.find(": ");
      fixed_line = fixed_line.substr(0, colon + 2) + std::string(m[1]);
    } else {
      ADD_FAILURE() << "no hint in: " << msg;
      continue;
    }
    ++hints;
    std::string fixed = c.doc;
    const size_t at = fixed.find(c.line + "\n");
    ASSERT_NE(at, std::string::npos) << c.line;
    fixed.replace(at, c.line.size(), fixed_line);
    EXPECT_THAT(Diagnose(fixed), IsEmpty()) << msg << "\napplied: " << fixed_line;
  }
  EXPECT_EQ(hints, 5);
  // No hint where quoting would not help: "true" is no P_Key either.
  EXPECT_THAT(Diagnose(Doc("pkey: true")),
              ElementsAre("host.yaml:19:13: spec.multusConfigs[0].pkey: expected a string, got "
                          "boolean true"));
}

}  // namespace
}  // namespace provisioner::config
