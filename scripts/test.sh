#!/usr/bin/env bash
# Setup; every test once under AddressSanitizer + LeakSanitizer +
# UndefinedBehaviorSanitizer (--config=san, clang-14); each libFuzzer target
# for a short bounded time (FUZZ_SECONDS, default 30) from its seed corpus,
# two at a time, beside the shipped artifacts (scripts/test-package.sh: the
# portable binary, built with gcc, no sanitizer, -Werror, and the Debian
# package). Prints the wall time of each step and ends with "N passed, N
# failed" summed over all of it: test cases counted from Bazel's test.xml
# results, one case per fuzzer run, one per PASS/FAIL line of test-package.sh.
# Extra arguments go to every `bazel build`/`bazel test` (CI passes --jobs=2).
#
# Why once, and why clang: a test that passes under the sanitizers passes
# without them (same -O0 code, same tests), so a second, plain pass found
# nothing the first did not, and cost half of CI's time. clang-14 compiles
# the sanitized build about twice as fast as gcc 12 (measured on this code:
# docs/BENCHMARKS.md, "CI"), and the fuzzers need it anyway.
#
# Bazel state: the workspace's default output base (gcc), a portable one
# (scripts/build-portable.sh: the portable and .deb binaries), and one for clang-14
# (the sanitizer tests and the fuzzers: another compiler would otherwise
# re-configure the C++ toolchain of the first and invalidate everything in
# it). All use the disk cache .cache/bazel-disk (git- and bazel-ignored), so
# a second run reuses actions.
set -uo pipefail
cd "$(dirname "$0")/.."
WS=$PWD

DISK_CACHE=(--disk_cache="$WS/.cache/bazel-disk")
TARGETS=(//engine/... //modules/... //schemas/... //examples/... //test/... //dist/...)
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_JOBS=${FUZZ_JOBS:-2}
# The clang-14 output base, one per workspace (as Bazel's own default one is).
CLANG_BAZEL=(env CC=clang-14 bazel --output_base="${HOME}/.cache/bazel-provisioner-clang-$(printf %s "$WS" | md5sum | cut -c1-8)")

# Scratch space in RAM where the machine has it. Bazel's sandbox builds a tree
# of symlinks per action and the tests build host trees in their TEST_TMPDIR
# (thousands of small files, created and deleted): on this VM's ext4, mounted
# with online discard, each create or unlink costs about half a millisecond
# of system time (a `plan --root x.ttar` of the sanitized binary: 0.52 s in
# /tmp, 0.12 s in /dev/shm). Measured in docs/BENCHMARKS.md, "CI".
RAM_FLAGS=()
RAM_TEST_FLAGS=()
if [[ -d /dev/shm && -w /dev/shm ]] &&
  (($(df -Pk /dev/shm | awk 'NR == 2 { print $4 }') > 2 * 1024 * 1024)); then
  ram_dir=$(mktemp -d /dev/shm/provisioner-ci.XXXXXX)
  trap 'rm -rf "$ram_dir"' EXIT
  mkdir -p "$ram_dir/sandbox" "$ram_dir/tests"
  # Tests run programs they write (stand-in tools): not on a noexec mount.
  printf '#!/bin/sh\nexit 0\n' >"$ram_dir/exec-check" && chmod +x "$ram_dir/exec-check"
  if "$ram_dir/exec-check" 2>/dev/null; then
    RAM_FLAGS=(--sandbox_base="$ram_dir/sandbox")
    RAM_TEST_FLAGS=(--test_tmpdir="$ram_dir/tests")
    echo "scratch: sandboxes and test directories in $ram_dir (tmpfs)"
  fi
fi
set -- "$@" "${RAM_FLAGS[@]}"

total_passed=0
total_failed=0
rc=0
# Every failure by name, listed again above the final line: the log of a
# clean-clone run is long and is often read only from its end.
failures_file=$(mktemp)
timings=()
t_start=$SECONDS
step_t0=$SECONDS

step_begin() { step_t0=$SECONDS; }
step_end() {  # label: prints and records the wall time since step_begin
  local line
  line=$(printf '%-28s %5d s' "$1" $((SECONDS - step_t0)))
  timings+=("$line")
  echo "time: $line"
}
fail() {  # message: one failure that test.xml cannot count
  echo "$1"
  echo "$1" >>"$failures_file"
  total_failed=$((total_failed + 1))
  rc=1
}

step_begin
scripts/setup.sh || exit 1
mkdir -p "$WS/.cache"
step_end "setup"

# gold's "Cannot export local symbol '__asan_*'" warnings (one per ASan check
# routine and linked binary, harmless) would fill the log: filter them out.
no_gold_noise() { grep -v "warning: Cannot export local symbol '__asan"; }

count() {  # label testlogs: adds the test.xml counts under testlogs to the totals
  local counts p f
  counts=$(python3 scripts/count_tests.py "$2" "$failures_file")
  echo "$1: $counts"
  read -r p _ f _ <<<"$counts"
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + f))
}

# The shipped artifacts: the portable binary (gcc 12, -c opt, warnings fatal:
# it is also the build users make), its GLIBC check and chroot start, the
# Debian package (lintian, install, unit, man page, removal). One case per
# PASS/FAIL line of scripts/test-package.sh. It starts now, beside the
# sanitized step, at a lower priority (nice 10; its Bazel server and compilers
# inherit it): it takes the cores the sanitized step leaves idle (its tests
# that wait on the simulator's kernel latencies, its single long tests at the
# end) instead of running after it; the tests keep the cores they ask for.
pkg_log=$(mktemp)
pkg_t0=$SECONDS
(
  DISK_CACHE="$WS/.cache/bazel-disk" nice -n 10 scripts/test-package.sh "$@" >"$pkg_log" 2>&1
  echo $? >"$pkg_log.rc"
) &
pkg_pid=$!

# Every test, sanitized. --symlink_prefix=/: the workspace's bazel-bin and
# bazel-testlogs links stay the default (gcc) output base's.
san_flags=(--config=san-clang --symlink_prefix=/ "${DISK_CACHE[@]}")
step_begin
"${CLANG_BAZEL[@]}" test --keep_going "${san_flags[@]}" "${RAM_TEST_FLAGS[@]}" "${TARGETS[@]}" "$@" 2>&1 | no_gold_noise
code=${PIPESTATUS[0]}
if logs=$("${CLANG_BAZEL[@]}" info "${san_flags[@]}" bazel-testlogs 2>/dev/null); then
  count "san build (clang-14)" "$logs"
else
  fail "san build: no test logs"
fi
if ((code != 0)); then rc=1; fi
# 3 = some tests failed (counted above); anything else = targets that did
# not build or run, which test.xml cannot count: one failure for them.
if ((code != 0 && code != 3)); then
  fail "san build: bazel exited $code (build failure)"
fi
step_end "san build+test (clang-14)"

# Fuzzers: clang-14's libFuzzer, in the clang output base.
step_begin
fuzzers=$("${CLANG_BAZEL[@]}" query 'attr(name, "_fuzzer$", //test/fuzz:*)' 2>/dev/null)
fuzz_flags=(--config=fuzz --symlink_prefix=/ "${DISK_CACHE[@]}")
built=0
if [[ -z $fuzzers ]]; then
  fail "fuzz targets: none found"
elif "${CLANG_BAZEL[@]}" build "${fuzz_flags[@]}" $fuzzers "$@" 2>&1 | no_gold_noise; ((PIPESTATUS[0] == 0)); then
  built=1
  bin=$("${CLANG_BAZEL[@]}" info "${fuzz_flags[@]}" bazel-bin 2>/dev/null)
else
  fail "fuzz targets: build FAILED"
fi
step_end "fuzz build"

run_fuzzer() {  # name dir: runs one fuzzer; writes dir/name.{log,rc,secs}
  local name=$1 dir=$2 t0=$SECONDS corpus
  corpus="$dir/$name.corpus"
  mkdir -p "$corpus"
  cp -r "test/fuzz/corpus/${name%_fuzzer}/." "$corpus/"
  "$bin/test/fuzz/$name" -max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 "$corpus" >"$dir/$name.log" 2>&1
  echo $? >"$dir/$name.rc"
  echo $((SECONDS - t0)) >"$dir/$name.secs"
}


# The fuzzers run for a fixed time each (FUZZ_SECONDS), so they can overlap
# what is left of the package step: they take the cores its single-threaded
# phases (links, lintian, dpkg, the chroot start) leave idle.
fuzz_pid=
if ((built)); then
  fuzz_dir=$(mktemp -d)
  fuzz_t0=$SECONDS
  (
    for target in $fuzzers; do
      while (($(jobs -rp | wc -l) >= FUZZ_JOBS)); do wait -n; done
      run_fuzzer "${target##*:}" "$fuzz_dir" &
    done
    wait
  ) &
  fuzz_pid=$!
fi

# The package step, started beside the sanitized step: its log now.
step_begin
wait "$pkg_pid"
step_t0=$pkg_t0
cat "$pkg_log"
pkg_code=$(cat "$pkg_log.rc" 2>/dev/null || echo 1)
pkg_passed=$(grep -c '^PASS ' "$pkg_log")
pkg_failed=$(grep -c '^FAIL ' "$pkg_log")
grep '^FAIL ' "$pkg_log" | sed 's/^/package: /' >>"$failures_file"
total_passed=$((total_passed + pkg_passed))
total_failed=$((total_failed + pkg_failed))
if ((pkg_failed > 0)); then rc=1; fi
if ((pkg_code != 0 && pkg_failed == 0)); then
  fail "test-package: exited $pkg_code without a FAIL line"
fi
rm -f "$pkg_log" "$pkg_log.rc"
step_end "package (portable build+deb, from the start, nice 10)"

if [[ -n $fuzz_pid ]]; then
  step_begin
  wait "$fuzz_pid"
  step_t0=$fuzz_t0
  for target in $fuzzers; do
    name=${target##*:}
    secs=$(cat "$fuzz_dir/$name.secs" 2>/dev/null || echo 0)
    timings+=("$(printf '%-28s %5d s' "  fuzz $name" "$secs")")
    if [[ $(cat "$fuzz_dir/$name.rc" 2>/dev/null) == 0 ]]; then
      echo "fuzz $name: ok ($(grep -m1 -o 'stat::number_of_executed_units: [0-9]*' "$fuzz_dir/$name.log"), ${secs} s)"
      total_passed=$((total_passed + 1))
    else
      echo "fuzz $name: FAILED"
      tail -40 "$fuzz_dir/$name.log"
      fail "fuzz $name: failed"
    fi
  done
  rm -rf "$fuzz_dir"
  step_end "fuzz runs (${FUZZ_JOBS} at a time, from the fuzz build on)"
fi

echo "wall time per step:"
printf '  %s\n' "${timings[@]}"
printf '  %-28s %5d s\n' "total" $((SECONDS - t_start))
if [[ -s $failures_file ]]; then
  echo "failed:"
  sed 's/^/  /' "$failures_file"
fi
rm -f "$failures_file"
echo "$total_passed passed, $total_failed failed"
exit "$rc"
