# Sourced by the fleet tests (Ansible, systemd, cloud-init): runfiles paths, a private
# Ansible home and temp dirs, the collection in ansible/ loadable as provisioner.host,
# and small helpers.
set -uo pipefail

R="$TEST_SRCDIR/${TEST_WORKSPACE:-provisioner}"
T="$TEST_TMPDIR"
PROVISIONER="$R/engine/cli/provisioner"
TTAR="$R/test/tools/ttar"
KERNEL_SIM="$R/test/sim/kernel_sim"
PLAYBOOKS="$R/test/fleet/playbooks"

# Bazel gives tests no usable HOME; Ansible writes ~/.ansible and its temp dirs.
export HOME="$T/home"
export ANSIBLE_LOCAL_TEMP="$T/ansible-local" ANSIBLE_REMOTE_TEMP="$T/ansible-remote"
export ANSIBLE_NOCOLOR=1 ANSIBLE_RETRY_FILES_ENABLED=0 ANSIBLE_LOCALHOST_WARNING=0
export ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3
# Only our collection, from the source tree: ansible_collections/<namespace>/<name>.
mkdir -p "$HOME" "$T/collections/ansible_collections/provisioner"
ln -sfn "$R/ansible" "$T/collections/ansible_collections/provisioner/host"
export ANSIBLE_COLLECTIONS_PATH="$T/collections" ANSIBLE_COLLECTIONS_SCAN_SYS_PATH=0
cd "$T" || exit 1  # no stray ansible.cfg from the working directory

# require COMMAND PACKAGE: the test needs a real tool; scripts/setup.sh installs it.
require() {
  command -v "$1" >/dev/null || { echo "FAIL: $1 not found (scripts/setup.sh installs $2)"; exit 1; }
}

LAST_LOG=""
fail() {
  echo "FAIL: $*"
  if [[ -n "$LAST_LOG" ]]; then
    echo "----- ansible-playbook output ($LAST_LOG) -----"
    cat "$LAST_LOG"
  fi
  if [[ -s "$T/kernel_sim.log" ]]; then
    echo "----- kernel_sim -----"
    cat "$T/kernel_sim.log"
  fi
  exit 1
}

# pb NAME WANT_RC ARGS...: ansible-playbook against localhost, output in $T/NAME.log.
pb() {
  local name=$1 want=$2
  shift 2
  LAST_LOG="$T/$name.log"
  ansible-playbook -i localhost, -c local "$@" >"$LAST_LOG" 2>&1
  local rc=$?
  [[ $rc == "$want" ]] || fail "$name: ansible-playbook exited $rc, want $want"
}

# recap_has FIELD=N: the PLAY RECAP line of the last run says so (e.g. changed=1).
recap_has() {
  grep -Eq "^localhost +:.* $1 " "$LAST_LOG" || fail "PLAY RECAP does not say $1"
}

# log_has TEXT: the last run's output contains TEXT (fixed string).
log_has() {
  grep -Fq -- "$1" "$LAST_LOG" || fail "output lacks: $1"
}

# json_is FILE PYEXPR: PYEXPR over the JSON document r is true.
json_is() {
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
    "$1" "$2" || fail "$1: not true: $2 ($(cat "$1"))"
}

# tree_sum DIR: one checksum over names, types, modes, link targets and contents.
tree_sum() {
  (cd "$1" && find . -printf '%p %y %m %l\n' | LC_ALL=C sort &&
    find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum) | sha256sum | cut -d' ' -f1
}

# extract_tree NAME DIR: a bundled host tree (examples/hosts/NAME.ttar) into DIR.
extract_tree() {
  "$TTAR" -x "$R/examples/hosts/$1.ttar" -C "$2" || fail "extract $1"
}

# start_kernel_sim DIR [ARGS...]: the simulated kernel reacts to sriov_numvfs writes
# under DIR (ARGS e.g. --fault SUBSTR=ERRNO); stopped when the test exits.
SIM_PIDS=()
trap 'for p in "${SIM_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done' EXIT
start_kernel_sim() {
  local dir=$1
  shift
  local ready="$T/kernel_sim.ready.${#SIM_PIDS[@]}"
  "$KERNEL_SIM" --root "$dir" --netdev-delay-ms 50 --ready-file "$ready" "$@" \
    2>>"$T/kernel_sim.log" &
  SIM_PIDS+=($!)
  for _ in $(seq 400); do  # up to 20 s (slow sanitizer builds)
    [[ -e "$ready" ]] && return 0
    sleep 0.05
  done
  fail "kernel_sim did not get ready"
}
