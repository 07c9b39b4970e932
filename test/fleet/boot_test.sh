#!/bin/bash
# Boot-time integration: systemd-analyze verify accepts dist/systemd/provisioner-apply.service
# (and would flag a broken copy); its ExecStart, run against a host tree, converges it with an
# exit status the unit counts as success; the cloud-init example is a #cloud-config whose
# host.yaml validates and plans on the bundled tree, and that installs the Debian package
# (which brings the unit, at the binary path the package uses) instead of embedding it.
source "$TEST_SRCDIR/${TEST_WORKSPACE:-provisioner}/test/fleet/fleet_env.sh"
require systemd-analyze systemd
UNIT="$R/dist/systemd/provisioner-apply.service"
CLOUD="$R/dist/cloud-init/provisioner.cloud-config.yaml"

# unit_value KEY: the value of KEY= in the unit (last one wins, as in systemd).
unit_value() { sed -n "s/^$1=//p" "$UNIT" | tail -1; }

# 1. systemd-analyze verify on an image-like root holding the binary at ExecStart's path
#    (verify checks that the command exists). It exits 0 on warnings too, so any output fails.
#    --man=no: verify would run the host's `man provisioner` for Documentation=; the
#    installed package's page is checked that way by scripts/test-package.sh.
SYSROOT="$T/sysroot"
exec_start=$(unit_value ExecStart)
read -r -a exec_argv <<<"$exec_start"
mkdir -p "$SYSROOT/etc/systemd/system" "$SYSROOT$(dirname "${exec_argv[0]}")"
install -m 0755 "$PROVISIONER" "$SYSROOT${exec_argv[0]}"
cp "$UNIT" "$SYSROOT/etc/systemd/system/"
LAST_LOG="$T/verify.log"
systemd-analyze verify --man=no --root="$SYSROOT" /etc/systemd/system/provisioner-apply.service \
  >"$LAST_LOG" 2>&1 || fail "systemd-analyze verify failed"
[[ ! -s "$LAST_LOG" ]] || fail "systemd-analyze verify reported problems"
# The check has teeth: a bad exit status and a missing binary are both reported.
sed 's/^SuccessExitStatus=.*/SuccessExitStatus=three/' "$UNIT" \
  >"$SYSROOT/etc/systemd/system/provisioner-apply.service"
rm "$SYSROOT${exec_argv[0]}"
LAST_LOG="$T/verify-broken.log"
systemd-analyze verify --man=no --root="$SYSROOT" /etc/systemd/system/provisioner-apply.service \
  >"$LAST_LOG" 2>&1
log_has "Failed to parse value, ignoring: three"
log_has "is not executable: No such file or directory"
LAST_LOG=""

# 2. What the unit promises: oneshot that stays active, before kubelet and the network,
#    after the module loader and udev, exit 3 a success.
[[ ${exec_argv[0]} == /usr/bin/provisioner ]] ||
  fail "ExecStart runs ${exec_argv[0]}, not the package's /usr/bin/provisioner"
[[ $(unit_value Documentation) == *"man:provisioner(1)"* ]] || fail "no Documentation=man:provisioner(1)"
[[ $(unit_value Type) == oneshot && $(unit_value RemainAfterExit) == yes ]] || fail "not a oneshot"
unit_value Before | grep -qw kubelet.service || fail "not Before=kubelet.service"
unit_value Before | grep -qw network-pre.target || fail "not Before=network-pre.target"
for u in systemd-modules-load.service systemd-udev-settle.service; do
  unit_value After | grep -qw "$u" || fail "not After=$u"
done
read -r -a success_codes <<<"0 $(unit_value SuccessExitStatus)"
[[ " ${success_codes[*]} " == *" 3 "* ]] || fail "exit 3 (reboot required) is not a success"
# systemctl stop during the apply: SIGTERM, then the rollback, which takes at most
# 2 x 2 min (sriov_numvfs writes) + 2 x 300 s (the default --settle-timeout) = 14 min;
# systemd must not SIGKILL it before (its default: 90 s). docs/CONTRACT.md, "Signals".
stop=$(unit_value TimeoutStopSec)
[[ $stop =~ ^([0-9]+)min$ ]] || fail "TimeoutStopSec='$stop': want minutes above the rollback's 14 min"
((BASH_REMATCH[1] > 14)) || fail "TimeoutStopSec=$stop is not above the rollback's worst case (14 min)"

# 3. ExecStart converges a host tree (with --root appended, the file under the tree).
ROOT="$T/root"
extract_tree cx5-roce "$ROOT"
start_kernel_sim "$ROOT"
mkdir -p "$ROOT$(dirname "${exec_argv[2]}")"
cp "$R/test/fleet/host.yaml" "$ROOT${exec_argv[2]}"
"$PROVISIONER" "${exec_argv[@]:1:1}" "$ROOT${exec_argv[2]}" "${exec_argv[@]:3}" --root "$ROOT" \
  >"$T/exec.out" 2>&1
rc=$?
[[ " ${success_codes[*]} " == *" $rc "* ]] || fail "ExecStart exited $rc: $(cat "$T/exec.out")"
[[ $(cat "$ROOT/sys/bus/pci/devices/0000:af:00.0/sriov_numvfs") == 4 ]] || fail "ExecStart did not apply"

# 4. The cloud-config.
[[ $(head -1 "$CLOUD") == "#cloud-config" ]] || fail "$CLOUD does not start with #cloud-config"
python3 - "$CLOUD" "$T/cloud-host.yaml" <<'PY' || fail "cloud-config checks"
import sys, yaml
cloud, host_out = sys.argv[1:]
doc = yaml.safe_load(open(cloud))
def check(ok, what):
    if not ok:
        sys.exit("cloud-config: " + what)
check(set(doc) <= {"write_files", "runcmd", "bootcmd", "packages"}, "unexpected keys %s" % sorted(doc))
files = {f["path"]: f for f in doc["write_files"]}
check(all(f.get("permissions") == "0644" for f in files.values()), "permissions")
check(not any(p.endswith(".service") for p in files),
      "a unit in write_files: the package installs provisioner-apply.service")
open(host_out, "w").write(files["/etc/provisioner/host.yaml"]["content"])
check(all(isinstance(c, list) for c in doc["runcmd"]), "runcmd entries must be argv lists (no shell)")
run = doc["runcmd"]
check(["systemctl", "enable", "--now", "provisioner-apply.service"] in run,
      "runcmd does not enable and start provisioner-apply.service")
install = [i for i, c in enumerate(run)
           if c[:3] == ["apt-get", "install", "-y"] and len(c) == 4 and c[3].startswith("/")
           and c[3].endswith(".deb")]
check(install, "runcmd does not install the package (apt-get install -y /path/provisioner.deb)")
check(install[0] < run.index(["systemctl", "daemon-reload"])
      < run.index(["systemctl", "enable", "--now", "provisioner-apply.service"]),
      "runcmd order: install the package, daemon-reload, then enable --now")
PY
"$PROVISIONER" validate "$T/cloud-host.yaml" >"$T/cloud-validate.out" 2>&1 ||
  fail "cloud-config host.yaml: $(cat "$T/cloud-validate.out")"
"$PROVISIONER" plan "$T/cloud-host.yaml" --root "$ROOT" -o json >"$T/cloud-plan.json" 2>"$T/cloud-plan.err" ||
  fail "cloud-config host.yaml does not plan on cx5-roce: $(cat "$T/cloud-plan.err")"
json_is "$T/cloud-plan.json" '{"id": "sriov/0000:af:00.0/numVfs", "after": 12} in [{"id": c["id"], "after": c["after"]} for c in r["changes"]]'
if command -v cloud-init >/dev/null; then
  cloud-init schema --config-file "$CLOUD" >"$T/schema.out" 2>&1 ||
    fail "cloud-init schema: $(cat "$T/schema.out")"
else
  echo "note: cloud-init not installed, its schema check skipped"
fi

echo PASS
