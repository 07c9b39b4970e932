#!/usr/bin/env bash
# The bash completion (dist/bash-completion/provisioner) against the real
# binary, as bash runs it: COMP_WORDS/COMP_CWORD set, _provisioner called,
# COMPREPLY checked. Issue 38 item 12: global options after the subcommand
# (and their values), --root completing directories and .ttar files, `help`
# offered, FILE completing *.yaml/*.yml.
#   bash_completion_test.sh PROVISIONER COMPLETION_SCRIPT
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
# shellcheck source=/dev/null
source "$2"

work=${TEST_TMPDIR:-$(mktemp -d)}/completion
mkdir -p "$work/trees.d" && cd "$work" || exit 1
touch host.yaml rails.yml notes.txt worker1.ttar

failures=0
# complete WORD... : the sorted candidates for the last word (the one being completed).
complete_words() {
  COMP_WORDS=("$bin" "$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _provisioner
  printf '%s\n' "${COMPREPLY[@]}" | sort -u | tr '\n' ' '
}
# expect "WORDS" has|lacks CANDIDATE...
expect() {
  local words=$1 mode=$2 got c
  shift 2
  read -r -a argv <<<"$words"
  [[ $words == *" " || -z $words ]] && argv+=("")
  got=" $(complete_words "${argv[@]}")"
  for c in "$@"; do
    if [[ $mode == has && $got != *" $c "* ]] || [[ $mode == lacks && $got == *" $c "* ]]; then
      echo "FAIL: provisioner $words<TAB>: $mode $c; got:$got"
      failures=$((failures + 1))
    fi
  done
}

# Subcommands, and `help`, at the first word; after `help`, the subcommands.
expect "" has discover validate plan apply manifests doctor show snapshot agent status help
expect "help " has plan apply doctor
expect "--log-level debug pl" has plan
# Global options after the subcommand, with the subcommand's own.
expect "plan --" has --log-level --no-color --quiet --verbose --root --out --detailed-exitcode
expect "apply host.yaml --" has --log-level --quiet --rollback --settle-timeout
# A global option's values after the subcommand; a subcommand option's values.
expect "plan host.yaml --log-level " has trace debug info warn error
expect "plan host.yaml --log-level " lacks host.yaml notes.txt
expect "plan -o " has table json yaml
expect "doctor --only " has fail warn ok
# --root: directories and .ttar archives, nothing else.
expect "plan host.yaml --root " has trees.d worker1.ttar
expect "plan host.yaml --root " lacks host.yaml notes.txt
expect "validate host.yaml --root " has trees.d worker1.ttar
expect "apply --rollback --root " has trees.d worker1.ttar
# FILE: host.yaml files (and directories), not other files.
expect "plan " has host.yaml rails.yml trees.d
expect "plan " lacks notes.txt worker1.ttar
expect "--no-color validate " has host.yaml
expect "doctor " has host.yaml
expect "doctor " lacks notes.txt

if ((failures > 0)); then
  echo "$failures completion check(s) failed"
  exit 1
fi
echo "bash completion: all checks passed"
