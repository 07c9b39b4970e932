// provisioner manifests --with-test-workload and the webhook's values (issue
// 39 items 6 and 7): what each test pod checks (policy routes per rail, the
// route to the peer's rail, a measurement per rail against the next pod), the
// IPoIB-only workload, the rdma-resource-inject sample, the webhook's
// namespaces in the chart values (checked with valijson against a schema
// derived from the Spiderpool v1.0.0 chart's values.yaml), NCCL_IB_GID_INDEX
// for NCCL before 2.21 and the ib-kubernetes GUID pool. Every test script
// passes shellcheck.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/config/loader.h"
#include "engine/manifests/manifests.h"
#include "gtest/gtest.h"
#include "modules/vf/vf_planner.h"
#include "nlohmann/json.hpp"
#include "valijson/adapters/nlohmann_json_adapter.hpp"
#include "valijson/schema.hpp"
#include "valijson/schema_parser.hpp"
#include "valijson/validation_results.hpp"
#include "valijson/validator.hpp"
#include "yaml-cpp/yaml.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

DesiredState Load(const std::string& example) {
  LoadResult r = LoadDesiredStateFromFile("examples/" + example + ".yaml");
  EXPECT_TRUE(r.state.has_value()) << example;
  return r.state ? *r.state : DesiredState();
}

StatusOr<HostManifests> WithWorkload(const DesiredState& d) {
  ManifestOptions opt;
  opt.with_test_workload = true;
  return BuildHostManifests(d, opt);
}

const Manifest* Find(const std::vector<Manifest>& ms, const std::string& kind,
                     const std::string& name) {
  for (const auto& m : ms) {
    if (m.kind == kind && m.name == name) return &m;
  }
  return nullptr;
}

const json& Container(const Manifest& ds) {
  return ds.doc["spec"]["template"]["spec"]["containers"][0];
}

std::string Script(const Manifest& ds) { return Container(ds)["command"][2].get<std::string>(); }

std::string Env(const Manifest& ds, const std::string& name) {
  for (const auto& e : Container(ds)["env"]) {
    if (e["name"] == name) return e.value("value", "");
  }
  return "<unset>";
}

bool Warned(const HostManifests& hm, const std::string& part) {
  for (const auto& w : hm.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

// shellcheck's verdict on a script (POSIX sh), "" when clean.
std::string Shellcheck(const std::string& name, const std::string& script) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name + ".sh";
  {
    std::ofstream f(path, std::ios::trunc);
    f << script;
  }
  const std::string cmd = "shellcheck -s sh -f gcc " + path + " 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int rc = ::pclose(p);
  return rc == 0 ? "" : "exit " + std::to_string(rc) + ": " + out;
}

// -- item 6: the RDMA test workload ----------------------------------------

TEST(TestWorkload, EveryRailChecksItsPolicyRouteAndTheRouteToItsPeer) {
  auto hm = WithWorkload(Load("rails-8gpu"));
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const Manifest* ds = Find(hm->manifests, "DaemonSet", "rdma-test");
  ASSERT_NE(ds, nullptr);
  const std::string script = Script(*ds);
  // The coordinator's rule and table (100+N for netN) per rail, the default
  // route there for a pool with a gateway, the peer's rail address from the
  // remote GID and the route to it through the rail.
  for (const char* step : {"t=$((100 + ${n#net}))", "ip -4 rule show", "$4 == \"lookup\"",
                           "-lt 32766", "ip -4 route show table \"$t\"", "want=\"default\"",
                           "/remote address/", "ip -4 route get \"$peer\" from \"$a\"",
                           "leaves by $n: ok", "== rail checks: $passed passed"}) {
    EXPECT_NE(script.find(step), std::string::npos) << step;
  }
  // All eight pools have a gateway: every rail must have its default route.
  EXPECT_EQ(Env(*ds, "GATEWAY_RAILS"), "net1 net2 net3 net4 net5 net6 net7 net8");
}

TEST(TestWorkload, EveryPodMeasuresEveryRailAgainstTheNextPodOfARing) {
  auto hm = WithWorkload(Load("rails-8gpu"));
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const std::string script = Script(*Find(hm->manifests, "DaemonSet", "rdma-test"));
  // Not the lowest pod against the next only: each serves its predecessor and
  // measures against its successor.
  EXPECT_NE(script.find("next=$(echo \"$peers\" | sed -n \"$((me % count + 1))p\")"),
            std::string::npos);
  EXPECT_NE(script.find("serving rails for $prev, measuring against $next"), std::string::npos);
  EXPECT_EQ(script.find("second"), std::string::npos);
  EXPECT_NE(script.find("for r in $rails; do"), std::string::npos);
}

TEST(TestWorkload, GatewayRailsFollowThePools) {
  DesiredState d = Load("rails-8gpu");
  d.ip_pools[1].gateway.reset();
  auto hm = WithWorkload(d);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  EXPECT_EQ(Env(*Find(hm->manifests, "DaemonSet", "rdma-test"), "GATEWAY_RAILS"),
            "net1 net3 net4 net5 net6 net7 net8");
}

// -- item 7: IPoIB only, the inject sample --------------------------------

TEST(TestWorkload, IpoibOnlyWorkloadHasNoResourcesAndPingsOverIpoib) {
  auto hm = WithWorkload(Load("ipoib"));
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const Manifest* ds = Find(hm->manifests, "DaemonSet", "ipoib-test");
  ASSERT_NE(ds, nullptr);
  ASSERT_NE(Find(hm->manifests, "Service", "ipoib-test"), nullptr);
  const json& ctr = Container(*ds);
  EXPECT_FALSE(ctr.contains("resources")) << ctr.dump();
  EXPECT_FALSE(ctr.contains("securityContext"));
  const std::string nets =
      ds->doc["spec"]["template"]["metadata"]["annotations"]["k8s.v1.cni.cncf.io/networks"];
  DesiredState d = Load("ipoib");
  std::string want;
  for (const auto& mc : d.multus_configs) {
    if (mc.cni_type == "ipoib")
      want += (want.empty() ? "" : ",") + mc.namespace_name + "/" + mc.name;
  }
  EXPECT_EQ(nets, want);
  const std::string script = Script(*ds);
  for (const char* step : {"/dev/infiniband/uverbs*", "\"$lt\" = 32", "ping -c 3 -W 2 -I \"$n\"",
                           "ip -4 neigh show dev \"$n\"", "== ipoib checks"}) {
    EXPECT_NE(script.find(step), std::string::npos) << step;
  }
  EXPECT_EQ(Env(*ds, "SERVICE"), "ipoib-test." + ds->Namespace() + ".svc");
}

TEST(TestWorkload, NoIpoibWorkloadWithoutIpoibConfigs) {
  auto hm = WithWorkload(Load("roce-sriov"));
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  EXPECT_EQ(Find(hm->manifests, "DaemonSet", "ipoib-test"), nullptr);
}

TEST(TestWorkload, InjectSampleCarriesOnlyTheAnnotationAndChecksTheWebhooksWork) {
  DesiredState d = Load("rails-8gpu");
  auto hm = WithWorkload(d);
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const Manifest* ds = Find(hm->manifests, "DaemonSet", "rdma-inject-test");
  ASSERT_NE(ds, nullptr);
  const json& meta = ds->doc["spec"]["template"]["metadata"];
  ASSERT_TRUE(meta["annotations"].contains("cni.spidernet.io/rdma-resource-inject"));
  EXPECT_EQ(meta["annotations"].size(), 1u) << meta.dump();  // no networks: the webhook writes them
  const json& ctr = Container(*ds);
  EXPECT_FALSE(ctr.contains("resources"));
  std::string networks;
  for (const auto& mc : d.multus_configs) {
    if (mc.rdma_resource_inject)
      networks += (networks.empty() ? "" : " ") + mc.namespace_name + "/" + mc.name;
  }
  EXPECT_EQ(Env(*ds, "EXPECT_NETWORKS"), networks);
  // PCIDEVICE_<resource>, as the SR-IOV device plugin names it.
  EXPECT_NE(Env(*ds, "EXPECT_DEVICE_ENV").find("PCIDEVICE_SPIDERNET_IO_"), std::string::npos);
  EXPECT_EQ(Env(*ds, "EXPECT_RDMA"), "1");
  EXPECT_EQ(ds->doc["spec"]["template"]["spec"]["volumes"][0]["downwardAPI"]["items"][0]["fieldRef"]
                   ["fieldPath"],
            "metadata.annotations");
  const std::string script = Script(*ds);
  EXPECT_NE(script.find("/etc/podinfo/annotations"), std::string::npos);
  EXPECT_NE(script.find("printenv \"$var\""), std::string::npos);
}

TEST(TestWorkload, NoInjectSampleWhereTheWebhookIsMissing) {
  DesiredState d = Load("rails-8gpu");
  d.kubernetes->spiderpool_version = "v0.9.10";
  auto v09 = WithWorkload(d);
  ASSERT_TRUE(v09.ok()) << v09.status().message();
  EXPECT_EQ(Find(v09->manifests, "DaemonSet", "rdma-inject-test"), nullptr);
  ManifestOptions opt;
  opt.with_test_workload = true;
  opt.flavor = "multus";
  auto multus = BuildHostManifests(Load("rails-8gpu"), opt);
  ASSERT_TRUE(multus.ok()) << multus.status().message();
  EXPECT_EQ(Find(multus->manifests, "DaemonSet", "rdma-inject-test"), nullptr);
}

TEST(TestWorkload, EveryTestScriptPassesShellcheck) {
  ASSERT_EQ(std::system("command -v shellcheck >/dev/null 2>&1"), 0)
      << "shellcheck is not installed (scripts/setup.sh installs it)";
  int scripts = 0;
  for (const char* example : {"rails-8gpu", "ipoib", "ib-sriov", "roce-shared-macvlan"}) {
    auto hm = WithWorkload(Load(example));
    ASSERT_TRUE(hm.ok()) << example << ": " << hm.status().message();
    for (const auto& m : hm->manifests) {
      if (m.kind != "DaemonSet") continue;
      ++scripts;
      EXPECT_EQ(Shellcheck(std::string(example) + "-" + m.name, Script(m)), "")
          << example << " " << m.name;
    }
  }
  EXPECT_GE(scripts, 6);
}

// -- the webhook's namespaces in the chart values --------------------------

// A JSON schema from a chart's values.yaml: each map's keys and nothing else
// (an empty map is free-form), lists as arrays, scalars by the type of their
// default (null: anything).
json SchemaOf(const YAML::Node& n) {
  if (n.IsMap()) {
    if (n.size() == 0) return {{"type", "object"}};
    json props = json::object();
    for (const auto& kv : n) props[kv.first.as<std::string>()] = SchemaOf(kv.second);
    return {{"type", "object"}, {"properties", props}, {"additionalProperties", false}};
  }
  if (n.IsSequence()) {
    json s = {{"type", "array"}};
    if (n.size() > 0 && n[0].IsScalar()) s["items"] = SchemaOf(n[0]);
    return s;
  }
  if (!n.IsScalar() || n.Tag() == "tag:yaml.org,2002:null" || n.Scalar() == "~")
    return json::object();
  const std::string v = n.Scalar();
  if (n.Tag() == "!") return {{"type", "string"}};  // quoted
  if (v == "true" || v == "false") return {{"type", "boolean"}};
  if (std::regex_match(v, std::regex("-?[0-9]+"))) return {{"type", "integer"}};
  if (std::regex_match(v, std::regex("-?[0-9]+\\.[0-9]+"))) return {{"type", "number"}};
  return {{"type", "string"}};
}

// Errors of `values` against the schema of the chart's values.yaml.
std::string ValidateValues(const json& values, const std::string& values_yaml) {
  json schema = SchemaOf(YAML::LoadFile(values_yaml));
  valijson::Schema s;
  valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema);
  parser.populateSchema(schema_adapter, s);
  valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(values);
  if (validator.validate(s, target, &results)) return "";
  std::string out;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) {
    std::string where;
    for (const auto& c : e.context) where += c;
    out += where + ": " + e.description + "\n";
  }
  return out;
}

const char* const kChartValues = "test/manifests/helm/values-v1.0.0.yaml";

TEST(WebhookValues, NamespacesFromWorkloadNamespacesValidateAgainstTheChart) {
  DesiredState d = Load("rails-8gpu");
  d.kubernetes->workload_namespaces = {"ai-train", "ai-infer"};
  auto hm = BuildHostManifests(d, ManifestOptions());
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const json& inject = hm->helm_values["spiderpoolController"]["podResourceInject"];
  EXPECT_EQ(inject["enabled"], true);
  EXPECT_EQ(inject["namespacesInclude"], json({"ai-train", "ai-infer"}));
  EXPECT_EQ(inject["namespacesExclude"],
            json({"kube-system", "spiderpool", "metallb-system", "istio-system"}));
  EXPECT_FALSE(Warned(*hm, "webhook does not serve"));
  // The webhook's part of the values, against the v1.0.0 chart's values.yaml.
  json webhook = {{"spiderpoolController", hm->helm_values["spiderpoolController"]}};
  EXPECT_EQ(ValidateValues(webhook, kChartValues), "");
}

TEST(WebhookValues, SchemaCheckRejectsWhatTheChartDoesNotHave) {
  json bad = {{"spiderpoolController",
               {{"podResourceInject", {{"enabled", "yes"}, {"namespaceInclude", json::array()}}}}}};
  const std::string errors = ValidateValues(bad, kChartValues);
  EXPECT_NE(errors.find("enabled"), std::string::npos) << errors;
  EXPECT_NE(errors.find("namespaceInclude"), std::string::npos) << errors;
}

TEST(WebhookValues, WarnsForAWorkloadNamespaceTheChartExcludes) {
  for (const char* ns : {"kube-system", "spiderpool"}) {
    DesiredState d = Load("rails-8gpu");
    d.kubernetes->workload_namespaces = {"ai", ns};
    auto hm = BuildHostManifests(d, ManifestOptions());
    ASSERT_TRUE(hm.ok()) << hm.status().message();
    EXPECT_TRUE(Warned(
        *hm, std::string("workloadNamespaces: ") + ns + " is in the Spiderpool chart's default"))
        << ns;
    EXPECT_FALSE(Warned(*hm, "workloadNamespaces: ai "));
  }
  // The release's own namespace too (sriovOperatorNamespace).
  DesiredState d = Load("rails-8gpu");
  d.kubernetes->sriov_operator_namespace = "spiderpool-system";
  d.kubernetes->workload_namespaces = {"spiderpool-system"};
  auto hm = BuildHostManifests(d, ManifestOptions());
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  EXPECT_TRUE(Warned(*hm, "spiderpool-system is Spiderpool's own release namespace"));
}

// -- NCCL_IB_GID_INDEX -----------------------------------------------------

const json* NcclData(const HostManifests& hm) {
  for (const auto& m : hm.manifests) {
    if (m.kind == "ConfigMap" && m.name.rfind("nccl-env-", 0) == 0) return &m.doc["data"];
  }
  return nullptr;
}

// The manifests of the example `name` for NCCL `version` ("": not given).
StatusOr<HostManifests> BuildForNccl(const std::string& name, const std::string& version) {
  DesiredState d = Load(name);
  if (!version.empty()) {
    if (!d.kubernetes) d.kubernetes = KubernetesSpec();
    d.kubernetes->nccl_version = version;
  }
  return BuildHostManifests(d, ManifestOptions());
}

TEST(NcclEnv, GidIndexOnlyForNcclBefore221) {
  for (const auto& [version, want] : std::vector<std::pair<std::string, std::string>>{
           {"2.18.5", "3"}, {"v2.20.3-1", "3"}, {"2.21.5", ""}, {"2.23", ""}, {"", ""}}) {
    auto hm = BuildForNccl("roce-sriov", version);
    ASSERT_TRUE(hm.ok()) << hm.status().message();
    const json* data = NcclData(*hm);
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(data->value("NCCL_IB_GID_INDEX", ""), want) << version;
  }
}

TEST(NcclEnv, NoFixedGidIndexInSharedModeButAWarning) {
  auto hm = BuildForNccl("roce-shared-macvlan", "2.18.5");
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const json* data = NcclData(*hm);
  ASSERT_NE(data, nullptr);
  EXPECT_FALSE(data->contains("NCCL_IB_GID_INDEX"));
  EXPECT_TRUE(Warned(*hm, "NCCL_IB_GID_INDEX not set for NCCL 2.18.5"));
}

TEST(NcclEnv, InfinibandNeedsNoGidIndex) {
  auto hm = BuildForNccl("ib-sriov", "2.18.5");
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const json* data = NcclData(*hm);
  if (data != nullptr) {
    EXPECT_FALSE(data->contains("NCCL_IB_GID_INDEX"));
  }
  EXPECT_FALSE(Warned(*hm, "NCCL_IB_GID_INDEX"));
}

TEST(NcclEnv, VersionComesFromHostYaml) {
  std::ifstream in("examples/roce-sriov.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string yaml = text.str();
  const std::string anchor = "    workloadNamespaces: [default]";
  const size_t at = yaml.find(anchor);
  ASSERT_NE(at, std::string::npos);
  yaml.insert(at + anchor.size(),
              "\n    nccl:\n      version: \"2.19.3\"\n    ibKubernetes: {smPlugin: noop}");
  LoadResult r = LoadDesiredStateFromString(yaml, "host.yaml");
  ASSERT_TRUE(r.state.has_value());
  EXPECT_EQ(r.state->kubernetes->nccl_version.value_or(""), "2.19.3");
  ASSERT_TRUE(r.state->kubernetes->ib_kubernetes.has_value());
  EXPECT_EQ(r.state->kubernetes->ib_kubernetes->sm_plugin, "noop");
  yaml.replace(yaml.find("\"2.19.3\""), 8, "\"latest\"");
  LoadResult bad = LoadDesiredStateFromString(yaml, "host.yaml");
  EXPECT_FALSE(bad.state.has_value());
}

// -- ib-kubernetes ---------------------------------------------------------

uint64_t Guid(const std::string& colon_hex) {
  uint64_t g = 0;
  for (char c : colon_hex) {
    if (c == ':') continue;
    g = g << 4 | static_cast<uint64_t>(std::stoi(std::string(1, c), nullptr, 16));
  }
  return g;
}

TEST(IbKubernetes, ConfigMapPoolNeverHoldsAVfGuidApplySets) {
  DesiredState d = Load("ib-sriov");
  if (!d.kubernetes) d.kubernetes = KubernetesSpec();
  d.kubernetes->ib_kubernetes = IbKubernetesSpec();
  auto hm = BuildHostManifests(d, ManifestOptions());
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  const Manifest* cm = Find(hm->manifests, "ConfigMap", "ib-kubernetes-config");
  ASSERT_NE(cm, nullptr);
  EXPECT_EQ(cm->Namespace(), "kube-system");
  const json& data = cm->doc["data"];
  EXPECT_EQ(data["DAEMON_SM_PLUGIN"], "ufm");
  const uint64_t start = Guid(data["GUID_POOL_RANGE_START"]);
  const uint64_t end = Guid(data["GUID_POOL_RANGE_END"]);
  // ib-kubernetes' own rule (pkg/guid isValidRange).
  EXPECT_TRUE(start <= end && start != 0 && end != ~0ULL);
  // Node GUIDs of every shape: each first byte, Mellanox OUIs, all-zero and
  // all-one tails; every VF number a PF can have.
  for (int b0 = 0; b0 < 256; ++b0) {
    for (uint64_t tail :
         {0x0ULL, 0x0002c90300a1b2c3ULL, 0x000c42a1035b7c2eULL, 0x00ffffffffffffffULL}) {
      const uint64_t pf = (static_cast<uint64_t>(b0) << 56) | (tail & 0x00ffffffffffffffULL);
      for (int vf : {0, 1, 7, 126, 254, 1023}) {
        const uint64_t g = DeriveVfGuid(pf, vf);
        EXPECT_FALSE(g >= start && g <= end) << std::hex << pf << " vf " << std::dec << vf;
      }
    }
  }
}

TEST(IbKubernetes, DefaultPoolCheckAgreesWithTheDerivedGuids) {
  const uint64_t start = 0x0200000000000000ULL, end = 0x02ffffffffffffffULL;  // its envDefault
  for (int b0 = 0; b0 < 256; ++b0) {
    char guid[32];
    std::snprintf(guid, sizeof guid, "%02x02:c903:00a1:b2c3", b0);
    const uint64_t g = DeriveVfGuid(Guid(guid), 3);
    EXPECT_EQ(VfGuidsInIbKubernetesDefaultPool(guid), g >= start && g <= end) << guid;
  }
  EXPECT_TRUE(VfGuidsInIbKubernetesDefaultPool("0002:c903:00a1:b2c3"));
  EXPECT_FALSE(VfGuidsInIbKubernetesDefaultPool("0c42:a103:005b:7c2e"));
}

// The ib-sriov guide's PF, discovered with a node GUID of the given OUI.
HostFacts IbPfFacts(const std::string& node_guid) {
  HostFacts f;
  PciFunction pf;
  pf.pci_address = "0000:86:00.0";
  pf.vendor = "15b3";
  pf.device_id = "1017";
  pf.class_code = 0x020700;  // InfiniBand controller
  pf.netdevs = {"ibs5f0"};
  pf.sriov = SriovInfo();
  pf.sriov->total_vfs = 16;
  pf.sriov->ib_node_guid = node_guid;
  f.pci.push_back(pf);
  return f;
}

TEST(IbKubernetes, WarnsWhenTheVfGuidsLieInItsDefaultPool) {
  for (const auto& [guid, warned] : std::vector<std::pair<std::string, bool>>{
           {"0002:c903:00a1:b2c3", true}, {"0c42:a103:005b:7c2e", false}}) {
    const HostFacts facts = IbPfFacts(guid);
    ManifestOptions opt;
    opt.facts = &facts;
    auto hm = BuildHostManifests(Load("ib-sriov"), opt);
    ASSERT_TRUE(hm.ok()) << hm.status().message();
    EXPECT_EQ(Warned(*hm, "lie in ib-kubernetes' default GUID pool"), warned) << guid;
    // With ibKubernetes set, its pool moves away: nothing to say.
    DesiredState d = Load("ib-sriov");
    if (!d.kubernetes) d.kubernetes = KubernetesSpec();
    d.kubernetes->ib_kubernetes = IbKubernetesSpec();
    auto set = BuildHostManifests(d, opt);
    ASSERT_TRUE(set.ok()) << set.status().message();
    EXPECT_FALSE(Warned(*set, "default GUID pool")) << guid;
  }
}

TEST(IbKubernetes, NoConfigMapUnlessAsked) {
  auto hm = BuildHostManifests(Load("ib-sriov"), ManifestOptions());
  ASSERT_TRUE(hm.ok()) << hm.status().message();
  EXPECT_EQ(Find(hm->manifests, "ConfigMap", "ib-kubernetes-config"), nullptr);
}

}  // namespace
}  // namespace provisioner::manifests
