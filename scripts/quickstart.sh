#!/usr/bin/env bash
# One step for a newcomer: install what is missing, build, and plan the bundled
# RoCE SR-IOV example against the bundled ConnectX-5 host tree.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
bazel build //:provisioner //test/tools:ttar
# Host trees are kept as ttar text archives (see test/hosts/README.md);
# materialize the example one as a directory usable with --root.
rm -rf examples/hosts/cx5-roce
bazel-bin/test/tools/ttar -x examples/hosts/cx5-roce.ttar -C examples/hosts/cx5-roce
echo "+ provisioner plan examples/roce-sriov.yaml --root examples/hosts/cx5-roce"
bazel-bin/engine/cli/provisioner plan examples/roce-sriov.yaml --root examples/hosts/cx5-roce
