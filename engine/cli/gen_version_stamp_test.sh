#!/bin/bash
# gen_version_stamp.sh and scripts/workspace_status.sh: what `provisioner --version`
# says when the commit or the build time is missing, and that a malformed VERSION
# cannot reach the generated C++.
set -uo pipefail
R="$TEST_SRCDIR/${TEST_WORKSPACE:-provisioner}"
GEN="$R/engine/cli/gen_version_stamp.sh"
STATUS="$R/scripts/workspace_status.sh"
T="$TEST_TMPDIR"
fail() { echo "FAIL: $*"; exit 1; }
has() { grep -qF -- "$2" "$1" || fail "$1 lacks: $2 ($(cat "$1"))"; }

echo 0.9.0 >"$T/VERSION"
printf 'BUILD_HOST h\nSTABLE_GIT_COMMIT 1a2b3c4d5e6f\n' >"$T/stable"
printf 'BUILD_TIMESTAMP 1764057600\n' >"$T/volatile"
"$GEN" "$T/VERSION" "$T/stable" "$T/volatile" >"$T/a.cc" || fail "gen exited $?"
has "$T/a.cc" 'kVersion = "0.9.0";'
has "$T/a.cc" 'kGitCommit = "1a2b3c4d5e6f";'
has "$T/a.cc" 'kBuildDate = "2025-11-25T08:00:00Z";'

# No commit key (a build without scripts/workspace_status.sh), no timestamp.
printf 'BUILD_HOST h\n' >"$T/stable"
: >"$T/volatile"
"$GEN" "$T/VERSION" "$T/stable" "$T/volatile" >"$T/b.cc" || fail "gen exited $?"
has "$T/b.cc" 'kGitCommit = "unknown";'
has "$T/b.cc" 'kBuildDate = "unknown";'
# Anything but hex is not a commit.
printf 'STABLE_GIT_COMMIT x"; evil\n' >"$T/stable"
"$GEN" "$T/VERSION" "$T/stable" "$T/volatile" >"$T/c.cc" || fail "gen exited $?"
has "$T/c.cc" 'kGitCommit = "unknown";'
# A VERSION that would break the string literal is refused.
echo '0.9.0";' >"$T/VERSION"
if "$GEN" "$T/VERSION" "$T/stable" "$T/volatile" >"$T/d.cc" 2>"$T/d.err"; then
  fail "a bad VERSION was accepted"
fi
has "$T/d.err" "bad version"

# workspace_status.sh: outside a git checkout, and without git at all: "unknown".
mkdir -p "$T/nogit"
(cd "$T/nogit" && GIT_CEILING_DIRECTORIES="$T" "$STATUS") >"$T/s1" || fail "workspace_status exited $?"
has "$T/s1" "STABLE_GIT_COMMIT unknown"
(cd "$T/nogit" && PATH=/nonexistent /bin/sh "$STATUS") >"$T/s2" || fail "workspace_status exited $?"
has "$T/s2" "STABLE_GIT_COMMIT unknown"
echo PASS
