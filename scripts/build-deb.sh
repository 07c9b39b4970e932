#!/usr/bin/env bash
# Builds dist/out/provisioner_<version>_<arch>.deb with dpkg-deb (no debhelper):
#   /usr/bin/provisioner                         //engine/cli:provisioner-deb, linked with the
#                                                portable binary in one build (scripts/build-portable.sh):
#                                                the system's libstdc++ and prometheus-cpp, so the
#                                                agent serves /metrics (the portable binary cannot)
#   /lib/systemd/system/provisioner-apply.service   dist/systemd, not enabled (no maintainer
#                                                scripts): systemctl enable --now provisioner-apply
#   /lib/systemd/system/provisioner-agent.service   the node agent, not enabled either
#                                                (libsystemd0, libudev1, libprometheus-cpp-pull1.0 in
#                                                Depends, by dpkg-shlibdeps)
#   /usr/share/provisioner/host.schema.json      for editors (yaml-language-server)
#   /usr/share/doc/provisioner/                  README, examples, copyright (DEP-5), changelog
#   /usr/share/man/man1/provisioner.1.gz         scripts/gen_manpage.py, from the binary's --help
#   /usr/share/bash-completion/completions/provisioner   dist/bash-completion
#   /usr/share/lintian/overrides/provisioner     dist/debian/lintian-overrides
# The version is the top-level VERSION file; the binary's --version and
# dist/debian/changelog must say the same. Depends comes from dpkg-shlibdeps.
#
# Usage: scripts/build-deb.sh [--binary PATH] [bazel build flags...]
#   --binary: package this binary instead of building it (one with the
#             Prometheus endpoint: //engine/cli:provisioner-deb, or a build from source).
#   DEB_OUT_DIR: where the .deb goes (default dist/out).
# Prints the path of the .deb on its last line (stdout).
set -euo pipefail
cd "$(dirname "$0")/.."
WS=$PWD

bin=""
if [[ ${1-} == --binary ]]; then
  bin=$(realpath "$2")
  shift 2
fi
# build-portable.sh prints the Debian binary, then the portable one.
[[ -n $bin ]] || bin=$(scripts/build-portable.sh "$@" | tail -2 | head -1)

die() { echo "build-deb: $*" >&2; exit 1; }
# The package's agent serves /metrics (provisioner-agent.service, docs/agent.md):
# not the portable binary, which has no prometheus-cpp.
[[ $(readelf -d "$bin") == *"Shared library: [libprometheus-cpp-pull"* ]] ||
  die "$bin does not link prometheus-cpp (the portable binary?), so its agent would have no" \
    "/metrics: package //engine/cli:provisioner-deb"
version=$(tr -d ' \n' <VERSION)
[[ $("$bin" --version) == "provisioner $version ("* ]] ||
  die "$bin --version says '$("$bin" --version)', VERSION says $version"
changelog_version=$(dpkg-parsechangelog -l dist/debian/changelog -S Version)
[[ $changelog_version == "$version" ]] ||
  die "dist/debian/changelog is at $changelog_version, VERSION at $version: add an entry"
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
doc=$root/usr/share/doc/provisioner
install -D -m 0755 "$bin" "$root/usr/bin/provisioner"
# As dh_strip does: the portable build has no symbol table already (-s); the
# compiler's .comment section goes too (lintian: binary-has-unneeded-section).
objcopy --remove-section=.comment "$root/usr/bin/provisioner"
install -D -m 0644 dist/systemd/provisioner-apply.service "$root/lib/systemd/system/provisioner-apply.service"
install -D -m 0644 dist/systemd/provisioner-agent.service "$root/lib/systemd/system/provisioner-agent.service"
install -D -m 0644 schemas/host.schema.json "$root/usr/share/provisioner/host.schema.json"
install -D -m 0644 -t "$doc/examples" examples/*.yaml
# The bundled host trees, read as they are: provisioner discover --root /usr/share/provisioner/hosts/cx5-roce.ttar
install -D -m 0644 -t "$root/usr/share/provisioner/hosts" examples/hosts/*.ttar
install -D -m 0644 dist/debian/copyright "$doc/copyright"
install -D -m 0644 README.md "$doc/README.md"
gzip -9n "$doc/README.md"
install -D -m 0644 dist/debian/changelog "$doc/changelog"
gzip -9n "$doc/changelog"  # a native package: changelog.gz, not changelog.Debian.gz
install -D -m 0644 dist/bash-completion/provisioner "$root/usr/share/bash-completion/completions/provisioner"
install -D -m 0644 dist/debian/lintian-overrides "$root/usr/share/lintian/overrides/provisioner"
mkdir -p "$root/usr/share/man/man1"
python3 scripts/gen_manpage.py "$root/usr/bin/provisioner" "$root/usr/share/man/man1/provisioner.1.gz" \
  --file "/etc/provisioner/host.yaml=The desired state; provisioner-apply.service applies it at boot (it does nothing while the file is absent)." \
  --file "/lib/systemd/system/provisioner-apply.service=The boot unit, installed but not enabled." \
  --file "/lib/systemd/system/provisioner-agent.service=The node agent (provisioner agent, Type=notify with a watchdog), installed but not enabled." \
  --file "/usr/share/provisioner/host.schema.json=JSON schema of host.yaml, for editors." \
  --file "/usr/share/doc/provisioner/examples/=Example host.yaml files." \
  --file "/usr/share/provisioner/hosts/=Captured host trees (ttar archives) to try the commands on: --root /usr/share/provisioner/hosts/cx5-roce.ttar (read-only; not for apply)."

# Control file: dpkg-shlibdeps computes Depends from the binary's NEEDED
# libraries, dpkg-gencontrol fills in the rest (version from the changelog,
# architecture, Installed-Size). Both want a debian/ directory: a stub in $work.
mkdir -p "$work/debian" "$root/DEBIAN"
cp dist/debian/control dist/debian/changelog "$work/debian/"
(
  cd "$work"
  dpkg-shlibdeps -Tdebian/substvars root/usr/bin/provisioner
  dpkg-gencontrol -pprovisioner -Proot -Tdebian/substvars -fdebian/files
)
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
  xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums"
# Everything owned by root, whoever builds; mtimes from the changelog's date.
epoch=$(dpkg-parsechangelog -l dist/debian/changelog -S Timestamp)
find "$root" -exec touch -h -d "@$epoch" {} +
out_dir=${DEB_OUT_DIR:-$WS/dist/out}
mkdir -p "$out_dir"
deb="$(realpath "$out_dir")/provisioner_${version}_${arch}.deb"
# DEB_COMPRESSION: xz (the default, what is shipped); the Ansible role's test
# packages the 144 MB sanitized binary and asks for none (xz took most of
# its time: ~40 s of CPU on an idle 2-core VM, past its timeout under load).
SOURCE_DATE_EPOCH=$epoch dpkg-deb --root-owner-group -Z"${DEB_COMPRESSION:-xz}" --build "$root" "$deb" >&2
echo "build-deb: $(dpkg-deb -f "$deb" Package Version Architecture Depends | tr '\n' ' ')" >&2
echo "$deb"
