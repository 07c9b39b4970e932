#!/usr/bin/env bash
# The shipped artifacts, tested the way a fleet gets them (as root: it installs
# the package into this machine, then removes and purges it):
#   portable build    scripts/build-portable.sh (it is also the gcc -Werror build): the
#                     portable binary and the .deb's, one compile, two links
#   glibc check       scripts/check_portable.py: the GLIBC version it needs (<= 2.34)
#                     and its NEEDED libraries
#   chroot start      the binary with only its ldd closure: --version, discover
#   portable tarball  scripts/build-tarball.sh: the binary, both units, the README
#                     that says metrics need the .deb or a source build
#   build-deb         scripts/build-deb.sh
#   lintian           clean at info level, but for dist/debian/lintian-overrides
#   dpkg -i           installs; the installed provisioner --version is VERSION's
#   systemd units     systemd-analyze verify of the installed units, not enabled
#   agent /metrics    the installed binary's agent on a host tree serves /metrics,
#                     SIGTERM exits 0 (scripts/check_metrics.py)
#   man page          man -l renders it without warnings, every subcommand there
#   bash completion   completes the subcommands from the installed binary's --help
#   dpkg -r/purge     no file of the package left behind (dpkg -L taken before)
# Prints "PASS <name>" or "FAIL <name>" per check (scripts/test.sh counts them),
# wall times, and ends with "test-package: N passed, N failed".
# Extra arguments go to `bazel build` (e.g. --jobs=2).
set -uo pipefail
cd "$(dirname "$0")/.."
WS=$PWD
passed=0
failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1"; failed=$((failed + 1)); }
# check NAME LOG CMD...: PASS or FAIL on CMD's status; the log is shown on failure.
check() {
  local name=$1 log=$2 t0=$SECONDS
  shift 2
  if "$@" >"$log" 2>&1; then
    pass "$name ($((SECONDS - t0)) s)"
  else
    fail "$name ($((SECONDS - t0)) s)"
    sed 's/^/  | /' "$log" | tail -40
    return 1
  fi
}
finish() {
  echo "test-package: $passed passed, $failed failed"
  ((failed == 0))
  exit
}
if [[ $(id -u) -ne 0 ]]; then
  fail "test-package: needs root (dpkg -i, chroot)"
  finish
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
version=$(tr -d ' \n' <VERSION)

# 1. The portable binary and the Debian one (build-portable.sh prints both, the
#    portable one last), and the ttar tool, to unpack host trees.
t0=$SECONDS
if scripts/build-portable.sh "$@" //test/tools:ttar >"$T/build.out" 2>"$T/build.log" &&
  debbin=$(tail -2 "$T/build.out" | head -1) && bin=$(tail -1 "$T/build.out") &&
  [[ -x $bin && -x $debbin ]]; then
  pass "portable build ($((SECONDS - t0)) s)"
else
  fail "portable build ($((SECONDS - t0)) s)"
  tail -40 "$T/build.log"
  finish
fi
ttar=${bin%/engine/cli/provisioner}/test/tools/ttar

# 2. GLIBC and NEEDED; 3. it starts with only its libraries.
if check "glibc check" "$T/glibc.log" python3 scripts/check_portable.py "$bin"; then
  sed -n 's/^portable: requires /  /p' "$T/glibc.log"
  glibc=$(sed -n 's/^portable: requires GLIBC \([0-9.]*\).*/\1/p' "$T/glibc.log")
  echo "portable binary requires GLIBC $glibc"
fi
mkdir -p "$T/tree"
"$ttar" -x examples/hosts/cx5-roce.ttar -C "$T/tree" >"$T/ttar.log" 2>&1 || cat "$T/ttar.log"
check "chroot start" "$T/chroot.log" python3 scripts/check_portable.py "$bin" --chroot "$T/chroot" "$T/tree" &&
  grep '^portable: chroot' "$T/chroot.log" | sed 's/^/  /'

# The portable tarball: that binary, both units, the README on metrics.
tarball_ok() {
  local tarball listing
  tarball=$(TARBALL_OUT_DIR="$T/tarball" scripts/build-tarball.sh --binary "$bin" | tail -1) || return 1
  listing=$(tar -tzf "$tarball") || return 1
  echo "$tarball"
  local p top=provisioner-$version
  for p in bin/provisioner lib/systemd/system/provisioner-apply.service \
    lib/systemd/system/provisioner-agent.service README.md; do
    grep -qx "$top/$p" <<<"$listing" || { echo "tarball lacks $top/$p"; return 1; }
  done
  mkdir -p "$T/tarball/x" && tar -xzf "$tarball" -C "$T/tarball/x" || return 1
  cmp "$bin" "$T/tarball/x/$top/bin/provisioner" &&
    grep -q 'No Prometheus endpoint in this build' "$T/tarball/x/$top/README.md"
}
check "portable tarball" "$T/tarball.log" tarball_ok && sed -n 1p "$T/tarball.log" | sed 's/^/  /'

# 4. The package (the Debian binary), 5. lintian (overridden tags are not displayed).
t0=$SECONDS
if deb=$(scripts/build-deb.sh --binary "$debbin" 2>"$T/deb.log" | tail -1) && [[ -f $deb ]]; then
  pass "build-deb ($((SECONDS - t0)) s)"
  sed -n 's/^build-deb: /  /p' "$T/deb.log"
else
  fail "build-deb ($((SECONDS - t0)) s)"
  tail -40 "$T/deb.log"
  finish
fi
lintian_clean() {
  lintian --allow-root --display-level '>=info' "$deb" | tee "$T/lintian.out"
  [[ ${PIPESTATUS[0]} == 0 && ! -s "$T/lintian.out" ]]
}
check "lintian" "$T/lintian.log" lintian_clean

# 6. Install into this machine (a provisioner package already there goes first,
#    so that "left behind" below means this package's files).
if dpkg-query -W -f='${Status}' provisioner 2>/dev/null | grep -q "install ok installed"; then
  echo "note: purging the provisioner package already installed"
  dpkg --purge provisioner >/dev/null
fi
dpkg-deb -c "$deb" | awk '{print substr($6, 2)}' | sed 's|/$||; /^$/d' >"$T/paths"
while read -r p; do [[ -e $p || -L $p ]] && echo "$p"; done <"$T/paths" >"$T/preexisting"
if ! check "dpkg -i" "$T/install.log" dpkg -i "$deb"; then
  finish
fi
dpkg -L provisioner | sed '/^\/\.$/d' >"$T/installed"

installed_version() {
  local v
  local re="^provisioner ${version//./\\.} \\(commit ([0-9a-f]+|unknown), built [0-9TZ:-]+\\)$"
  v=$(provisioner --version) && echo "$v" && [[ $(command -v provisioner) == /usr/bin/provisioner ]] &&
    [[ $v =~ $re ]]
}
check "installed provisioner --version" "$T/version.log" installed_version &&
  sed 's/^/  /' "$T/version.log"

unit_ok() {
  local name unit
  for name in provisioner-apply provisioner-agent; do
    unit=/lib/systemd/system/$name.service
    systemd-analyze verify "$unit" >"$T/verify.out" 2>&1
    cat "$T/verify.out"
    [[ ! -s "$T/verify.out" ]] && grep -q '^ExecStart=/usr/bin/provisioner ' "$unit" &&
      ! systemctl --root=/ is-enabled "$name.service" >/dev/null 2>&1 || return 1
  done
}
check "systemd-analyze verify (installed units, not enabled)" "$T/unit.log" unit_ok

# The package's agent serves /metrics (the portable binary cannot): on a copy
# of a bundled host tree, then SIGTERM, exit 0.
mkdir -p "$T/agent-tree"
"$ttar" -x examples/hosts/cx5-roce.ttar -C "$T/agent-tree" >"$T/ttar2.log" 2>&1 || cat "$T/ttar2.log"
check "installed agent serves /metrics" "$T/metrics.log" \
  python3 scripts/check_metrics.py /usr/bin/provisioner "$T/agent-tree" &&
  grep '^metrics: http' "$T/metrics.log" | sed 's/^/  /'

man_ok() {
  local page=/usr/share/man/man1/provisioner.1.gz sub
  LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" >"$T/man.txt" 2>"$T/man.err"
  cat "$T/man.err"
  [[ ! -s "$T/man.err" ]] && grep -q '^NAME' "$T/man.txt" || return 1
  for sub in $(provisioner --help | awk '/^Subcommands:/ {s = 1; next} s && /^$/ {exit} s && /^  [a-z]/ {print $1}'); do
    grep -q "provisioner $sub \[OPTIONS\]" "$T/man.txt" || { echo "man page lacks $sub"; return 1; }
  done
}
check "man page" "$T/man.log" man_ok

completion_ok() {
  bash -c 'source /usr/share/bash-completion/completions/provisioner
    COMP_WORDS=(provisioner ""); COMP_CWORD=1; _provisioner; echo "${COMPREPLY[*]}"
    COMP_WORDS=(provisioner plan -o ""); COMP_CWORD=3; _provisioner; echo "${COMPREPLY[*]}"' >"$T/comp.out"
  cat "$T/comp.out"
  grep -qw discover <(sed -n 1p "$T/comp.out") && [[ $(sed -n 2p "$T/comp.out") == "table json yaml" ]]
}
check "bash completion" "$T/completion.log" completion_ok

bundled_tree_ok() {
  # README's first try without hardware or Bazel: a shipped tree as --root.
  provisioner plan /usr/share/doc/provisioner/examples/roce-sriov.yaml \
    --root /usr/share/provisioner/hosts/cx5-roce.ttar -o json >"$T/bundled.json" &&
    grep -q '"changes"' "$T/bundled.json" &&
    ! provisioner apply /usr/share/doc/provisioner/examples/roce-sriov.yaml -y \
      --root /usr/share/provisioner/hosts/cx5-roce.ttar
}
check "bundled host tree as --root (read-only)" "$T/bundled.log" bundled_tree_ok

# 7. Remove, then purge: every file of the package gone, and every directory it
#    created (those that were not there before the install).
removed_clean() {
  dpkg -r provisioner && dpkg --purge provisioner || return 1
  local left=0 p
  while read -r p; do
    grep -qxF "$p" "$T/preexisting" && continue
    if [[ -e $p || -L $p ]]; then
      echo "left behind: $p"
      left=1
    fi
  done <"$T/installed"
  ! dpkg-query -W -f='${Status}' provisioner 2>/dev/null | grep -q installed && ((left == 0))
}
check "dpkg -r and purge leave nothing" "$T/remove.log" removed_clean

finish
