#!/usr/bin/env bash
# Setup, then every test; ends with "N passed, N failed" counted from the
# test cases in Bazel's test.xml results.
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh || exit 1
bazel test //engine/... //modules/... //schemas/... //examples/... //test/... "$@"
rc=$?
python3 scripts/count_tests.py bazel-testlogs
exit $rc
