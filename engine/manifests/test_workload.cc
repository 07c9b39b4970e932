// --with-test-workload: what every Spiderpool RDMA guide ends with, done by
// the pods themselves. A DaemonSet (one pod per selected node, every multus
// config attached, each RDMA resource asked for once, IPC_LOCK for memory
// registration, the NCCL environment of nccl-env-<node or pool>) and a
// headless Service that lets its pods find each other on the default
// network. Each pod prints the RDMA devices it received (`rdma link`), its
// netdevs and `ip rule`, and per rail (net1, net2, ... in order) the RDMA
// device, the RoCE v2 GID of the rail's address and the policy routing
// Spiderpool's coordinator set up for it (read in spidernet-io/spiderpool
// v0.9.10, cmd/coordinator/cmd/utils.go and pkg/networking/networking/
// route.go; unchanged through v1.2): netN gets table 100+N (eth0 keeps 100),
// the rule `from <netN address> lookup <100+N>` without a priority (the
// kernel numbers it below the lowest non-zero one: 32765, 32764, ... before
// main's 32766), and netN's routes moved out of main into that table, the
// default route via the pool's gateway among them (the guides' `ip route show
// table 101`: "default via 172.16.11.254 dev net1"). A rail passes when the
// rule exists before main and the table holds its default route (a pool with
// a gateway: GATEWAY_RAILS) or a route via the rail.
// The pods then form a ring by their default-network addresses: each serves
// the pod before it and runs ib_write_bw and ib_read_lat over each of its
// rails against the same rail of the pod after it (two pods: both
// directions; each direction of a link carries one stream), the control
// connection on the default network as in the guides. The remote GID
// perftest prints (a RoCE v2 GID holds the peer rail's IPv4 address) gives
// the peer's rail address, and `ip route get <peer> from <rail address>` must
// leave by that rail. One line per rail:
//   rail 1 net1 mlx5_13 gid 3 -> 10.233.74.5: ib_write_bw 97.51 Gb/s,
//   ib_read_lat 1.96 us; route to 172.16.11.7 leaves by net1: ok
// and "== rail checks: <n> passed, <m> failed" at the end. `kubectl logs -n
// <ns> -l app=rdma-test` shows it (docs/kubernetes.md).
#include "engine/manifests/host_view.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

// POSIX sh (the rdma-tools image: perftest, iproute2's rdma). SERVICE,
// PORT0 and GATEWAY_RAILS come from the container's env; shellcheck-clean
// (manifests_workload_test runs it).
constexpr const char* kScript = R"SH(set -u
addr4() { ip -4 -o addr show dev "$1" 2>/dev/null | awk '{split($4, a, "/"); print a[1]; exit}'; }
myip=$(addr4 eth0)
echo "== pod $(hostname) node ${NODE_NAME:-?} eth0 ${myip:-?}"
echo "-- rdma link"
rdma link show 2>&1
echo "-- netdevs"
ip -br addr show 2>&1
echo "-- ip rule"
ip rule show 2>&1
# The RDMA device and GID index of a rail: the RoCE v2 GID that holds the
# rail's IPv4 address (exclusive and shared mode), else the device rdma link
# or the VF's PCI device names ("-": InfiniBand needs no GID index).
rail_dev() {
  ip4=$(addr4 "$1")
  if [ -n "$ip4" ]; then
    hex=$(echo "$ip4" | awk -F. '{printf "%02x%02x:%02x%02x", $1, $2, $3, $4}')
    for g in /sys/class/infiniband/*/ports/*/gids/*; do
      [ -r "$g" ] || continue
      case "$(cat "$g" 2>/dev/null)" in *":ffff:$hex") ;; *) continue ;; esac
      i=${g##*/}; p=${g%/gids/*}
      [ "$(cat "$p/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
      d=${p%/ports/*}; echo "${d##*/} $i"; return
    done
  fi
  d=$(rdma link show 2>/dev/null | awk -v n="$1" '{for (f = 1; f < NF; f++) if ($f == "netdev" && $(f+1) == n) {split($2, a, "/"); print a[1]; exit}}')
  if [ -z "$d" ]; then
    for x in "/sys/class/net/$1/device/infiniband"/*; do
      [ -e "$x" ] && d=${x##*/} && break
    done
  fi
  [ -n "$d" ] && echo "$d -"
}
# Spiderpool's coordinator gives netN routing table 100+N: the rule
# `from <netN address> lookup <100+N>` (no priority given: the kernel puts it
# before main's 32766) and netN's routes moved there from main, the default
# route via the pool's gateway included. GATEWAY_RAILS: the rails whose pool
# has a gateway.
passed=0; failed=0
verdict() {
  if [ "$1" = ok ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
route_check() {
  n=$1; a=$2; t=$((100 + ${n#net}))
  pref=$(ip -4 rule show | awk -v a="$a" -v t="$t" '$2 == "from" && $3 == a && $4 == "lookup" && $5 == t {sub(":", "", $1); print $1; exit}')
  if [ -n "$pref" ] && [ "$pref" -lt 32766 ]; then r="ok"; else r="FAILED"; fi
  verdict "$r"
  echo "-- rail $n: rule from $a lookup $t${pref:+ (pref $pref)}: $r"
  want="dev $n"
  case " ${GATEWAY_RAILS:-} " in *" $n "*) want="default" ;; esac
  line=$(ip -4 route show table "$t" 2>/dev/null | grep -- "$want" | grep -- "dev $n" | head -n 1)
  if [ -n "$line" ]; then r="ok"; else r="FAILED"; fi
  verdict "$r"
  echo "-- rail $n: table $t ${line:-has no $want route via $n}: $r"
}
rails=""
i=1
while [ -e "/sys/class/net/net$i" ]; do
  n="net$i"; i=$((i + 1))
  a=$(addr4 "$n")
  r=$(rail_dev "$n")
  echo "-- rail $n ${a:-no IPv4}: ${r:-no RDMA device}"
  [ -n "$a" ] && route_check "$n" "$a"
  [ -n "$r" ] && rails="$rails $n:${a:--}:$(echo "$r" | tr ' ' ':')"
done
# Peers: the Service's pods by address, a ring: each pod serves the one
# before it and measures every rail against the one after it (two pods: both
# directions), so every node's rails send and receive.
peers=""
for _ in $(seq 1 60); do
  peers=$(getent ahostsv4 "$SERVICE" | awk '{print $1}' | sort -u -t . -k 1,1n -k 2,2n -k 3,3n -k 4,4n)
  [ "$(echo "$peers" | grep -c .)" -ge 2 ] && break
  sleep 5
done
count=$(echo "$peers" | grep -c .)
me=$(echo "$peers" | awk -v m="${myip:-}" '$1 == m {print NR; exit}')
if [ "$count" -lt 2 ] || [ -z "$me" ]; then
  echo "-- one pod only: no rail measured (the DaemonSet needs two nodes)"
else
  next=$(echo "$peers" | sed -n "$((me % count + 1))p")
  prev=$(echo "$peers" | sed -n "$(((me + count - 2) % count + 1))p")
  echo "-- serving rails for $prev, measuring against $next"
  k=0
  for r in $rails; do
    dev=$(echo "$r" | cut -d: -f3); gid=$(echo "$r" | cut -d: -f4)
    [ "$gid" = "-" ] && gid=""
    port=$((PORT0 + 2 * k))
    (while :; do ib_write_bw -d "$dev" ${gid:+-x "$gid"} -p "$port" --report_gbits >/dev/null 2>&1; done) &
    (while :; do ib_read_lat -d "$dev" ${gid:+-x "$gid"} -p $((port + 1)) >/dev/null 2>&1; done) &
    k=$((k + 1))
  done
  sleep 10
  k=0
  for r in $rails; do
    n=$(echo "$r" | cut -d: -f1); a=$(echo "$r" | cut -d: -f2)
    dev=$(echo "$r" | cut -d: -f3); gid=$(echo "$r" | cut -d: -f4)
    shown=$gid; [ "$gid" = "-" ] && gid=""
    port=$((PORT0 + 2 * k)); k=$((k + 1))
    bw=""; lat=""; peer=""
    for _ in 1 2 3 4 5; do
      out=$(ib_write_bw -d "$dev" ${gid:+-x "$gid"} -p "$port" --report_gbits "$next" 2>&1)
      bw=$(echo "$out" | awk '$1 ~ /^[0-9]+$/ && NF >= 4 {v = $4} END {print v}')
      # perftest prints the remote GID in decimal bytes; a RoCE v2 IPv4 GID
      # (::ffff:a.b.c.d) names the peer's rail address.
      peer=$(echo "$out" | awk '/remote address/ {r = 1; next} r && /GID:/ {sub(/.*GID: */, ""); n = split($0, b, ":"); if (n == 16 && b[11] + 0 == 255 && b[12] + 0 == 255) print b[13] + 0 "." b[14] + 0 "." b[15] + 0 "." b[16] + 0; exit}')
      [ -n "$bw" ] && break
      sleep 3
    done
    for _ in 1 2 3 4 5; do
      lat=$(ib_read_lat -d "$dev" ${gid:+-x "$gid"} -p $((port + 1)) "$next" 2>&1 | awk '$1 ~ /^[0-9]+$/ && NF >= 5 {v = $5} END {print v}')
      [ -n "$lat" ] && break
      sleep 3
    done
    if [ -n "$bw" ]; then verdict ok; else verdict FAILED; fi
    route="no peer rail address (InfiniBand or no IPv4 GID)"
    if [ -n "$peer" ] && [ "$a" != "-" ]; then
      via=$(ip -4 route get "$peer" from "$a" 2>&1 | awk '{for (f = 1; f < NF; f++) if ($f == "dev") {print $(f+1); exit}}')
      if [ "$via" = "$n" ]; then route="route to $peer leaves by $n: ok"; verdict ok
      else route="route to $peer leaves by ${via:-?}, not $n: FAILED"; verdict FAILED; fi
    fi
    echo "rail $k $n $dev gid $shown -> $next: ib_write_bw ${bw:-FAILED} Gb/s, ib_read_lat ${lat:-FAILED} us; $route"
  done
  [ -z "$rails" ] && echo "-- no rail with an RDMA device in this pod"
fi
echo "== rail checks: $passed passed, $failed failed"
sleep infinity
)SH";

// The rails (net1, net2, ... in the order of the networks annotation) whose
// IPv4 pool has a gateway: the coordinator moves their default route into
// their table.
std::string GatewayRails(const DesiredState& d) {
  std::string out;
  for (size_t i = 0; i < d.multus_configs.size(); ++i) {
    bool gateway = false;
    for (const std::string& pool : d.multus_configs[i].ippools.ipv4) {
      for (const IpPoolSpec& p : d.ip_pools) gateway = gateway || (p.name == pool && p.gateway);
    }
    if (gateway) out += (out.empty() ? "net" : " net") + std::to_string(i + 1);
  }
  return out;
}

}  // namespace

std::vector<Manifest> TestDaemonSet(const HostView& view, const std::string& name,
                                    const std::string& ns, const json& pod_annotations,
                                    json container, std::optional<json> volume) {
  const DesiredState& d = view.desired();
  json labels = {{"app", name}};
  json pod_spec = {{"containers", json::array({std::move(container)})}};
  if (volume) pod_spec["volumes"] = json::array({*volume});
  if (d.kubernetes && !d.kubernetes->node_selector.empty()) {
    pod_spec["nodeSelector"] = d.kubernetes->node_selector;
  }
  json meta = {{"labels", labels}};
  if (!pod_annotations.empty()) meta["annotations"] = pod_annotations;
  json ds = Object("apps/v1", "DaemonSet", name, ns);
  ds["spec"] = {{"selector", {{"matchLabels", labels}}},
                {"template", {{"metadata", meta}, {"spec", pod_spec}}}};
  // Headless, not-ready pods included: the pods find each other by DNS
  // before the measurement (each pod is ready from its start).
  json svc = Object("v1", "Service", name, ns);
  svc["spec"] = {{"clusterIP", "None"},
                 {"publishNotReadyAddresses", true},
                 {"selector", labels},
                 {"ports", json::array({{{"name", "perftest"}, {"port", 18515}}})}};
  return {Manifest{"DaemonSet", name, ds}, Manifest{"Service", name, svc}};
}

json TestContainerEnv(const std::string& name, const std::string& ns) {
  return json::array(
      {{{"name", "NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
       {{"name", "SERVICE"}, {"value", name + "." + ns + ".svc"}}});
}

StatusOr<std::vector<Manifest>> TestWorkloadManifests(HostView& view, bool with_nccl_env,
                                                      const std::string& ns) {
  const DesiredState& d = view.desired();
  if (d.multus_configs.empty()) {
    return InvalidArgumentError(
        "--with-test-workload: host.yaml has no spec.multusConfigs to attach");
  }
  json networks = json::array();
  json limits = json::object();
  for (const auto& mc : d.multus_configs) {
    networks.push_back(mc.namespace_name + "/" + mc.name);
    ASSIGN_OR_RETURN(NicRef ref, view.FindNic(mc.nic));
    if (IsVfCni(mc.cni_type)) {
      ASSIGN_OR_RETURN(std::string res, view.SriovResource(ref, mc));
      limits[view.ResourcePrefix() + "/" + res] = 1;
    } else if (d.kubernetes && d.kubernetes->rdma_shared_device_plugin) {
      limits[view.ResourcePrefix() + "/" + d.kubernetes->rdma_shared_device_plugin->resource_name] =
          1;
    }
  }
  std::string joined;
  for (const auto& n : networks) joined += (joined.empty() ? "" : ",") + n.get<std::string>();
  const std::string name = "rdma-test";
  json env = TestContainerEnv(name, ns);
  env.push_back({{"name", "PORT0"}, {"value", "18515"}});
  env.push_back({{"name", "GATEWAY_RAILS"}, {"value", GatewayRails(d)}});
  json container = {{"name", "rdma-tools"},
                    {"image", kRdmaToolsImage},
                    {"imagePullPolicy", "IfNotPresent"},
                    {"command", json::array({"/bin/sh", "-c", kScript})},
                    {"env", env},
                    {"securityContext", {{"capabilities", {{"add", json::array({"IPC_LOCK"})}}}}}};
  if (with_nccl_env) {
    container["envFrom"] = json::array({{{"configMapRef", {{"name", NcclEnvName(view)}}}}});
  }
  if (!limits.empty()) container["resources"] = {{"limits", limits}};
  std::vector<Manifest> out = TestDaemonSet(
      view, name, ns, {{"k8s.v1.cni.cncf.io/networks", joined}}, container, std::nullopt);
  ASSIGN_OR_RETURN(std::vector<Manifest> ipoib, IpoibTestManifests(view, ns));
  for (auto& m : ipoib) out.push_back(std::move(m));
  ASSIGN_OR_RETURN(std::vector<Manifest> inject, InjectTestManifests(view, ns));
  for (auto& m : inject) out.push_back(std::move(m));
  return out;
}

}  // namespace provisioner::manifests
