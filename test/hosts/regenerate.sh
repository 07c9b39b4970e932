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
"$MAKE_TREE" --preset hgx-h100-pcie --out examples/hosts/hgx-h100-pcie.ttar  # kept only there
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

# The other ghw snapshots (PR #230's siblings, same license): whole, files
# verbatim, plus the empty `resource` libpci needs; discover and lspci must
# agree on every function (//test/integration:lspci_agreement_test).
for snap in linux-amd64-accel-nvidia linux-amd64-amd-ryzen-1600 linux-amd64-xeon-L5640-main \
            linux-arm64-aws-graviton-neoverse-n1; do
  mkdir "$TMP/$snap"
  tar -xzf "$HOSTDATA/ghw-snapshots/$snap.tar.gz" -C "$TMP/$snap"
  add_missing_resource "$TMP/$snap"
  {
    echo "# Real capture: jaypipes/ghw snapshot $snap.tar.gz"
    echo "# (Apache-2.0), files verbatim; added: an empty 'resource' (444) per PCI function."
    echo "# Regenerate with test/hosts/regenerate.sh; see test/hosts/README.md."
    "$TTAR" -c "$TMP/$snap"
  } > "test/hosts/ghw-${snap#linux-}.ttar"
done

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

# Real captures: hwloc's test topologies (open-mpi/hwloc tests/hwloc/linux,
# BSD-3-Clause), the part about their InfiniBand HCAs (capture_subset.py:
# the functions and their bridges, class links, proc/), files verbatim.
hwloc_subset() {  # out.ttar capture.tar.bz2 what bdf...
  local out=$1 capture=$2 what=$3
  shift 3
  local dir=$TMP/$(basename "$out" .ttar)
  mkdir -p "$dir/cap" "$dir/tree"
  tar -xjf "$HOSTDATA/hwloc/$capture" -C "$dir/cap"
  python3 test/hosts/capture_subset.py "$dir"/cap/*/ "$dir/tree" "$@"
  {
    echo "# Real capture: open-mpi/hwloc tests/hwloc/linux/$capture (BSD-3-Clause),"
    echo "# $what; subset by test/hosts/capture_subset.py $*, files verbatim."
    echo "# Regenerate with test/hosts/regenerate.sh; see test/hosts/README.md."
    "$TTAR" -c "$dir/tree"
  } > "$out"
}
hwloc_subset test/hosts/mlx4-ib-hwloc.ttar 32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2 \
  "ConnectX-3 IB mlx4_0 and its root port" 0000:80:02.2 0000:82:00.0
hwloc_subset test/hosts/qib-ib-hwloc.ttar 40intel64-2g2n4c+pcilocality.tar.bz2 \
  "QLogic QLE7340 qib0 (class 0x0c0600) and its root port" 0000:40:03.0 0000:43:00.0
hwloc_subset test/hosts/cx4-ib-noverbs-hwloc.ttar 32intel64-2p8co2t+8ve.tar.bz2 \
  "two ConnectX-4 IB (mlx5_core, no infiniband/) behind their PLX switches" \
  0000:17:00.0 0000:18:00.0 0000:19:04.0 0000:1a:00.0 0000:3a:00.0 0000:3b:00.0 0000:3c:08.0 0000:3e:00.0
hwloc_subset test/hosts/power9-partial-hwloc.ttar nvidiagpunumanodes.tar.bz2 \
  "IBM POWER9, 6 NVIDIA GPU functions with only class and local_cpus" \
  0004:05:00.0 0004:06:00.0 0006:00:00.0 0007:00:00.0 0035:04:00.0 0035:05:00.0

ls -l test/hosts/*.ttar examples/hosts/*.ttar
