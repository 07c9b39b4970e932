#!/bin/bash
# The provisioner role with ansible-playbook: installs the binary and host.yaml (NICs
# overridden per host from host_vars), validates, applies on a host tree; a second run
# is ok; check mode plans without writing. The three ways in: the portable binary, the
# Debian package (built here by scripts/build-deb.sh, installed by apt/dpkg into a
# root), already installed; both at once is refused. Then the reboot path: apply exit 3
# notifies the reboot handler (off by default) or, with provisioner_reboot, cordons,
# drains, reboots, waits, converges and uncordons (a stand-in kubectl records the calls);
# a change that destroys pods' VFs drains before apply.
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

# 4e. The package: the real scripts/build-deb.sh around this binary; the role copies it
#     and installs it with apt (dpkg -i) into a root holding an empty dpkg database, then
#     validates and applies with the packaged /usr/bin/provisioner.
DEB=$(DEB_OUT_DIR="$T/deb" "$R/scripts/build-deb.sh" --binary "$PROVISIONER" 2>"$T/build-deb.log" | tail -1)
[[ -f $DEB ]] || { LAST_LOG="$T/build-deb.log"; fail "scripts/build-deb.sh made no package"; }
PKGROOT="$T/node3/root"
PROOT="$T/pkg-tree"
mkdir -p "$PKGROOT/var/lib/dpkg/info" "$PKGROOT/var/lib/dpkg/updates"
touch "$PKGROOT/var/lib/dpkg/status"
extract_tree cx5-roce "$PROOT"
start_kernel_sim "$PROOT"
pb role-package 0 -i "$INV" "$PLAYBOOKS/role.yml" -e "provisioner_package_src=$DEB" \
  -e "provisioner_package_dir=$T/node3/cache" -e "provisioner_package_root=$PKGROOT" \
  -e "provisioner_config_path=$T/node3/etc/host.yaml" -e "provisioner_root=$PROOT"
recap_has failed=0
log_has "provisioner: package ($(basename "$DEB")) at $PKGROOT/usr/bin/provisioner"
cmp -s "$T/node3/cache/$(basename "$DEB")" "$DEB" || fail "the package was not copied to the node"
[[ $("$PKGROOT/usr/bin/provisioner" --version) == $("$PROVISIONER" --version) ]] ||
  fail "the package's binary is not installed"
[[ -f "$PKGROOT/lib/systemd/system/provisioner-apply.service" ]] || fail "the unit is not installed"
dpkg-query --admindir="$PKGROOT/var/lib/dpkg" -W -f='${Status} ${Version}' provisioner |
  grep -q "install ok installed $(cat "$R/VERSION")" || fail "dpkg does not list the package as installed"
[[ $(cat "$PROOT/sys/bus/pci/devices/0000:af:00.1/sriov_numvfs") == 8 ]] ||
  fail "the packaged binary did not apply host.yaml"

# 5. Reboot path (a stand-in binary whose change needs a reboot, see the stub), with
#    a stand-in kubectl recording its calls (and the stub's plan/apply and the stand-in
#    reboot) in one ordered log.
STUB="$R/test/fleet/reboot_stub_provisioner.py"
RROOT="$T/reboot-root"
mkdir -p "$RROOT"
export KUBECTL_LOG="$T/kubectl.log"
: >"$KUBECTL_LOG"
rvars=(-e "provisioner_binary_src=$STUB" -e "provisioner_binary_path=$T/node2/provisioner"
  -e "provisioner_config_path=$T/node2/host.yaml" -e "provisioner_root=$RROOT"
  -e "provisioner_kubectl=$R/test/fleet/kubectl_stub.sh" -e provisioner_kube_node_name=gpu-node-001)
calls() { grep -v '^provisioner plan$' "$KUBECTL_LOG" | tr '\n' ';'; }
pb reboot-off 0 -i "$INV" "$PLAYBOOKS/role.yml" "${rvars[@]}"
log_has "linktype/0000:af:00.0/linkType take effect after a reboot"
log_has "RUNNING HANDLER [provisioner.host.provisioner : Reboot needed, not done]"
log_has "localhost needs a reboot for provisioner's changes (provisioner_reboot is false"
[[ -e "$RROOT/run/reboot-required" ]] || fail "apply exit 3 did not happen"
# No reboot asked: no kubectl call (a pending reboot alone is no reason to drain).
[[ $(calls) == "provisioner apply;" ]] || fail "reboot off: calls were $(calls)"
: >"$KUBECTL_LOG"
pb reboot-converged 0 -i "$INV" "$PLAYBOOKS/role.yml" "${rvars[@]}"
recap_has changed=0
[[ $(calls) == "provisioner apply;" ]] || fail "converged: calls were $(calls)"
# provisioner_reboot=true: cordon, drain, reboot, wait, converge, uncordon, in that
# order. The stand-in reboot (reboot_stub_tasks.yml) is what provisioner_reboot_tasks
# points at: Ansible's reboot module refuses to reboot the controller over a local
# connection.
rm "$RROOT/run/reboot-required"
: >"$KUBECTL_LOG"
pb reboot-on 0 -i "$INV" "$PLAYBOOKS/role.yml" "${rvars[@]}" -e '{"provisioner_reboot": true}' \
  -e "provisioner_reboot_tasks=$R/test/fleet/reboot_stub_tasks.yml"
recap_has failed=0
log_has "TASK [provisioner.host.provisioner : Wait for the node to answer after the reboot]"
want="provisioner apply;kubectl cordon gpu-node-001;kubectl drain gpu-node-001 --ignore-daemonsets"
want+=" --delete-emptydir-data --force --grace-period=-1 --timeout=90s;reboot;provisioner apply;"
want+="kubectl wait --for=condition=Ready node/gpu-node-001 --timeout=600s;kubectl uncordon gpu-node-001;"
[[ $(calls) == "$want" ]] || fail "reboot on: calls were $(calls), want $want"
# The default reboot tasks use Ansible's reboot module: it runs, and refuses the
# controller over the local connection, which is the proof it tried (and is safe).
rm -f "$RROOT/etc/booted-with-change" "$RROOT/run/reboot-required"
pb reboot-module 2 -i "$INV" "$PLAYBOOKS/role.yml" "${rvars[@]}" -e '{"provisioner_reboot": true}'
log_has "TASK [provisioner.host.provisioner : Reboot for provisioner]"
log_has "would reboot the control node"
# provisioner_drain=false (a host that is not a Kubernetes node): no kubectl at all.
rm -f "$RROOT/etc/booted-with-change" "$RROOT/run/reboot-required"
: >"$KUBECTL_LOG"
pb reboot-nodrain 0 -i "$INV" "$PLAYBOOKS/role.yml" "${rvars[@]}" -e '{"provisioner_reboot": true}' \
  -e "provisioner_reboot_tasks=$R/test/fleet/reboot_stub_tasks.yml" -e '{"provisioner_drain": false}'
[[ $(calls) == "provisioner apply;reboot;provisioner apply;" ]] || fail "no drain: calls were $(calls)"

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
