// discover on every bundled host tree, real captures and generated ones, and
// on this machine's live root (issue 18, "done when"): it exits 0, and every
// PCI function it lists is one `lspci -A linux-sysfs` lists on the same
// sysfs, with the same vendor, device and class.
#include <dirent.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "test/integration/harness.h"
#include "test/support/ttar.h"

namespace provisioner::testing {
namespace {

using nlohmann::json;

struct Ident {
  std::string cls;  // "0c06"
  std::string vendor;
  std::string device;
};

// `lspci -D -n -mm` lines: 0000:43:00.0 "0c06" "1077" "7322" -r02 ...
std::map<std::string, Ident> Lspci(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {"/usr/bin/lspci", "-D", "-n", "-mm"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  RunResult r = Run(argv);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, Ident> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> quoted;
    for (size_t i = line.find('"'); i != std::string::npos; i = line.find('"', i + 1)) {
      size_t j = line.find('"', i + 1);
      if (j == std::string::npos) break;
      quoted.push_back(line.substr(i + 1, j - i - 1));
      i = j;
    }
    if (quoted.size() < 3) continue;
    out[line.substr(0, line.find(' '))] = Ident{quoted[0], quoted[1], quoted[2]};
  }
  return out;
}

// Every function discover lists (NIC PFs, their VFs, GPUs), with what it says.
std::map<std::string, json> Listed(const json& facts) {
  std::map<std::string, json> out;
  for (const json& n : facts["nics"]) {
    out[n["pciAddress"]] = n;
    if (!n.contains("sriov") || !n["sriov"].is_object()) continue;
    for (const json& vf : n["sriov"]["vfs"]) out[vf["pciAddress"]] = vf;
  }
  for (const json& g : facts["gpus"]) out[g["pciAddress"]] = g;
  return out;
}

void ExpectAgreement(const std::string& root, const std::vector<std::string>& lspci_args,
                     size_t* compared) {
  RunResult d = Provisioner({"discover", "--root", root, "-o", "json"});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  json facts = json::parse(d.out, nullptr, false);
  ASSERT_FALSE(facts.is_discarded()) << d.out;
  const std::map<std::string, json> listed = Listed(facts);
  if (listed.empty()) return;
  const std::map<std::string, Ident> lspci = Lspci(lspci_args);
  for (const auto& [bdf, f] : listed) {
    auto it = lspci.find(bdf);
    ASSERT_NE(it, lspci.end()) << bdf << " is listed by discover, not by lspci";
    if (f.contains("vendor")) {
      EXPECT_EQ(f["vendor"], it->second.vendor) << bdf;
    }
    if (f.contains("deviceID")) {
      EXPECT_EQ(f["deviceID"], it->second.device) << bdf;
    }
    if (f.contains("class")) {
      EXPECT_EQ(f["class"].get<std::string>().substr(0, 4), it->second.cls) << bdf;
    }
    ++*compared;
  }
}

TEST(LspciAgreementTest, EveryBundledTree) {
  const std::vector<std::string> trees = BundledHostTrees();
  ASSERT_GE(trees.size(), 12u);  // the real captures among them
  size_t compared = 0;
  for (const std::string& name : trees) {
    SCOPED_TRACE(name);
    const std::string root = ExtractHost(name);
    ExpectAgreement(root, {"-A", "linux-sysfs", "-O", "sysfs.path=" + root + "/sys/bus/pci"},
                    &compared);
  }
  EXPECT_GT(compared, 50u);  // 75 functions in the trees of this commit
}

TEST(LspciAgreementTest, LiveRoot) {
  size_t compared = 0;
  ExpectAgreement("/", {"-A", "linux-sysfs"}, &compared);
}

}  // namespace
}  // namespace provisioner::testing
