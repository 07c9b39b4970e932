#!/bin/bash
# ansible-playbook (Debian's ansible-core) runs the provisioner module on a bundled
# host tree, the way Molecule would: check mode plans and writes nothing, the first
# apply changes, the second is ok (idempotence), bad input fails with file:line:column.
source "$TEST_SRCDIR/${TEST_WORKSPACE:-provisioner}/test/fleet/fleet_env.sh"
require ansible-playbook ansible-core

ROOT="$T/root"
extract_tree cx5-roce "$ROOT"
start_kernel_sim "$ROOT"
PF="$ROOT/sys/bus/pci/devices/0000:af:00.0"
HOST_YAML="$R/test/fleet/host.yaml"
vars=(-e "tree_root=$ROOT" -e "provisioner_binary=$PROVISIONER")

# 1. Check mode + diff: changed, the planned change shown, nothing written.
before=$(tree_sum "$ROOT")
pb check 0 "$PLAYBOOKS/converge.yml" "${vars[@]}" -e "host_config=$HOST_YAML" \
  -e "result_file=$T/check.json" --check --diff
recap_has changed=1
log_has "--- before: sriov/0000:af:00.0/numVfs"
log_has "+numVfs: 4"
json_is "$T/check.json" 'r["changed"] and r["cmd"][2] == "plan" and len(r["changes"]) == 1'
json_is "$T/check.json" 'r["changes"][0]["before"] == 0 and r["changes"][0]["after"] == 4'
json_is "$T/check.json" 'r["reboot_required"] is False'
[[ $(tree_sum "$ROOT") == "$before" ]] || fail "check mode wrote into the tree"
[[ $(cat "$PF/sriov_numvfs") == 0 ]] || fail "check mode enabled VFs"

# 2. First apply (with diff): changed, VFs there.
pb apply 0 "$PLAYBOOKS/converge.yml" "${vars[@]}" -e "host_config=$HOST_YAML" \
  -e "result_file=$T/apply.json" --diff
recap_has changed=1
log_has "-numVfs: 0"
log_has "+numVfs: 4"
json_is "$T/apply.json" 'r["changed"] and r["cmd"][2] == "apply" and r["rc"] == 0'
json_is "$T/apply.json" '[c["status"] for c in r["changes"]] == ["applied"]'
json_is "$T/apply.json" 'r["changes"][0]["id"] == "sriov/0000:af:00.0/numVfs" and r["changes"][0]["after"] == 4'
[[ $(cat "$PF/sriov_numvfs") == 4 ]] || fail "sriov_numvfs is $(cat "$PF/sriov_numvfs"), want 4"
[[ -L "$PF/virtfn3" && ! -e "$PF/virtfn4" ]] || fail "want VFs virtfn0..3"
applied=$(tree_sum "$ROOT")
[[ "$applied" != "$before" ]] || fail "apply changed nothing in the tree"

# 3. Second apply: ok, no change reported, nothing written (idempotence).
pb again 0 "$PLAYBOOKS/converge.yml" "${vars[@]}" -e "host_config=$HOST_YAML" \
  -e "result_file=$T/again.json"
recap_has changed=0
json_is "$T/again.json" 'not r["changed"] and r["changes"] == [] and r["rc"] == 0'
[[ $(tree_sum "$ROOT") == "$applied" ]] || fail "a second apply wrote into the tree"

# 4. Check mode on the converged tree: ok.
pb check-again 0 "$PLAYBOOKS/converge.yml" "${vars[@]}" -e "host_config=$HOST_YAML" \
  -e "result_file=$T/check-again.json" --check
recap_has changed=0

# 5. Inline dict config with a templated numVfs: planned 4 -> 2 (asserted in the play).
# (JSON extra vars: -e key=value would make the numbers strings, which the schema rejects.)
pb inline 0 "$PLAYBOOKS/inline.yml" "${vars[@]}" -e '{"inline_vfs": 2, "applied_vfs": 4}' --check
recap_has changed=1
recap_has failed=0

# 6. Bad host.yaml: the task fails with the binary's file:line:column message, no write.
pb bad 2 "$PLAYBOOKS/converge.yml" "${vars[@]}" -e "host_config=$R/test/fleet/bad-host.yaml" \
  -e "result_file=$T/bad.json"
recap_has failed=1
log_has "fatal: [localhost]: FAILED!"
log_has '"msg": "'"$R"'/test/fleet/bad-host.yaml:11:15: spec.nics[0].numVfs: 300 exceeds sriov_totalvfs 127 of 0000:af:00.0"'
[[ $(tree_sum "$ROOT") == "$applied" ]] || fail "a failed apply wrote into the tree"

sed 's/numVfs: 4/numVfz: 4/' "$HOST_YAML" >"$T/typo.yaml"
pb typo 2 "$PLAYBOOKS/converge.yml" "${vars[@]}" -e "host_config=$T/typo.yaml" \
  -e "result_file=$T/typo.json" --check
log_has "$T/typo.yaml:11:7: spec.nics[0].numVfz: unknown field"

# 7. An apply the kernel refuses (a third tree, its simulated driver enables no VFs):
#    the task fails with the binary's error, the change marked failed and rolled back.
ROOT3="$T/root3"
extract_tree cx5-roce "$ROOT3"
start_kernel_sim "$ROOT3" --fault 0000:af:00.0=EBUSY
pb refused 2 "$PLAYBOOKS/converge.yml" -e "tree_root=$ROOT3" -e "provisioner_binary=$PROVISIONER" \
  -e "host_config=$HOST_YAML" -e "result_file=$T/refused.json"
recap_has failed=1
log_has "provisioner: error: apply sriov/0000:af:00.0/numVfs <- apply 0000:af:00.0 numVfs <- "
log_has '"rolled_back": [{"action": "remove", "after": 0'
log_has '"status": "failed"'
# The host at exit (issue 38 item 3): nothing stays applied, so nothing changed
# (the failed task's result is in the log: the play ends before result_file).
log_has '"changed": false'
log_has '"applied": 0'
log_has '"failed": 1'
log_has '"notAttempted": 0'
[[ $(cat "$ROOT3/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs") == 0 ]] || fail "refused apply not rolled back"

# 7b. A binary that is not there: a clear failure, not a traceback.
pb nobinary 2 "$PLAYBOOKS/converge.yml" -e "tree_root=$ROOT" -e "provisioner_binary=$T/nope" \
  -e "host_config=$HOST_YAML" -e "result_file=$T/nobinary.json"
log_has "provisioner binary $T/nope: not an executable file"

# 8. The binary's warnings reach Ansible: an apply killed mid-way (on a second tree
#    that no simulated kernel answers, so it waits for VFs) leaves a journal, which
#    the next plan reports.
ROOT2="$T/root2"
extract_tree cx5-roce "$ROOT2"
"$PROVISIONER" apply "$HOST_YAML" --root "$ROOT2" --settle-timeout 60 >/dev/null 2>&1 &
apply_pid=$!
for _ in $(seq 400); do  # up to 20 s (slow sanitizer builds)
  grep -q applying "$ROOT2/run/provisioner/journal.json" 2>/dev/null && break
  sleep 0.05
done
kill -9 "$apply_pid"
wait "$apply_pid" 2>/dev/null
grep -q applying "$ROOT2/run/provisioner/journal.json" || fail "the killed apply left no journal"
pb interrupted 0 "$PLAYBOOKS/converge.yml" -e "tree_root=$ROOT2" -e "provisioner_binary=$PROVISIONER" \
  -e "host_config=$HOST_YAML" -e "result_file=$T/interrupted.json" --check
log_has "[WARNING]: an earlier apply was interrupted"
json_is "$T/interrupted.json" 'any("an earlier apply was interrupted" in w for w in r["warnings"])'

# 9. The collection builds and installs (offline) like any Galaxy collection, and
#    ansible-doc reads the module's DOCUMENTATION/EXAMPLES/RETURN from the installed copy.
cp -rL "$R/ansible" "$T/collection-src"  # runfiles are symlinks, which galaxy skips
LAST_LOG="$T/galaxy.log"
{ ansible-galaxy collection build "$T/collection-src" --output-path "$T/galaxy" &&
  ansible-galaxy collection install "$T"/galaxy/provisioner-host-*.tar.gz -p "$T/installed"; } \
  >"$LAST_LOG" 2>&1 || fail "ansible-galaxy build/install"
LAST_LOG="$T/doc.log"
ANSIBLE_COLLECTIONS_PATH="$T/installed" ansible-doc provisioner.host.provisioner >"$LAST_LOG" 2>&1 ||
  fail "ansible-doc provisioner.host.provisioner"
log_has "= config"
log_has "- reboot_required"
log_has "EXAMPLES:"

echo PASS
