#!/usr/bin/env bash
# clang-tidy (checks in .clang-tidy: bugprone-*, performance-*) over the
# production sources of engine/ and modules/ (not tests, not testing/ fakes),
# or over the files given as arguments. Compile flags are the ones .bazelrc
# and the BUILD files give these sources (C++17, libnl3 headers, valijson with
# exceptions), with the workspace root on the include path as Bazel has it.
# Needs clang-tidy-14 (apt-get install clang-tidy-14); one file per core at a
# time. Exits 1 when there is any finding. Not part of CI (about 8 minutes of
# CPU on 2 cores).
set -uo pipefail
cd "$(dirname "$0")/.."
TIDY=${CLANG_TIDY:-clang-tidy-14}
command -v "$TIDY" >/dev/null || { echo "clang_tidy: $TIDY not found (apt-get install clang-tidy-14)" >&2; exit 2; }

if (($#)); then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'engine/*.cc' 'modules/*.cc' | grep -v -e '_test\.cc$' -e '/testing/')
fi
FLAGS=(-std=c++17 -I. -isystem/usr/include/libnl3 -DVALIJSON_USE_EXCEPTIONS=1)

out=$(mktemp)
trap 'rm -f "$out"' EXIT
printf '%s\n' "${files[@]}" |
  xargs -P "$(nproc)" -I{} "$TIDY" --quiet {} -- "${FLAGS[@]}" >"$out" 2>/dev/null
# One finding per "file:line:col: warning|error: ... [check]" line, each once
# (a header's findings come with every source that includes it).
findings=$(sed -e "s|^$PWD/||" -e "s|^\./||" "$out" | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' | sort -u)
if [[ -n $findings ]]; then
  echo "$findings"
  echo "clang_tidy: $(wc -l <<<"$findings") findings in ${#files[@]} files"
  exit 1
fi
echo "clang_tidy: no findings in ${#files[@]} files"
