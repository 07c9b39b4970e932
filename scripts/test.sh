#!/usr/bin/env bash
# Setup, then every test twice: a normal build, and under AddressSanitizer +
# LeakSanitizer (--config=asan). Ends with "N passed, N failed" summed over
# both runs, counted from the test cases in Bazel's test.xml results.
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh || exit 1
TARGETS=(//engine/... //modules/... //schemas/... //examples/... //test/...)

bazel test "${TARGETS[@]}" "$@"
rc=$?
plain=$(python3 scripts/count_tests.py bazel-testlogs)
echo "plain build: $plain"

bazel test --config=asan "${TARGETS[@]}" "$@"
rc_asan=$?
asan=$(python3 scripts/count_tests.py bazel-testlogs)
echo "asan build: $asan"

read -r p1 _ f1 _ <<<"$plain"
read -r p2 _ f2 _ <<<"$asan"
echo "$((p1 + p2)) passed, $((f1 + f2)) failed"
if ((rc != 0)); then exit "$rc"; fi
exit "$rc_asan"
