// --with-test-workload, Spiderpool's "webhook-based automatic RDMA resource
// injection" (v1.0 and later): for each rdmaResourceInject value, a
// DaemonSet rdma-inject-test (-<n> with several values) whose pods carry only
// the annotation cni.spidernet.io/rdma-resource-inject: <value>: no networks
// annotation and no resources, since the webhook writes both (read in
// spidernet-io/spiderpool v1.0.0 pkg/podmanager/utils.go: it lists the
// SpiderMultusConfigs labelled with the value, sets
// k8s.v1.cni.cncf.io/networks to "ns/name,ns/name" and adds each config's
// resource to the first container's limits). Each pod checks what it got:
// the networks annotation (downward API, /etc/podinfo/annotations) names
// every config of the value, the SR-IOV device plugin's PCIDEVICE_<resource>
// variable is set for every VF resource, RDMA devices are present, and it
// has one netN per config; "== inject checks: <n> passed, <m> failed" ends
// the log. The pod's namespace must be one the webhook serves (the chart
// values' namespacesInclude/Exclude, helm_values.cc).
#include <algorithm>
#include <cctype>
#include <map>

#include "engine/manifests/host_view.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

// POSIX sh; EXPECT_NETWORKS, EXPECT_DEVICE_ENV and EXPECT_RDMA from the env;
// shellcheck-clean (manifests_workload_test runs it).
constexpr const char* kInjectScript = R"SH(set -u
echo "== pod $(hostname) node ${NODE_NAME:-?}"
passed=0; failed=0
verdict() {
  if [ "$1" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
# The webhook writes the configs it found as "ns/name,ns/name" (pkg/podmanager
# InjectPodNetwork); the downward API shows the pod's annotations as key="value".
nets=$(grep '^k8s.v1.cni.cncf.io/networks=' /etc/podinfo/annotations 2>/dev/null | sed 's/^[^=]*="//; s/"$//')
echo "-- networks the webhook wrote: ${nets:-none}"
for want in $EXPECT_NETWORKS; do
  case ",$nets," in *",$want,"*) r=ok ;; *) r=FAILED ;; esac
  verdict "$r"
  echo "-- network $want: $r"
done
# Each injected VF resource: the SR-IOV device plugin's PCIDEVICE_<resource> env.
for var in ${EXPECT_DEVICE_ENV:-}; do
  val=$(printenv "$var")
  if [ -n "$val" ]; then r=ok; else r=FAILED; fi
  verdict "$r"
  echo "-- resource env $var=${val:-unset}: $r"
done
if [ "${EXPECT_RDMA:-0}" = 1 ]; then
  devs=""
  for x in /dev/infiniband/uverbs*; do [ -e "$x" ] && devs="$devs ${x##*/}"; done
  if [ -n "$devs" ]; then r=ok; else r=FAILED; fi
  verdict "$r"
  echo "-- RDMA devices:${devs:- none}: $r"
fi
k=0
while [ -e "/sys/class/net/net$((k + 1))" ]; do k=$((k + 1)); done
want=$(echo "$EXPECT_NETWORKS" | wc -w)
if [ "$k" -eq "$want" ]; then r=ok; else r=FAILED; fi
verdict "$r"
echo "-- interfaces net1..net$k, $want networks: $r"
echo "== inject checks: $passed passed, $failed failed"
sleep infinity
)SH";

// The sriov-network-device-plugin's variable for a resource:
// "spidernet.io/gpu1rdma" -> "PCIDEVICE_SPIDERNET_IO_GPU1RDMA".
std::string DevicePluginEnv(const std::string& resource) {
  std::string out = "PCIDEVICE_";
  for (char c : resource) {
    out += (c == '/' || c == '.' || c == '-')
               ? '_'
               : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<Manifest>> InjectTestManifests(HostView& view, const std::string& ns) {
  const DesiredState& d = view.desired();
  std::vector<Manifest> out;
  if (view.options().flavor != "spiderpool" || view.SpiderpoolV09()) return out;
  // value -> the configs that carry it, in host.yaml order.
  std::map<std::string, std::vector<const MultusConfigSpec*>> by_value;
  for (const MultusConfigSpec& mc : d.multus_configs) {
    if (mc.rdma_resource_inject) by_value[*mc.rdma_resource_inject].push_back(&mc);
  }
  const bool shared_plugin = d.kubernetes && d.kubernetes->rdma_shared_device_plugin;
  int n = 0;
  for (const auto& [value, configs] : by_value) {
    ++n;
    std::string networks, device_env;
    bool rdma = false;
    for (const MultusConfigSpec* mc : configs) {
      networks += (networks.empty() ? "" : " ") + mc->namespace_name + "/" + mc->name;
      ASSIGN_OR_RETURN(NicRef ref, view.FindNic(mc->nic));
      if (IsVfCni(mc->cni_type)) {
        ASSIGN_OR_RETURN(std::string res, view.SriovResource(ref, *mc));
        const std::string var = DevicePluginEnv(view.ResourcePrefix() + "/" + res);
        if (device_env.find(var) == std::string::npos) {
          device_env += (device_env.empty() ? "" : " ") + var;
        }
        rdma = rdma || view.VfIsRdma(ref, *mc);
      } else if (mc->cni_type != "ipoib" && shared_plugin) {
        rdma = true;
      }
    }
    const std::string name =
        by_value.size() == 1 ? "rdma-inject-test" : "rdma-inject-test-" + std::to_string(n);
    json env = TestContainerEnv(name, ns);
    env.push_back({{"name", "EXPECT_NETWORKS"}, {"value", networks}});
    env.push_back({{"name", "EXPECT_DEVICE_ENV"}, {"value", device_env}});
    env.push_back({{"name", "EXPECT_RDMA"}, {"value", rdma ? "1" : "0"}});
    json container = {
        {"name", "rdma-tools"},
        {"image", kRdmaToolsImage},
        {"imagePullPolicy", "IfNotPresent"},
        {"command", json::array({"/bin/sh", "-c", kInjectScript})},
        {"env", env},
        {"volumeMounts", json::array({{{"name", "podinfo"}, {"mountPath", "/etc/podinfo"}}})}};
    json volume = {
        {"name", "podinfo"},
        {"downwardAPI",
         {{"items", json::array({{{"path", "annotations"},
                                  {"fieldRef", {{"fieldPath", "metadata.annotations"}}}}})}}}};
    std::vector<Manifest> ms = TestDaemonSet(
        view, name, ns, {{"cni.spidernet.io/rdma-resource-inject", value}}, container, volume);
    for (auto& m : ms) out.push_back(std::move(m));
  }
  return out;
}

}  // namespace provisioner::manifests
