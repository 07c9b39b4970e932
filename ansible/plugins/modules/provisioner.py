#!/usr/bin/python
# -*- coding: utf-8 -*-
# Ansible module for the provisioner binary: converge one GPU/RDMA host to a
# host.yaml. The binary does the work (plan, apply, verify, rollback); this
# module only maps its JSON output and exit codes onto Ansible's result.

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: provisioner
short_description: Converge a GPU/RDMA host to a host.yaml with the provisioner binary
version_added: "0.1.0"
description:
  - Runs C(provisioner plan -o json) (check mode) or C(provisioner apply -o json)
    on the managed host and reports the changes it planned or made.
  - SR-IOV VF counts, RDMA netns mode, kernel modules and the other host settings
    of C(host.yaml) are described in the project's docs/host-yaml.md.
  - The binary runs from an argument list, never through a shell.
  - A second run with the same C(config) reports C(ok), because the binary
    makes no change when the host already matches.
options:
  config:
    description:
      - The desired state. Either the path of a C(host.yaml) on the managed host,
        or the desired state itself as a dictionary (the same keys as
        C(host.yaml)), which the module writes to a temporary file as JSON (JSON
        is YAML) and removes afterwards.
      - Types are kept as given. A number templated from a string (for example
        C(-e numvfs=12) on the command line) stays a string and fails the schema;
        use C({{ numvfs | int }}).
    type: raw
    required: true
  root:
    description:
      - Host root that every host path (C(/sys), C(/proc), C(/etc), C(/run)) is
        resolved under. C(/) is the running host; a captured host tree is used
        for image baking and tests.
    type: path
    default: /
  state:
    description:
      - C(present) converges the host to C(config). No other state yet.
    type: str
    choices: [present]
    default: present
  binary:
    description:
      - The provisioner binary. A bare name is looked up in C(PATH) and
        C(/usr/local/bin).
    type: path
    default: provisioner
  settle_timeout:
    description:
      - Seconds apply waits for VFs and their netdevs to appear
        (C(--settle-timeout)). The binary's default when unset.
    type: float
  lock_timeout:
    description:
      - Seconds apply waits for another apply on the same root
        (C(--lock-timeout)). Unset fails at once when another apply runs.
    type: float
notes:
  - Check mode runs C(plan) only and writes nothing; it reports C(changed) when
    the plan is not empty.
  - Diff mode shows C(before) and C(after) of every planned or applied change.
  - Apply exit code 3 (converged, a reboot or firmware reset is needed) is a
    success with C(reboot_required=true); the module never reboots.
    Notify a handler from it (the C(provisioner) role does, off by default).
  - Errors fail the task with the binary's message, which names
    C(file:line:column) for input problems and the host path and errno for
    host problems.
requirements:
  - the provisioner binary on the managed host
author:
  - provisioner authors
"""

EXAMPLES = r"""
- name: Converge the node to its host.yaml
  provisioner.host.provisioner:
    config: /etc/provisioner/host.yaml
  register: provisioner_result

- name: Desired state inline, from inventory variables
  provisioner.host.provisioner:
    config:
      apiVersion: provisioner/v1alpha1
      kind: HostConfig
      metadata:
        name: "{{ inventory_hostname }}"
      spec:
        nics:
          - name: gpu1-nic
            nicSelector:
              rootDevices: ["{{ gpu1_nic_pci }}"]
            numVfs: 12

- name: Dry run against a captured host tree (CI)
  provisioner.host.provisioner:
    config: host.yaml
    root: /srv/trees/worker1
    binary: /usr/local/bin/provisioner
  check_mode: true
  diff: true

- name: Reboot when a change needs one
  ansible.builtin.reboot:
  when: provisioner_result.reboot_required
"""

RETURN = r"""
changes:
  description:
    - The changes, in the order apply runs them, as C(provisioner) reports them
      (C(id), C(module), C(target), C(attribute), C(before), C(after),
      C(disruption), C(reason)). In check mode the planned changes; otherwise
      every planned change once with its C(status) at exit (C(applied),
      C(deferred-to-reboot), C(rolled-back), C(rollback-failed), C(failed),
      C(not-attempted)). Empty when the host already matched.
  returned: always
  type: list
  elements: dict
  sample:
    - id: sriov/0000:af:00.0/numVfs
      module: sriov
      target: "0000:af:00.0"
      attribute: numVfs
      before: 0
      after: 12
      disruption: live
      reason: nic gpu1-nic wants 12 VFs
      status: applied
reboot_required:
  description:
    - True when a change takes effect only after a reboot or firmware reset
      (apply exit code 3; C(/run/reboot-required) is written under C(root)).
      In check mode, whether the planned changes would need one.
  returned: always
  type: bool
  sample: false
warnings:
  description: Warnings of the binary (for example an interrupted earlier apply).
  returned: when there are any
  type: list
  elements: str
rolled_back:
  description: On a failed apply, the changes that were undone.
  returned: when apply failed after making changes
  type: list
  elements: dict
summary:
  description:
    - The binary's summary (C(changes), C(rebootRequired); after an apply the
      host at exit, C(applied), C(rolledBack), C(rollbackFailed), C(failed),
      C(notAttempted)). C(changed) is whether C(applied) or C(rollbackFailed)
      is not 0 (a failed apply rolled back entirely changed nothing).
  returned: when the binary ran
  type: dict
  sample: {"changes": 1, "rebootRequired": false, "applied": 1, "rolledBack": 0,
           "rollbackFailed": 0, "failed": 0, "notAttempted": 0}
config_file:
  description: The host.yaml the binary read (a temporary file for an inline C(config)).
  returned: always
  type: str
cmd:
  description: The argument list the binary ran with.
  returned: when the binary ran
  type: list
  elements: str
rc:
  description: Exit code of the binary (0 ok, 1 error, 3 applied but a reboot is needed).
  returned: when the binary ran
  type: int
stderr:
  description: What the binary wrote to stderr (progress and errors).
  returned: when the binary ran
  type: str
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible.module_utils.six import string_types

# Exit codes of the binary (docs/CONTRACT.md).
EXIT_OK = 0
EXIT_REBOOT_REQUIRED = 3


def resolve_binary(module, binary):
    if os.sep in binary:
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            module.fail_json(msg="provisioner binary %s: not an executable file" % binary)
        return binary
    return module.get_bin_path(binary, required=True, opt_dirs=["/usr/local/bin"])


def config_file(module, config):
    """The path of a host.yaml holding `config` (written when given inline)."""
    if isinstance(config, string_types):
        return config
    if not isinstance(config, dict):
        module.fail_json(msg="config: a path or a dictionary, not %s" % type(config).__name__)
    # Indented JSON is YAML with one key a line, so the binary's
    # file:line:column messages point somewhere useful in it.
    path = os.path.join(module.tmpdir, "host.yaml")
    with open(path, "w") as f:
        json.dump(config, f, indent=2, sort_keys=False)
        f.write("\n")
    return path


def to_diff(changes):
    """One Ansible diff per change: 'attribute: value' before and after."""
    diffs = []
    for c in changes:
        attribute = c.get("attribute", "value")
        header = c.get("id", attribute)
        diffs.append({
            "before_header": header,
            "after_header": header,
            "before": "%s: %s\n" % (attribute, json.dumps(c.get("before"))),
            "after": "%s: %s\n" % (attribute, json.dumps(c.get("after"))),
        })
    return diffs


def host_changed(result, check_mode):
    """Whether the host differs (check mode: would differ) from before the run.

    apply's summary counts the host at exit: the changes that stay made
    (applied, deferred to the reboot) and those whose rollback failed. A
    failed apply that rolled everything back changed nothing; one whose
    rollback failed did. Without those counts (an older binary), any change
    reported as applied.
    """
    if check_mode:
        return bool(result["changes"])
    summary = result.get("summary") or {}
    if "applied" in summary and "rollbackFailed" in summary:
        return bool(summary["applied"]) or bool(summary["rollbackFailed"])
    return any(c.get("status") in ("applied", "deferred-to-reboot")
               for c in result["changes"] if isinstance(c, dict))


def main():
    module = AnsibleModule(
        argument_spec=dict(
            config=dict(type="raw", required=True),
            root=dict(type="path", default="/"),
            state=dict(type="str", choices=["present"], default="present"),
            binary=dict(type="path", default="provisioner"),
            settle_timeout=dict(type="float"),
            lock_timeout=dict(type="float"),
        ),
        supports_check_mode=True,
    )
    p = module.params
    binary = resolve_binary(module, p["binary"])
    path = config_file(module, p["config"])
    result = dict(changed=False, changes=[], reboot_required=False, config_file=path)

    if module.check_mode:
        cmd = [binary, "--no-color", "plan", path, "--root", p["root"], "-o", "json"]
    else:
        cmd = [binary, "--no-color", "apply", path, "--root", p["root"], "-o", "json"]
        if p["settle_timeout"] is not None:
            cmd += ["--settle-timeout", str(p["settle_timeout"])]
        if p["lock_timeout"] is not None:
            cmd += ["--lock-timeout", str(p["lock_timeout"])]

    # A list argv: no shell, host.yaml paths with spaces or quotes are safe.
    rc, out, err = module.run_command(cmd, environ_update={"NO_COLOR": "1"})
    result.update(cmd=cmd, rc=rc, stderr=err)

    doc = None
    if out.strip():
        try:
            doc = json.loads(out)
        except ValueError as e:
            if rc in (EXIT_OK, EXIT_REBOOT_REQUIRED):
                module.fail_json(msg="provisioner printed no JSON document on stdout: %s"
                                 % to_native(e), stdout=out, **result)
    if isinstance(doc, dict):
        result["changes"] = doc.get("changes", [])
        result["summary"] = doc.get("summary", {})
        if doc.get("warnings"):
            result["warnings"] = doc["warnings"]
        if doc.get("rolledBack"):
            result["rolled_back"] = doc["rolledBack"]

    result["changed"] = host_changed(result, module.check_mode)
    if rc not in (EXIT_OK, EXIT_REBOOT_REQUIRED):
        # The binary's own message: file:line:column for input problems,
        # host path and errno for host problems.
        msg = err.strip() or (doc or {}).get("error") or "provisioner exited %d" % rc
        module.fail_json(msg=msg, stdout=out, **result)

    if doc is None:
        module.fail_json(msg="provisioner printed nothing on stdout", **result)

    if module.check_mode:
        result["reboot_required"] = bool(result.get("summary", {}).get("rebootRequired", False))
    else:
        result["reboot_required"] = rc == EXIT_REBOOT_REQUIRED
    if module._diff and result["changes"]:
        result["diff"] = to_diff(result["changes"])
    # Explicit: Ansible counts a result without "failed" and with rc != 0 as failed,
    # and rc 3 is a success.
    module.exit_json(failed=False, **result)


if __name__ == "__main__":
    main()
