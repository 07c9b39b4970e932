#!/bin/bash
# The provisioner role with ansible-playbook: installs the binary and host.yaml (NICs
# overridden per host from host_vars), validates, applies on a host tree; a second run
# is ok; check mode plans without writing; an invalid host.yaml, no binary, an installed
# one, and a package and a binary at once; a change that destroys pods' VFs drains
# before apply (a stand-in kubectl records the calls); the fleet example parses.
# The package install is ansible_package_test.sh's, the reboot path
# ansible_reboot_test.sh's (three tests: Bazel runs them side by side).
source "$TEST_SRCDIR/${TEST_WORKSPACE:-provisioner}/test/fleet/fleet_env.sh"
require ansible-playbook ansible-core

ROOT="$T/root"
extract_tree cx5-roce "$ROOT"
start_kernel_sim "$ROOT"
INV="$R/test/fleet/inventory"
BIN="$T/node/usr/local/bin/provisioner"
CONF="$T/node/etc/provisioner/host.yaml"
vars=(-e "provisioner_binary_src=$PROVISIONER" -e "provisioner_binary_path=$BIN"
  -e "provisioner_config_path=$CONF" -e "provisioner_root=$ROOT")
pf_vfs() { cat "$ROOT/sys/bus/pci/devices/$1/sriov_numvfs"; }

# 1. Check mode on a fresh node: would install, writes nothing anywhere.
before=$(tree_sum "$ROOT")
pb role-check 0 -i "$INV" "$PLAYBOOKS/role.yml" "${vars[@]}" --check --diff
recap_has failed=0
log_has "changed: [localhost]"
[[ ! -e "$BIN" && ! -e "$CONF" ]] || fail "check mode installed files"
[[ $(tree_sum "$ROOT") == "$before" ]] || fail "check mode wrote into the tree"

# 2. Real run: binary and host.yaml installed, host_vars' NIC applied, not group_vars'.
pb role-apply 0 -i "$INV" "$PLAYBOOKS/role.yml" "${vars[@]}" --diff
recap_has failed=0
log_has "provisioner: copied binary ($PROVISIONER) at $BIN"
log_has "TASK [provisioner.host.provisioner : Validate host.yaml]"
log_has "+numVfs: 8"
[[ -x "$BIN" ]] && cmp -s "$BIN" "$PROVISIONER" || fail "binary not installed at $BIN"
grep -q '0000:af:00.1' "$CONF" && ! grep -q '0000:af:00.0' "$CONF" ||
  fail "host.yaml lacks the host_vars NIC override: $(cat "$CONF")"
grep -q 'name: localhost' "$CONF" && grep -q 'name: v4-81' "$CONF" ||
  fail "host.yaml lacks the node name or the group_vars spec: $(cat "$CONF")"
"$PROVISIONER" validate "$CONF" >/dev/null || fail "installed host.yaml is not valid"
[[ $(pf_vfs 0000:af:00.1) == 8 ]] || fail "0000:af:00.1 has $(pf_vfs 0000:af:00.1) VFs, want 8"
[[ $(pf_vfs 0000:af:00.0) == 0 ]] || fail "0000:af:00.0 got VFs from the group default"
applied=$(tree_sum "$ROOT")

# 3. Again: ok everywhere; check mode too.
pb role-again 0 -i "$INV" "$PLAYBOOKS/role.yml" "${vars[@]}"
recap_has changed=0
recap_has failed=0
[[ $(tree_sum "$ROOT") == "$applied" ]] || fail "a second role run wrote into the tree"
pb role-check-again 0 -i "$INV" "$PLAYBOOKS/role.yml" "${vars[@]}" --check
recap_has changed=0

# 4. Invalid host.yaml from inventory: the template's validation fails the play with
#    the binary's message; the node keeps its current host.yaml, the tree is untouched.
good_conf=$(cat "$CONF")
pb role-invalid 2 -i "$INV" "$PLAYBOOKS/role.yml" "${vars[@]}" \
  -e '{"provisioner_nics": [{"name": "gpu1-nic", "nicSelector": {"rootDevices": ["0000:af:00.1"]}, "numVfz": 2}]}'
recap_has failed=1
log_has "TASK [provisioner.host.provisioner : Install host.yaml]"
log_has ':19:5: spec.nics[0].numVfz: unknown field \"numVfz\" (did you mean \"numVfs\"?)'
[[ $(cat "$CONF") == "$good_conf" ]] || fail "an invalid host.yaml replaced the installed one"
[[ $(tree_sum "$ROOT") == "$applied" ]] || fail "an invalid host.yaml reached the tree"

# 4b. No binary to install and none on the node: a clear failure before anything else.
pb role-nobinary 2 -i "$INV" "$PLAYBOOKS/role.yml" -e provisioner_binary_src= \
  -e "provisioner_binary_path=$T/none/provisioner" -e "provisioner_config_path=$T/none/host.yaml" \
  -e "provisioner_root=$ROOT"
log_has "$T/none/provisioner is not an executable file: set provisioner_package_src to the"
[[ ! -e "$T/none/host.yaml" ]] || fail "host.yaml installed without a binary"

# 4c. Already installed (neither source): the binary at provisioner_binary_path is used.
pb role-installed 0 -i "$INV" "$PLAYBOOKS/role.yml" -e provisioner_binary_src= "${vars[@]:2}"
recap_has failed=0
log_has "provisioner: already installed at $BIN"

# 4d. A package and a binary at once: refused before anything is installed.
pb role-both 2 -i "$INV" "$PLAYBOOKS/role.yml" -e "provisioner_package_src=$T/x.deb" \
  -e "provisioner_binary_src=$PROVISIONER" -e "provisioner_binary_path=$T/both/provisioner" \
  -e "provisioner_config_path=$T/both/host.yaml" -e "provisioner_root=$ROOT"
log_has "set provisioner_package_src (a .deb) or provisioner_binary_src (a binary), not both"
[[ ! -e "$T/both" ]] || fail "the refused run installed something"

# Kubectl calls (test/fleet/kubectl_stub.sh) in one ordered log.
export KUBECTL_LOG="$T/kubectl.log"
: >"$KUBECTL_LOG"
calls() { grep -v '^provisioner plan$' "$KUBECTL_LOG" | tr '\n' ';'; }

# 5b. A change that destroys the VFs pods use (numVfs 8 -> 4 on 0000:af:00.1, a replace:
#     apply writes 0 first) drains the node before apply and uncordons it after, with the
#     real binary on the tree from step 2; exit 0, no reboot.
dvars=("${vars[@]}" -e "provisioner_kubectl=$R/test/fleet/kubectl_stub.sh"
  -e provisioner_kube_node_name=gpu-node-001 -e provisioner_drain_retries=1 -e provisioner_drain_delay=0)
four='{"provisioner_nics": [{"name": "gpu1-nic", "nicSelector": {"rootDevices": ["0000:af:00.1"]}, "numVfs": 4}]}'
# A drain that fails: uncordoned again, the host fails, nothing applied.
: >"$KUBECTL_LOG"
KUBECTL_FAIL_DRAIN=1 pb drain-fails 2 -i "$INV" "$PLAYBOOKS/role.yml" "${dvars[@]}" -e "$four"
log_has "could not drain node gpu-node-001 (sriov/0000:af:00.1/numVfs)"
[[ $(pf_vfs 0000:af:00.1) == 8 ]] || fail "a failed drain still applied: $(pf_vfs 0000:af:00.1) VFs"
[[ $(calls) == kubectl\ cordon\ gpu-node-001\;kubectl\ drain*\;kubectl\ uncordon\ gpu-node-001\; ]] ||
  fail "failed drain: calls were $(calls)"
: >"$KUBECTL_LOG"
pb drain-apply 0 -i "$INV" "$PLAYBOOKS/role.yml" "${dvars[@]}" -e "$four"
recap_has failed=0
[[ $(pf_vfs 0000:af:00.1) == 4 ]] || fail "0000:af:00.1 has $(pf_vfs 0000:af:00.1) VFs, want 4"
want="kubectl cordon gpu-node-001;kubectl drain gpu-node-001 --ignore-daemonsets --delete-emptydir-data"
want+=" --force --grace-period=-1 --timeout=90s;kubectl uncordon gpu-node-001;"
[[ $(calls) == "$want" ]] || fail "replace: calls were $(calls), want $want"
# Converged (or only adding VFs): no drain.
: >"$KUBECTL_LOG"
pb drain-none 0 -i "$INV" "$PLAYBOOKS/role.yml" "${dvars[@]}" -e "$four"
recap_has changed=0
[[ ! -s $KUBECTL_LOG ]] || fail "a converged host was drained: $(calls)"

# 6. The fleet example: the playbook parses, the role resolves, and the inventory gives
#    gpu-node-017 its own NICs (host_vars) and the others the group's.
FLEET="$R/ansible/examples/fleet"
pb fleet-syntax 0 -i "$FLEET/inventory" "$FLEET/site.yml" --syntax-check
LAST_LOG="$T/fleet-inventory.log"
ansible-inventory -i "$FLEET/inventory" --list >"$T/fleet-inventory.json" 2>"$LAST_LOG" ||
  fail "ansible-inventory on the fleet example"
json_is "$T/fleet-inventory.json" 'r["_meta"]["hostvars"]["gpu-node-017"]["provisioner_nics"][0]["nicSelector"]["rootDevices"] == ["0000:3b:00.0"]'
json_is "$T/fleet-inventory.json" 'r["_meta"]["hostvars"]["gpu-node-001"]["provisioner_nics"][0]["nicSelector"]["rootDevices"] == ["0000:af:00.0"]'

echo PASS
