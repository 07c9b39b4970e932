#!/bin/bash
# Regenerates every host tree in test/hosts and examples/hosts.
#   test/hosts/regenerate.sh            (from the repository root)
# Environment: HOSTDATA (default ../shared/hostdata beside the repository),
# BAZEL_OUTPUT_BASE (optional, passed to bazel --output_base).
# //test/hosts:trees_test checks that the generated trees are up to date.
set -euo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
HOSTDATA=${HOSTDATA:-$REPO/../shared/hostdata}
BAZEL=(bazel)
if [ -n "${BAZEL_OUTPUT_BASE:-}" ]; then BAZEL+=(--output_base="$BAZEL_OUTPUT_BASE"); fi
"${BAZEL[@]}" build //test/tools:make_tree //test/tools:ttar
BIN=$("${BAZEL[@]}" info bazel-bin 2>/dev/null)
MAKE_TREE=$BIN/test/tools/make_tree
TTAR=$BIN/test/tools/ttar
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Generated trees (test/support/host_presets.cc + the kernel simulator).
# The example trees are kept only in examples/hosts (HostTreePath finds them).
"$MAKE_TREE" --preset cx5-roce --out examples/hosts/cx5-roce.ttar
"$MAKE_TREE" --preset cx5-roce-qos --out examples/hosts/cx5-roce-qos.ttar
"$MAKE_TREE" --preset cx5-ib --out examples/hosts/cx5-ib.ttar
"$MAKE_TREE" --preset cx5-roce --vfs 0000:af:00.0=4 --out test/hosts/cx5-roce-vfs.ttar
"$MAKE_TREE" --preset hgx-h100 --out examples/hosts/hgx-h100.ttar  # kept only there
"$MAKE_TREE" --preset gpu-shared-switch --out test/hosts/gpu-shared-switch.ttar

# Adds an empty `resource` (mode 444) to every PCI function that lacks one:
# libpci's sysfs backend treats it as mandatory.
add_missing_resource() {
  local root=$1 dev
  for dev in "$root"/sys/bus/pci/devices/*; do
    if [ ! -e "$dev/resource" ]; then
      : > "$dev/resource"
      chmod 444 "$dev/resource"
    fi
  done
}

# Real capture: ghw PR #230 snapshot (Intel I350 SR-IOV, igb/igbvf).
mkdir "$TMP/i350"
tar -xzf "$HOSTDATA/ghw-snapshots/linux-amd64-xeon-L5640-i350-sriov-pr230.tar.gz" -C "$TMP/i350"
add_missing_resource "$TMP/i350"
{
  echo "# Real capture: jaypipes/ghw PR #230 snapshot linux-amd64-xeon-L5640-i350-sriov-pr230.tar.gz"
  echo "# (Apache-2.0), files verbatim; added: an empty 'resource' (444) per PCI function."
  echo "# Regenerate with test/hosts/regenerate.sh; see test/hosts/README.md."
  "$TTAR" -c "$TMP/i350"
} > test/hosts/i350-sriov-ghw.ttar

# Real-host-derived fixture: prometheus/procfs (E810, mlx4/mlx5 class entries).
mkdir "$TMP/e810"
"$TTAR" -x "$HOSTDATA/procfs/fixtures-sys-subset.ttar" -C "$TMP/e810" --strip 1
add_missing_resource "$TMP/e810"
{
  echo "# prometheus/procfs testdata/fixtures.ttar subset (Apache-2.0), top directory 'fixtures/'"
  echo "# stripped, files verbatim; added: an empty 'resource' (444) per PCI function lacking one."
  echo "# Regenerate with test/hosts/regenerate.sh; see test/hosts/README.md."
  "$TTAR" -c "$TMP/e810"
} > test/hosts/e810-procfs.ttar

ls -l test/hosts/*.ttar examples/hosts/*.ttar
