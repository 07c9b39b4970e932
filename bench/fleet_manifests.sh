#!/bin/bash
# bazel run -c opt //bench:fleet_manifests [-- SIZES...]
# `provisioner manifests DIR` for a fleet of N host.yaml files (the roce-sriov
# and rails-8gpu examples, one per node): a pool (nodeSelector set: every
# node's objects identical, merged to one set) and nodes without a pool (one
# policy and nccl-env per node). Prints wall time and peak RSS per size
# (bench/spawn); the output's object count shows the merge worked.
set -euo pipefail
here="${RUNFILES_DIR:-$0.runfiles}/provisioner"
[ -f "$here/examples/roce-sriov.yaml" ] || here="$PWD"
bin="$here/engine/cli/provisioner"
spawn="$here/bench/spawn"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10 100 1000)
work=$(mktemp -d /dev/shm/fleet-bench.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$work"' EXIT

printf '%-12s %-8s %6s %10s %12s %9s\n' example layout hosts seconds maxRssKiB objects
for example in roce-sriov rails-8gpu; do
  src="$here/examples/$example.yaml"
  for layout in pool nodes; do
    for n in "${sizes[@]}"; do
      dir="$work/$example-$layout-$n"
      mkdir -p "$dir"
      for ((i = 0; i < n; i++)); do
        if [ "$layout" = pool ]; then
          sed "0,/name: worker1/s//name: node$i/;0,/name: gpu-worker1/s//name: node$i/" "$src"
        else
          sed "0,/name: worker1/s//name: node$i/;0,/name: gpu-worker1/s//name: node$i/;/nodeSelector:/d" "$src"
        fi >"$dir/node$i.yaml"
      done
      stats=$("$spawn" "$work/out" "$work/err" "$bin" manifests "$dir")
      objects=$(grep -c '^---$' "$work/out" || true)
      seconds=$(python3 -c 'import json,sys; print("%.3f" % json.loads(sys.argv[1])["seconds"])' "$stats")
      rss=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["maxRssKiB"])' "$stats")
      code=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["exit"])' "$stats")
      if [ "$code" != 0 ]; then
        echo "$example $layout $n: exit $code"; head -5 "$work/err"; exit 1
      fi
      printf '%-12s %-8s %6d %10s %12s %9d\n' "$example" "$layout" "$n" "$seconds" "$rss" "$objects"
    done
  done
done
