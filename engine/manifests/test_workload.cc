// --with-test-workload: what every Spiderpool RDMA guide ends with, done by
// the pods themselves. A DaemonSet (one pod per selected node, every multus
// config attached, each RDMA resource asked for once, IPC_LOCK for memory
// registration, the NCCL environment of nccl-env-<node or pool>) and a
// headless Service that lets its pods find each other on the default
// network. Each pod prints the RDMA devices it received (`rdma link`), its
// netdevs and, per rail (net1, net2, ... in order), the RDMA device and the
// RoCE v2 GID of the rail's address. The pod with the lowest default-network
// address then runs ib_write_bw and ib_read_lat over each rail against the
// pod with the next one (another node: one pod per node), the control
// connection on the default network as in the guides, and prints one line per
// rail:
//   rail 1 net1 mlx5_13 gid 3 -> 10.233.74.5: ib_write_bw 97.51 Gb/s, ib_read_lat 1.96 us
// `kubectl logs -n <ns> -l app=rdma-test` shows it (docs/kubernetes.md).
#include "engine/manifests/host_view.h"

namespace provisioner::manifests {
namespace {

using nlohmann::json;

// POSIX sh (the rdma-tools image: perftest, iproute2's rdma). SERVICE and
// PORT0 come from the container's env.
constexpr const char* kScript = R"SH(set -u
myip=$(ip -4 -o addr show dev eth0 | awk '{split($4, a, "/"); print a[1]; exit}')
echo "== pod $(hostname) node ${NODE_NAME:-?} eth0 ${myip:-?}"
echo "-- rdma link"
rdma link show 2>&1
echo "-- netdevs"
ip -br addr show 2>&1
# The RDMA device and GID index of a rail: the RoCE v2 GID that holds the
# rail's IPv4 address (exclusive and shared mode), else the device rdma link
# or the VF's PCI device names (InfiniBand: no GID index needed).
rail_dev() {
  ip4=$(ip -4 -o addr show dev "$1" | awk '{split($4, a, "/"); print a[1]; exit}')
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
  [ -z "$d" ] && d=$(ls "/sys/class/net/$1/device/infiniband" 2>/dev/null | head -n 1)
  [ -n "$d" ] && echo "$d -"
}
rails=""
for n in $(ls /sys/class/net | grep '^net[0-9]' | sort -t t -k 2 -n); do
  r=$(rail_dev "$n")
  echo "-- rail $n: ${r:-no RDMA device}"
  [ -n "$r" ] && rails="$rails $n:$(echo "$r" | tr ' ' ':')"
done
# Peers: the Service's pods, by address; the lowest measures against the next.
peers=""
for t in $(seq 1 60); do
  peers=$(getent ahostsv4 "$SERVICE" | awk '{print $1}' | sort -u -t . -k 1,1n -k 2,2n -k 3,3n -k 4,4n)
  [ "$(echo "$peers" | grep -c .)" -ge 2 ] && break
  sleep 5
done
first=$(echo "$peers" | sed -n 1p); second=$(echo "$peers" | sed -n 2p)
if [ -z "$second" ]; then
  echo "-- one pod only: no rail measured (the DaemonSet needs two nodes)"
elif [ "$myip" = "$second" ]; then
  echo "-- serving rails for $first"
  k=0
  for r in $rails; do
    dev=$(echo "$r" | cut -d: -f2); gid=$(echo "$r" | cut -d: -f3)
    x=""; [ "$gid" != "-" ] && x="-x $gid"
    port=$((PORT0 + 2 * k))
    (while :; do ib_write_bw -d "$dev" $x -p "$port" --report_gbits >/dev/null 2>&1; done) &
    (while :; do ib_read_lat -d "$dev" $x -p $((port + 1)) >/dev/null 2>&1; done) &
    k=$((k + 1))
  done
elif [ "$myip" = "$first" ]; then
  sleep 10
  k=0
  for r in $rails; do
    n=$(echo "$r" | cut -d: -f1); dev=$(echo "$r" | cut -d: -f2); gid=$(echo "$r" | cut -d: -f3)
    x=""; [ "$gid" != "-" ] && x="-x $gid"
    port=$((PORT0 + 2 * k)); k=$((k + 1))
    bw=""; lat=""
    for t in 1 2 3 4 5; do
      bw=$(ib_write_bw -d "$dev" $x -p "$port" --report_gbits "$second" 2>&1 | awk '$1 ~ /^[0-9]+$/ && NF >= 4 {v = $4} END {print v}')
      [ -n "$bw" ] && break
      sleep 3
    done
    for t in 1 2 3 4 5; do
      lat=$(ib_read_lat -d "$dev" $x -p $((port + 1)) "$second" 2>&1 | awk '$1 ~ /^[0-9]+$/ && NF >= 5 {v = $5} END {print v}')
      [ -n "$lat" ] && break
      sleep 3
    done
    echo "rail $k $n $dev gid $gid -> $second: ib_write_bw ${bw:-FAILED} Gb/s, ib_read_lat ${lat:-FAILED} us"
  done
  [ -z "$rails" ] && echo "-- no rail with an RDMA device in this pod"
fi
sleep infinity
)SH";

}  // namespace

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
  json labels = {{"app", name}};
  json env = json::array(
      {{{"name", "NODE_NAME"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "spec.nodeName"}}}}}},
       {{"name", "SERVICE"}, {"value", name + "." + ns + ".svc"}},
       {{"name", "PORT0"}, {"value", "18515"}}});
  json container = {{"name", "rdma-tools"},
                    {"image", "ghcr.io/spidernet-io/rdma-tools:latest"},
                    {"imagePullPolicy", "IfNotPresent"},
                    {"command", json::array({"/bin/sh", "-c", kScript})},
                    {"env", env},
                    {"securityContext", {{"capabilities", {{"add", json::array({"IPC_LOCK"})}}}}}};
  if (with_nccl_env) {
    container["envFrom"] = json::array({{{"configMapRef", {{"name", NcclEnvName(view)}}}}});
  }
  if (!limits.empty()) container["resources"] = {{"limits", limits}};
  json pod_spec = {{"containers", json::array({container})}};
  if (d.kubernetes && !d.kubernetes->node_selector.empty()) {
    pod_spec["nodeSelector"] = d.kubernetes->node_selector;
  }
  json ds = Object("apps/v1", "DaemonSet", name, ns);
  ds["spec"] = {
      {"selector", {{"matchLabels", labels}}},
      {"template",
       {{"metadata",
         {{"labels", labels}, {"annotations", {{"k8s.v1.cni.cncf.io/networks", joined}}}}},
        {"spec", pod_spec}}}};
  // Headless, not-ready pods included: the pods find each other by DNS
  // before the measurement (each pod is ready from its start).
  json svc = Object("v1", "Service", name, ns);
  svc["spec"] = {{"clusterIP", "None"},
                 {"publishNotReadyAddresses", true},
                 {"selector", labels},
                 {"ports", json::array({{{"name", "perftest"}, {"port", 18515}}})}};
  return std::vector<Manifest>{Manifest{"DaemonSet", name, ds}, Manifest{"Service", name, svc}};
}

}  // namespace provisioner::manifests
