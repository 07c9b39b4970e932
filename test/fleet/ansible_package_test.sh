#!/bin/bash
# The provisioner role installing the Debian package: the real scripts/build-deb.sh
# around this binary; the role copies it and installs it with apt (dpkg -i) into a
# root holding an empty dpkg database, then validates and applies with the packaged
# /usr/bin/provisioner.
source "$TEST_SRCDIR/${TEST_WORKSPACE:-provisioner}/test/fleet/fleet_env.sh"
require ansible-playbook ansible-core

INV="$R/test/fleet/inventory"

DEB=$(DEB_OUT_DIR="$T/deb" DEB_COMPRESSION=none "$R/scripts/build-deb.sh" --binary "$PROVISIONER" 2>"$T/build-deb.log" | tail -1)
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

echo PASS
