#!/usr/bin/python3
"""A stand-in for the provisioner binary whose one change needs a reboot.

No module of the real binary plans a reboot change on a host tree yet (link type
needs mstconfig and firmware), so the role's reboot path is tested against this
double of the contract (docs/CONTRACT.md): `apply` of a pending change prints the
apply JSON, writes run/reboot-required under --root and exits 3; once that marker
is there, or etc/booted-with-change (the test's stand-in reboot makes it), the host
counts as converged (exit 0, no changes). Each plan/apply is appended to
$KUBECTL_LOG when set, so the role test sees it in order with kubectl's calls.
"""
import json
import os
import sys

CHANGE = {
    "id": "linktype/0000:af:00.0/linkType", "module": "linktype", "target": "0000:af:00.0",
    "attribute": "linkType", "before": "ib", "after": "eth", "disruption": "reboot", "action": "change",
    "reason": "nic gpu1-nic wants linkType eth",
}


def main(argv):
    args = [a for a in argv if a != "--no-color"]
    command, path = args[0], args[1]
    root = args[args.index("--root") + 1] if "--root" in args else "/"
    if not os.path.isfile(path):
        sys.stderr.write("%s: no such file\n" % path)
        return 1
    if command == "validate":
        print("%s: valid" % path)
        return 0
    log = os.environ.get("KUBECTL_LOG")
    if log:
        with open(log, "a") as f:
            f.write("provisioner %s\n" % command)
    marker = os.path.join(root, "run", "reboot-required")
    booted = os.path.join(root, "etc", "booted-with-change")
    done = os.path.exists(marker) or os.path.exists(booted)
    pending = [] if done else [dict(CHANGE)]
    doc = {"formatVersion": 1, "root": root, "changes": pending, "warnings": [],
           "summary": {"changes": len(pending), "rebootRequired": bool(pending)}}
    if command == "plan" or not pending:
        print(json.dumps(doc))
        return 0
    os.makedirs(os.path.dirname(marker), exist_ok=True)
    with open(marker, "w") as f:
        f.write("*** System restart required ***\n")
    doc["changes"][0]["status"] = "applied"
    doc["summary"]["applied"] = 1
    print(json.dumps(doc))
    return 3


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
