#!/usr/bin/env bash
# Builds dist/out/provisioner-<version>-linux-<arch>.tar.gz, the portable
# build for hosts without the Debian package:
#   provisioner-<version>/bin/provisioner                  the portable binary (scripts/build-portable.sh)
#   provisioner-<version>/lib/systemd/system/provisioner-apply.service   dist/systemd
#   provisioner-<version>/lib/systemd/system/provisioner-agent.service   dist/systemd
#   provisioner-<version>/share/provisioner/host.schema.json
#   provisioner-<version>/README.md                        dist/portable/README.md: install, and
#                                                          why metrics need the .deb or a source build
#   provisioner-<version>/LICENSE-AND-COPYRIGHT            dist/debian/copyright
# Owners root, mtimes from dist/debian/changelog: the same inputs give the same bytes.
#
# Usage: scripts/build-tarball.sh [--binary PATH] [bazel build flags...]
#   --binary: this portable binary instead of building it.
#   TARBALL_OUT_DIR: where it goes (default dist/out).
# Prints the path of the tarball on its last line (stdout).
set -euo pipefail
cd "$(dirname "$0")/.."
WS=$PWD

bin=""
if [[ ${1-} == --binary ]]; then
  bin=$(realpath "$2")
  shift 2
fi
[[ -n $bin ]] || bin=$(scripts/build-portable.sh "$@" | tail -1)

version=$(tr -d ' \n' <VERSION)
[[ $("$bin" --version) == "provisioner $version ("* ]] ||
  { echo "build-tarball: $bin --version says '$("$bin" --version)', VERSION says $version" >&2; exit 1; }
arch=$(uname -m)
name=provisioner-$version
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
top=$work/$name
install -D -m 0755 "$bin" "$top/bin/provisioner"
install -D -m 0644 -t "$top/lib/systemd/system" dist/systemd/provisioner-apply.service \
  dist/systemd/provisioner-agent.service
install -D -m 0644 schemas/host.schema.json "$top/share/provisioner/host.schema.json"
install -m 0644 dist/portable/README.md "$top/README.md"
install -m 0644 dist/debian/copyright "$top/LICENSE-AND-COPYRIGHT"
epoch=$(dpkg-parsechangelog -l dist/debian/changelog -S Timestamp 2>/dev/null || echo 0)
out_dir=${TARBALL_OUT_DIR:-$WS/dist/out}
mkdir -p "$out_dir"
tarball="$(realpath "$out_dir")/$name-linux-$arch.tar.gz"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$work" -cf - "$name" |
  gzip -9n >"$tarball"
echo "build-tarball: $(tar -tzf "$tarball" | grep -v '/$' | tr '\n' ' ')" >&2
echo "$tarball"
