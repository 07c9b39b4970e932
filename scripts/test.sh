#!/usr/bin/env bash
# Setup; every test once under AddressSanitizer + LeakSanitizer +
# UndefinedBehaviorSanitizer (--config=san, clang-14); each libFuzzer target
# for a bounded CPU time (FUZZ_SECONDS, default 30) from its seed corpus,
# two at a time, and the shipped artifacts (scripts/test-package.sh: the
# portable binary, built with gcc, no sanitizer, -Werror, and the Debian
# package), those two beside the tests at a lower priority. Prints the wall
# time of each step and ends with "N passed, N failed" summed over all of it:
# test cases counted from Bazel's test.xml results, one case per fuzzer run,
# one per PASS/FAIL line of test-package.sh.
# Extra arguments go to every `bazel build`/`bazel test` (after ours: a
# --jobs there replaces the sanitized step's).
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
# The output bases are one per workspace (as Bazel's own default one is):
# named after the hash of its path (build-portable.sh names its own the same way).
WS_HASH=$(printf %s "$WS" | md5sum | cut -c1-8)
# The clang-14 output base of the sanitized tests.
CLANG_BAZEL=(env CC=clang-14 bazel --output_base="${HOME}/.cache/bazel-provisioner-clang-$WS_HASH")

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

# Two lanes run beside the sanitized step, one after the other in a background
# subshell at a lower priority (nice 10; Bazel servers and compilers started
# from it inherit it): they take the cores the sanitized step leaves idle (its
# tests that wait on the simulator's kernel latencies, its last long tests)
# instead of running after it, and yield them to it otherwise.
#  1. The shipped artifacts (scripts/test-package.sh): the portable binary
#     (gcc 12, -c opt, warnings fatal: it is also the build users make), its
#     GLIBC check and chroot start, the tarball, the Debian package (lintian,
#     install, units, metrics, man page, removal). One case per PASS/FAIL line.
#  2. The fuzzers: clang-14's libFuzzer (--config=fuzz) in their own clang
#     output base (the sanitized step holds the other one), FUZZ_JOBS at a
#     time, each for FUZZ_SECONDS of CPU time (scripts/run_fuzzer.py), not
#     wall time: at a low priority beside the tests a fuzzer gets the same
#     work as alone. One case per fuzzer.
# The package step's Bazel server is shut down before the fuzz build, so that
# no more than two Bazel servers run at once.
FUZZ_BAZEL=(env CC=clang-14 bazel --output_base="${HOME}/.cache/bazel-provisioner-fuzz-$WS_HASH")
PORTABLE_OUTPUT_BASE="${HOME}/.cache/bazel-provisioner-portable-$WS_HASH"
lane=$(mktemp -d)
lane_t0=$SECONDS
lane_clock() { echo $((SECONDS - lane_t0)) >"$lane/$1.end"; }
(
  renice -n 10 -p "$BASHPID" >/dev/null
  DISK_CACHE="$WS/.cache/bazel-disk" scripts/test-package.sh "$@" >"$lane/pkg.log" 2>&1
  echo $? >"$lane/pkg.rc"
  lane_clock pkg
  bazel --output_base="$PORTABLE_OUTPUT_BASE" shutdown >/dev/null 2>&1

  fuzzers=$("${FUZZ_BAZEL[@]}" query 'attr(name, "_fuzzer$", //test/fuzz:*)' 2>/dev/null)
  echo "$fuzzers" >"$lane/fuzzers"
  fuzz_flags=(--config=fuzz --symlink_prefix=/ "${DISK_CACHE[@]}")
  if [[ -n $fuzzers ]]; then
    "${FUZZ_BAZEL[@]}" build "${fuzz_flags[@]}" $fuzzers "$@" >"$lane/fuzz-build.log" 2>&1 &&
      "${FUZZ_BAZEL[@]}" info "${fuzz_flags[@]}" bazel-bin >"$lane/fuzz-bin" 2>/dev/null
  fi
  lane_clock fuzz-build
  if [[ -s $lane/fuzz-bin ]]; then
    bin=$(cat "$lane/fuzz-bin")
    for target in $fuzzers; do
      while (($(jobs -rp | wc -l) >= FUZZ_JOBS)); do wait -n; done
      name=${target##*:}
      mkdir -p "$lane/$name.corpus"
      cp -r "test/fuzz/corpus/${name%_fuzzer}/." "$lane/$name.corpus/"
      python3 scripts/run_fuzzer.py "$bin/test/fuzz/$name" "$lane/$name.corpus" "$lane/$name.log" \
        "$FUZZ_SECONDS" >"$lane/$name.result" &
    done
    wait
  fi
  lane_clock fuzz-runs
) &
lane_pid=$!

# Every test, sanitized. --symlink_prefix=/: the workspace's bazel-bin and
# bazel-testlogs links stay the default (gcc) output base's. Tests do not
# count against the cores (--local_test_jobs): compiles and links take one
# each, up to the core count, and tests run beside them, up to the core count
# too. Many tests spend much of their time waiting (the simulator's kernel
# latencies, the agent's debounce, the lock and signal tests): with a test
# holding a core as Bazel's default has it, that core sat idle.
ncpu=$(nproc)
san_flags=(--config=san-clang --symlink_prefix=/ "${DISK_CACHE[@]}")
san_jobs=(--jobs=$((2 * ncpu)) --local_test_jobs="$ncpu")
step_begin
"${CLANG_BAZEL[@]}" test --keep_going "${san_flags[@]}" "${RAM_TEST_FLAGS[@]}" "${san_jobs[@]}" "${TARGETS[@]}" "$@" 2>&1 | no_gold_noise
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

# The lane's results, each step timed from the start of the lane.
wait "$lane_pid"
lane_time() { printf '%-28s %5d s' "$1" "$(cat "$lane/$2.end" 2>/dev/null || echo 0)"; }
cat "$lane/pkg.log"
pkg_code=$(cat "$lane/pkg.rc" 2>/dev/null || echo 1)
pkg_passed=$(grep -c '^PASS ' "$lane/pkg.log")
pkg_failed=$(grep -c '^FAIL ' "$lane/pkg.log")
grep '^FAIL ' "$lane/pkg.log" | sed 's/^/package: /' >>"$failures_file"
total_passed=$((total_passed + pkg_passed))
total_failed=$((total_failed + pkg_failed))
if ((pkg_failed > 0)); then rc=1; fi
if ((pkg_code != 0 && pkg_failed == 0)); then
  fail "test-package: exited $pkg_code without a FAIL line"
fi
timings+=("$(lane_time "package (lane, from start)" pkg)")
echo "time: ${timings[-1]}"

fuzzers=$(cat "$lane/fuzzers" 2>/dev/null)
if [[ -z $fuzzers ]]; then
  fail "fuzz targets: none found"
elif [[ ! -s $lane/fuzz-bin ]]; then
  no_gold_noise <"$lane/fuzz-build.log"
  fail "fuzz targets: build FAILED"
fi
timings+=("$(lane_time "fuzz build (lane, from start)" fuzz-build)")
echo "time: ${timings[-1]}"
if [[ -s $lane/fuzz-bin ]]; then
  for target in $fuzzers; do
    name=${target##*:}
    result=$(cat "$lane/$name.result" 2>/dev/null)
    timings+=("$(printf '  fuzz %-23s %s' "$name" "${result#ok }")")
    if [[ $result == ok* ]]; then
      echo "fuzz $name: $result"
      total_passed=$((total_passed + 1))
    else
      echo "fuzz $name: ${result:-FAILED}"
      tail -40 "$lane/$name.log"
      fail "fuzz $name: failed"
    fi
  done
fi
timings+=("$(lane_time "fuzz runs (lane, from start)" fuzz-runs)")
echo "time: ${timings[-1]}"
rm -rf "$lane"

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
