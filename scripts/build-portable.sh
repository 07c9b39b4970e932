#!/usr/bin/env bash
# Builds the portable provisioner: the binary for fleets that do not build it
# (Ubuntu 22.04/24.04, Debian 12, RHEL 9 family). Same sources, --config=portable
# (.bazelrc: -c opt, stripped, yaml-cpp/spdlog/fmt linked in) and libstdc++
# linked statically (BAZEL_LINKLIBS below); libgcc_s, libc, libkmod, libpci,
# libnl-3 (with libnl-genl-3), libibverbs stay dynamic. Needs glibc <= 2.34: scripts/check_portable.py.
#
# Its own output base: BAZEL_LINKLIBS is part of the auto-configured C++
# toolchain, and changing it in the default output base would re-configure
# (and rebuild) everything there.
#
# Usage: scripts/build-portable.sh [bazel build flags...]
# Prints the path of the binary on its last line (stdout).
set -euo pipefail
cd "$(dirname "$0")/.."
WS=$PWD
OUTPUT_BASE="${HOME}/.cache/bazel-provisioner-portable-$(printf %s "$WS" | md5sum | cut -c1-8)"
DISK_CACHE=${DISK_CACHE:-$WS/.cache/bazel-disk}
portable_bazel=(env "BAZEL_LINKLIBS=-l%:libstdc++.a:-lm" bazel --output_base="$OUTPUT_BASE")
flags=(--config=portable --symlink_prefix=/ --disk_cache="$DISK_CACHE")

# libgcc stays dynamic (libgcc_s.so.1, in every distribution's base system):
# Debian 12's static libgcc_eh calls _dl_find_object, GLIBC_2.35.
"${portable_bazel[@]}" build "${flags[@]}" "$@" //:provisioner >&2
bin=$("${portable_bazel[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)/engine/cli/provisioner
[[ -x $bin ]] || { echo "build-portable: $bin not built" >&2; exit 1; }
echo "$bin"
