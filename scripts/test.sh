#!/usr/bin/env bash
# Setup, then every test three times: a normal build, under AddressSanitizer
# + LeakSanitizer (--config=asan), and under UndefinedBehaviorSanitizer
# (--config=ubsan); then each libFuzzer target for a short bounded time
# (FUZZ_SECONDS, default 30) from its seed corpus. Ends with
# "N passed, N failed" summed over all of it: test cases counted from Bazel's
# test.xml results, and one case per fuzzer run.
# Extra arguments go to every `bazel test` (CI passes --jobs=2).
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh || exit 1
TARGETS=(//engine/... //modules/... //schemas/... //examples/... //test/...)
total_passed=0
total_failed=0
rc=0

count() {  # label: adds bazel-testlogs' counts to the totals
  local counts p f
  counts=$(python3 scripts/count_tests.py bazel-testlogs)
  echo "$1: $counts"
  read -r p _ f _ <<<"$counts"
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + f))
}

for config in "" asan ubsan; do
  flags=()
  [[ -n $config ]] && flags=(--config="$config")
  bazel test --keep_going "${flags[@]}" "${TARGETS[@]}" "$@"
  code=$?
  count "${config:-plain} build"
  if ((code != 0)); then rc=1; fi
  # 3 = some tests failed (counted above); anything else = targets that did
  # not build or run, which test.xml cannot count: one failure for them.
  if ((code != 0 && code != 3)); then
    echo "${config:-plain} build: bazel exited $code (build failure)"
    total_failed=$((total_failed + 1))
  fi
done

# Fuzzers: clang-14's libFuzzer, in their own output base (another compiler).
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_BAZEL=(bazel --output_base="${HOME}/.cache/bazel-provisioner-fuzz")
fuzzers=$("${FUZZ_BAZEL[@]}" query 'attr(name, "_fuzzer$", //test/fuzz:*)' 2>/dev/null)
if [[ -z $fuzzers ]]; then
  echo "fuzz targets: none found"
  total_failed=$((total_failed + 1)); rc=1
elif CC=clang-14 "${FUZZ_BAZEL[@]}" build --config=fuzz --symlink_prefix=/ $fuzzers "$@"; then
  bin=$("${FUZZ_BAZEL[@]}" info bazel-bin 2>/dev/null)
  for target in $fuzzers; do
    name=${target##*:}
    corpus=$(mktemp -d)
    cp -r "test/fuzz/corpus/${name%_fuzzer}/." "$corpus/"
    if "$bin/test/fuzz/$name" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "$corpus" >"$corpus.log" 2>&1; then
      echo "fuzz $name: ok ($(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$corpus.log"))"
      total_passed=$((total_passed + 1))
    else
      echo "fuzz $name: FAILED"; tail -40 "$corpus.log"
      total_failed=$((total_failed + 1)); rc=1
    fi
    rm -rf "$corpus" "$corpus.log"
  done
else
  echo "fuzz targets: build FAILED"
  total_failed=$((total_failed + 1)); rc=1
fi

echo "$total_passed passed, $total_failed failed"
exit "$rc"
