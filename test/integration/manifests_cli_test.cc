// provisioner manifests through the real binary as the Spiderpool guides'
// reader runs it: the AI InfiniBand guide's host.yaml on the guides' release
// (v0.9, pkey written as the guide does), its chart values with the release
// namespace, and the loader's P_Key hint applied.
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "test/integration/harness.h"
#include "test/support/ttar.h"
#include "yaml-cpp/yaml.h"

namespace provisioner::testing {
namespace {

// The AI guide (get-started-sriov-infiniband): an IB rail with VFs in
// exclusive mode, the multus config in spiderpool with `pkey: 1000`, the
// operator in spiderpool, unquoted release 0.9.
std::string AiIbHost(const std::string& pkey_line, const std::string& version) {
  return "apiVersion: provisioner/v1alpha1\n"
         "kind: HostConfig\n"
         "metadata: {name: worker1}\n"
         "spec:\n"
         "  rdma: {netnsMode: exclusive}\n"
         "  nics:\n"
         "    - name: gpu1-nic\n"
         "      nicSelector: {vendor: \"15b3\", deviceID: \"1021\", rootDevices: "
         "[\"0000:1a:00.0\"]}\n"
         "      linkType: ib\n"
         "      numVfs: 8\n"
         "      isRdma: true\n"
         "      resourceName: gpu1sriov\n"
         "  ipPools:\n"
         "    - {name: gpu1-net11, subnet: 172.16.11.0/24, ips: [172.16.11.1-172.16.11.200]}\n"
         "  multusConfigs:\n"
         "    - name: gpu1-ib\n"
         "      namespace: spiderpool\n"
         "      cniType: ib-sriov\n"
         "      nic: gpu1-nic\n"
         "      ippools: {ipv4: [gpu1-net11]}\n"
         "      " +
         pkey_line +
         "\n"
         "  kubernetes:\n"
         "    nodeSelector: {kubernetes.io/os: linux}\n"
         "    sriovOperatorNamespace: spiderpool\n"
         "    workloadNamespaces: [ai-jobs]\n"
         "    spiderpool: {version: " +
         version + "}\n";
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(ManifestsCliTest, TheAiInfinibandGuideOnItsRelease) {
  const std::string host = WriteTempFile("ai-ib.yaml", AiIbHost("pkey: 1000", "0.9"));
  const std::string values = host + ".values.yaml";
  RunResult r = Provisioner({"manifests", host, "--helm-values", values});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool config = false, env = false;
  for (const YAML::Node& doc : YAML::LoadAll(r.out)) {
    const std::string kind = doc["kind"].as<std::string>();
    if (kind == "SpiderMultusConfig") {
      config = true;
      // As ib-kubernetes reads it: "0x" and hex.
      EXPECT_EQ(doc["spec"]["ibsriov"]["pkey"].as<std::string>(), "0x1000");
      EXPECT_TRUE(doc["spec"]["ibsriov"]["rdmaIsolation"].as<bool>());
    }
    if (kind == "ConfigMap" && doc["metadata"]["name"].as<std::string>() == "nccl-env-linux") {
      env = true;
      EXPECT_EQ(doc["metadata"]["namespace"].as<std::string>(), "ai-jobs");
    }
  }
  EXPECT_TRUE(config) << r.out;
  EXPECT_TRUE(env) << r.out;
  // The operator's prerequisites above the policy.
  EXPECT_NE(r.out.find("configDaemonNodeSelector"), std::string::npos) << r.out;
  // The chart values name the release namespace, not "<namespace>".
  const std::string v = ReadAll(values);
  EXPECT_NE(v.find("helm upgrade --install spiderpool spiderpool/spiderpool -n spiderpool "),
            std::string::npos)
      << v;
  EXPECT_EQ(v.find("<namespace>"), std::string::npos) << v;
}

TEST(ManifestsCliTest, TheRoceGuideOnV09CarriesEnableRdma) {
  std::string y = ReadAll(Example("roce-sriov.yaml"));
  y += "    spiderpool: {version: v0.9.10}\n";
  RunResult r = Provisioner({"manifests", WriteTempFile("roce-v09.yaml", y)});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const YAML::Node& doc : YAML::LoadAll(r.out)) {
    if (doc["kind"].as<std::string>() != "SpiderMultusConfig") continue;
    EXPECT_TRUE(doc["spec"]["sriov"]["enableRdma"].as<bool>());
    EXPECT_FALSE(doc["spec"]["sriov"]["rdmaIsolation"].IsDefined());
  }
}

// The hint validate prints for a P_Key with the full-membership bit, applied
// as printed, validates.
TEST(ManifestsCliTest, ThePkeyHintPassesWhenApplied) {
  RunResult bad = Provisioner(
      {"validate", WriteTempFile("bad-pkey.yaml", AiIbHost("pkey: \"0x9000\"", "v1.0"))});
  EXPECT_EQ(bad.exit_code, 1);
  const std::string hint = "write \"0x1000\"";
  ASSERT_NE(bad.err.find(hint), std::string::npos) << bad.err;
  RunResult fixed = Provisioner(
      {"validate", WriteTempFile("fixed-pkey.yaml", AiIbHost("pkey: \"0x1000\"", "v1.0"))});
  EXPECT_EQ(fixed.exit_code, 0) << fixed.err;
}

}  // namespace
}  // namespace provisioner::testing
