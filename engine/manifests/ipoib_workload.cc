// --with-test-workload, IPoIB: the Spiderpool InfiniBand guide's IPoIB
// pods, which carry TCP/IP over the fabric and nothing else. A DaemonSet
// ipoib-test with only the cniType ipoib configs attached, no resource
// asked for (the ipoib CNI makes a child of the PF's IPoIB netdev in the pod;
// no VF and no RDMA device is involved), and its headless Service. Each pod
// checks that it holds no RDMA device (/dev/infiniband/uverbs*), that every
// netN is IPoIB (link type 32, ARPHRD_INFINIBAND), and pings the other pods
// over each: their IPoIB addresses are not known beforehand, so one ping goes
// to every address of the /24 around the pod's own and the neighbours that
// answered are pinged three times:
//   ipoib net1 172.91.0.12 -> 172.91.0.13: ping 3/3, avg 0.061 ms: ok
//   -- net1: 1 IPoIB peers answered, 1 other pods: ok
// and "== ipoib checks: <n> passed, <m> failed" at the end (`kubectl logs -n
// <ns> -l app=ipoib-test`, docs/kubernetes.md). Peers outside that /24 are
// not found: a limit of the check, said in the docs.
#include "engine/manifests/host_view.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

// POSIX sh (iproute2, iputils ping); SERVICE from the env; shellcheck-clean
// (manifests_workload_test runs it).
constexpr const char* kIpoibScript = R"SH(set -u
addr4() { ip -4 -o addr show dev "$1" 2>/dev/null | awk '{print $4; exit}'; }
echo "== pod $(hostname) node ${NODE_NAME:-?} eth0 $(addr4 eth0)"
ip -br addr show 2>&1
passed=0; failed=0
verdict() {
  if [ "$1" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
# No RDMA device: the pod asked for none, and the ipoib CNI moves only a netdev.
devs=""
for x in /dev/infiniband/uverbs*; do [ -e "$x" ] && devs="$devs ${x##*/}"; done
if [ -z "$devs" ]; then r=ok; else r=FAILED; fi
verdict "$r"
echo "-- RDMA devices in the pod: ${devs:-none}: $r"
# The other pods of the DaemonSet, by their eth0 addresses.
count=0
for _ in $(seq 1 60); do
  count=$(getent ahostsv4 "$SERVICE" | awk '{print $1}' | sort -u | grep -c .)
  [ "$count" -ge 2 ] && break
  sleep 5
done
i=1
while [ -e "/sys/class/net/net$i" ]; do
  n="net$i"; i=$((i + 1))
  # ARPHRD_INFINIBAND (32): an IPoIB netdev.
  lt=$(cat "/sys/class/net/$n/type" 2>/dev/null)
  if [ "$lt" = 32 ]; then r=ok; else r=FAILED; fi
  verdict "$r"
  echo "-- $n link type ${lt:-?} (32: IPoIB): $r"
  cidr=$(addr4 "$n")
  [ -n "$cidr" ] || { verdict FAILED; echo "-- $n: no IPv4 address: FAILED"; continue; }
  a=${cidr%/*}
  # The peers' IPoIB addresses are found on the wire: one ping to every
  # address of the /24 around this pod's (Spiderpool hands them out from the
  # pool's ranges), then the neighbours that answered.
  base=${a%.*}
  for h in $(seq 1 254); do
    [ "$base.$h" = "$a" ] && continue
    ping -c 1 -W 2 -I "$n" "$base.$h" >/dev/null 2>&1 &
  done
  wait
  found=$(ip -4 neigh show dev "$n" | awk '$NF == "REACHABLE" || $NF == "STALE" || $NF == "DELAY" {print $1}')
  k=0
  for p in $found; do
    k=$((k + 1))
    res=$(ping -c 3 -W 2 -I "$n" "$p" 2>&1 | awk -F'[/ ]+' '/packets transmitted/ {got = $4} /^rtt/ {avg = $8} END {print got "/3" (avg != "" ? ", avg " avg " ms" : "")}')
    case "$res" in 0/3*|/3*) r=FAILED ;; *) r=ok ;; esac
    verdict "$r"
    echo "ipoib $n $a -> $p: ping $res: $r"
  done
  if [ "$k" -ge $((count - 1)) ] && [ "$count" -ge 2 ]; then r=ok; else r=FAILED; fi
  [ "$count" -ge 2 ] || r="one pod only"
  [ "$r" = FAILED ] && verdict FAILED
  echo "-- $n: $k IPoIB peers answered, $((count - 1)) other pods: $r"
done
echo "== ipoib checks: $passed passed, $failed failed"
sleep infinity
)SH";

}  // namespace

StatusOr<std::vector<Manifest>> IpoibTestManifests(HostView& view, const std::string& ns) {
  const DesiredState& d = view.desired();
  std::string joined;
  for (const MultusConfigSpec& mc : d.multus_configs) {
    if (mc.cni_type != "ipoib") continue;
    joined += (joined.empty() ? "" : ",") + mc.namespace_name + "/" + mc.name;
  }
  if (joined.empty()) return std::vector<Manifest>{};
  const std::string name = "ipoib-test";
  json container = {{"name", "ipoib"},
                    {"image", kRdmaToolsImage},
                    {"imagePullPolicy", "IfNotPresent"},
                    {"command", json::array({"/bin/sh", "-c", kIpoibScript})},
                    {"env", TestContainerEnv(name, ns)}};
  return TestDaemonSet(view, name, ns, {{"k8s.v1.cni.cncf.io/networks", joined}}, container,
                       std::nullopt);
}

}  // namespace provisioner::manifests
