#!/bin/bash
# bazel run //bench:firmware_boot [-- RUNS]      (as root; results: docs/BENCHMARKS.md)
# Firmware queries on the boot path (issue 17), live-style: the real binary on
# root "/" (so the firmware module runs mstconfig, as on a node) in a private
# mount and network namespace (`unshare -m -n`) whose /sys is a generated
# 10-card host (make_tree --preset bench-10: ten single-port ConnectX-5
# cards, sriov_totalvfs 127) and whose links are a veth per netdev of the
# tree. `mstconfig` is a stand-in first on PATH that sleeps
# $MSTCONFIG_LATENCY seconds per call (default 1: a query or set of a
# ConnectX card, as test/sim Mlx5Latencies) and
# answers like the real tool for a ConnectX-5
# (modules/firmware/testdata/cx5-vpi-ib.query, ports Ethernet), logging when
# each call starts and ends.
#
# Measured (median of RUNS, default 3): wall time, from the exec of
# provisioner (namespace set-up not counted) to its exit, of
#   plan, a host.yaml of 10 nics with numVfs and no firmware field
#   plan, the same with linkType: eth on all 10 nics
#   discover -o json (no host.yaml)
# and, from the stand-in's log, the calls made and the time from the first
# call's start to the last one's end ("firmware ms").
#
# Then the boot path: the systemd unit's ExecStart
# (dist/systemd/provisioner-apply.service) on the rail host (make_tree
# --preset hgx-h100 + examples/rails.yaml: 8 rails, linkType and 12 VFs each)
# with the kernel simulator (test/sim/kernel_sim), once each: with --root
# appended as test/fleet/boot_test.sh runs it (a tree: captured firmware, no
# mstconfig), first boot (creates 8 x 12 VFs) and converged boot; then a
# converged boot live-style (the rails only: spec.rdma and kernelModules
# would act on this machine). No systemd runs here (a container without
# systemd as PID 1): the figure is the ExecStart command line, start to exit.
set -euo pipefail
here="${RUNFILES_DIR:-$0.runfiles}/provisioner"
[ -f "$here/bench/firmware_boot.sh" ] || here="$PWD"
# PROVISIONER_BIN: another build to compare (e.g. main's, for a before/after).
bin="${PROVISIONER_BIN:-$here/engine/cli/provisioner}"
make_tree="$here/test/tools/make_tree"
kernel_sim="$here/test/sim/kernel_sim"
unit="$here/dist/systemd/provisioner-apply.service"
answer_src="$here/modules/firmware/testdata/cx5-vpi-ib.query"
flint_src="$here/modules/firmware/testdata/mstflint-cx5.query"
runs=${1:-3}
latency=${MSTCONFIG_LATENCY:-1}
[[ "$latency" =~ ^[0-9]+(\.[0-9]+)?$ ]] || { echo "MSTCONFIG_LATENCY=$latency: seconds, e.g. 1 or 0.5"; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root (unshare -m -n, mount --bind)"; exit 1; }
work=$(mktemp -d /dev/shm/fw-bench.XXXXXX 2>/dev/null || mktemp -d)
sim_pid=""
cleanup() {
  [ -z "$sim_pid" ] || kill "$sim_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The stand-in mstconfig: `mstconfig -e -d <BDF> query` answers after
# $latency s; `set` is accepted (apply) after $latency s too.
mkdir -p "$work/bin"
sed -e 's/^Device:.*/Device:         @DEV@/' \
  -e '/LINK_TYPE_P/s/IB(1)/ETH(2)/g' "$answer_src" >"$work/answer.query"
cat >"$work/bin/mstconfig" <<EOF
#!/bin/sh
# stand-in for mstflint's mstconfig (bench/firmware_boot.sh)
dev=""
while [ \$# -gt 0 ]; do
  case "\$1" in
    -d) dev=\$2; shift ;;
    query|set) op=\$1 ;;
  esac
  shift
done
echo "start \$op \$dev \$(date +%s%N)" >>"$work/calls.log"
sleep $latency
if [ "\$op" = query ]; then sed "s/@DEV@/\$dev/" "$work/answer.query"; fi
echo "end \$op \$dev \$(date +%s%N)" >>"$work/calls.log"
EOF
chmod 0755 "$work/bin/mstconfig"
# The stand-in mstflint (issue 35.9): `mstflint -d <BDF> query` answers the
# recorded ConnectX-5 query after $latency s, logged as the mstconfig calls
# ("flint" for the op), so that "calls" counts both tools.
cat >"$work/bin/mstflint" <<EOF
#!/bin/sh
# stand-in for mstflint (bench/firmware_boot.sh)
echo "start flint \$2 \$(date +%s%N)" >>"$work/calls.log"
sleep $latency
cat "$flint_src"
echo "end flint \$2 \$(date +%s%N)" >>"$work/calls.log"
EOF
chmod 0755 "$work/bin/mstflint"

# live TREE CMD...: CMD with / as the root and TREE/sys as /sys, in a network
# namespace holding a veth of each of the tree's netdev names (up), so that
# the live link backend (rtnetlink) finds the PFs' links.
live() {
  local tree=$1
  shift
  unshare -m -n -- /bin/sh -c '
    tree=$0 i=0
    for n in $(ls "$tree/sys/class/net"); do
      [ "$n" = lo ] && continue
      ip link add "$n" type veth peer name "peer$i" && ip link set "$n" up || exit 1
      i=$((i + 1))
    done
    mount --bind "$tree/sys" /sys || exit 1
    date +%s%N >"$1"  # the command starts: the namespace set-up is not timed
    shift
    exec "$@"' "$tree" "$work/t0" env PATH="$work/bin:$PATH" "$@"
}

# timed OUT CMD...: runs CMD (stdout to OUT), prints "<ms> <exit>": from its
# start (live: from the exec after the namespace set-up) to its exit.
timed() {
  local out=$1
  shift
  local t0 t1 rc=0
  rm -f "$work/t0"
  t0=$(date +%s%N)
  "$@" >"$out" 2>"$out.err" || rc=$?
  t1=$(date +%s%N)
  [ ! -s "$work/t0" ] || t0=$(cat "$work/t0")
  echo "$(( (t1 - t0) / 1000000 )) $rc"
}

# calls: "<calls> <firmware ms>" of the stand-in's log.
calls() {
  [ -s "$work/calls.log" ] || { echo "0 0"; return; }
  python3 - "$work/calls.log" <<'PY'
import sys
starts, ends = [], []
for line in open(sys.argv[1]):
    what, op, dev, ns = line.split()
    (starts if what == "start" else ends).append(int(ns))
span = (max(ends) - min(starts)) / 1e6 if ends else 0
print(len(starts), int(span))
PY
}

median() { tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# bench NAME WANT_EXIT CMD...: RUNS runs; prints a table row.
bench() {
  local name=$1 want=$2
  shift 2
  local times=() n=0 span=0 r
  for ((i = 0; i < runs; i++)); do
    rm -f "$work/calls.log"
    r=$(timed "$work/out" "$@")
    if [ "${r#* }" != "$want" ]; then
      echo "$name: exit ${r#* }, want $want"; cat "$work/out.err"; exit 1
    fi
    times+=("${r% *}")
    read -r n span < <(calls)
  done
  printf '| %s | %s | %s | %s |\n' "$name" "$(echo "${times[*]}" | median)" "$n" "$span"
}

echo "## 10-card host, live-style, stand-in mstconfig sleeping $latency s per call ($runs runs)"
tree="$work/bench-10"
"$make_tree" --preset bench-10 --dir "$tree" >/dev/null
pfs=$(for d in "$tree"/sys/bus/pci/devices/*; do
  [ "$(cat "$d/vendor")" = 0x15b3 ] && basename "$d"
done)
[ "$(echo "$pfs" | wc -l)" = 10 ] || { echo "expected 10 ConnectX PFs: $pfs"; exit 1; }
# host.yaml: one nic per card, numVfs 8 (within sriov_totalvfs 127); $1 = extra field.
host_yaml() {
  printf 'apiVersion: provisioner/v1alpha1\nkind: HostConfig\nmetadata:\n  name: bench\nspec:\n  nics:\n'
  local i=0
  for pf in $pfs; do
    printf '    - name: nic%d\n      nicSelector: { rootDevices: ["%s"] }\n      numVfs: 8\n' "$i" "$pf"
    [ -z "$1" ] || printf '      %s\n' "$1"
    i=$((i + 1))
  done
}
host_yaml "" >"$work/no-firmware.yaml"
host_yaml "linkType: eth" >"$work/link-type.yaml"
echo
echo "| benchmark | median ms | mstconfig + mstflint calls | firmware ms |"
echo "|---|---:|---:|---:|"
bench "plan, no firmware field" 0 live "$tree" "$bin" plan "$work/no-firmware.yaml" -o json
bench "plan, linkType on all 10" 0 live "$tree" "$bin" plan "$work/link-type.yaml" -o json
bench "discover (no host.yaml)" 0 live "$tree" "$bin" discover -o json
grep -q '"LINK_TYPE_P1"' "$work/out" || { echo "discover shows no firmware"; exit 1; }
# DISCOVER_ONLY=1: the 10-card table only (issue 35.9's before/after).
[ -z "${DISCOVER_ONLY:-}" ] || exit 0

echo
echo "## Boot path: ExecStart of provisioner-apply.service on the rail host (hgx-h100, examples/rails.yaml), kernel simulator"
exec_start=$(sed -n 's/^ExecStart=//p' "$unit" | tail -1)
read -r -a argv <<<"$exec_start"
echo "ExecStart=$exec_start"
echo
echo "| run | ms | exit | mstconfig calls | firmware ms |"
echo "|---|---:|---:|---:|---:|"
rail="$work/rail"
"$make_tree" --preset hgx-h100 --dir "$rail" >/dev/null
mkdir -p "$rail$(dirname "${argv[2]}")"
# Without the rails' names: renames are answered by the in-process simulator
# only (test/sim/rename_sim.h), not by kernel_sim.
python3 - "$here/examples/rails.yaml" "$rail${argv[2]}" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
doc["spec"]["rails"]["nic"].pop("names", None)
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
PY
# Live-style, the kmod and RDMA netns backends would act on this machine
# (libkmod, RDMA netlink): the rails only (nics, pools, multus).
python3 - "$here/examples/rails.yaml" "$rail${argv[2]%.yaml}-rails.yaml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
for key in ("rdma", "kernelModules"):
    doc["spec"].pop(key, None)
doc["spec"]["rails"]["nic"].pop("names", None)
yaml.safe_dump(doc, open(sys.argv[2], "w"), sort_keys=False)
PY
"$kernel_sim" --root "$rail" --ready-file "$work/sim-ready" >"$work/sim.log" 2>&1 &
sim_pid=$!
for ((i = 0; i < 500; i++)); do [ -e "$work/sim-ready" ] && break; sleep 0.01; done
# The VFs a first boot creates come from the simulator; live-style, the link
# backend would look for their netdevs in netlink too: only the converged boot
# runs live-style (a veth per netdev of the tree, VFs' included).
for run in "--root tree, first boot" "--root tree, converged boot" "live-style, converged boot"; do
  rm -f "$work/calls.log"
  case "$run" in
    --root*) r=$(timed "$work/out" "$bin" "${argv[1]}" "$rail${argv[2]}" "${argv[@]:3}" --root "$rail") ;;
    *) r=$(timed "$work/out" live "$rail" "$bin" "${argv[1]}" "$rail${argv[2]%.yaml}-rails.yaml" "${argv[@]:3}") ;;
  esac
  rc=${r#* }
  case "$rc" in 0 | 3) ;; *) echo "$run: exit $rc"; cat "$work/out" "$work/out.err"; exit 1 ;; esac
  read -r n span < <(calls)
  printf '| %s | %s | %s | %s | %s |\n' "$run" "${r% *}" "$rc" "$n" "$span"
done
grep -q "No changes" "$work/out" || { echo "the converged boot changed something:"; cat "$work/out"; exit 1; }
