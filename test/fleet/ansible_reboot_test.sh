#!/bin/bash
# The provisioner role's reboot path: apply exit 3 notifies the reboot handler (off by
# default) or, with provisioner_reboot, cordons, drains, reboots, waits, converges and
# uncordons (a stand-in binary whose change needs a reboot, and a stand-in kubectl
# recording the calls).
source "$TEST_SRCDIR/${TEST_WORKSPACE:-provisioner}/test/fleet/fleet_env.sh"
require ansible-playbook ansible-core

INV="$R/test/fleet/inventory"

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

echo PASS
