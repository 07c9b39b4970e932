#!/usr/bin/env bash
# Builds the shipped binaries in one -c opt build (--config=portable, .bazelrc:
# optimized, stripped, yaml-cpp/spdlog/fmt linked in), compiled once and
# linked twice:
#   //engine/cli:provisioner       the portable binary, for fleets that do not
#                                  build it (Ubuntu 22.04/24.04, Debian 12, RHEL 9
#                                  family): libstdc++ linked statically
#                                  (//engine/cli:static_libstdcxx), no Prometheus
#                                  endpoint; libgcc_s, libc, libkmod, libpci,
#                                  libnl-3 (with libnl-genl-3), libibverbs, libudev,
#                                  libsystemd stay dynamic. Needs glibc <= 2.34:
#                                  scripts/check_portable.py.
#   //engine/cli:provisioner-deb   the Debian package's binary (scripts/build-deb.sh):
#                                  the same objects with the system's libstdc++ and
#                                  prometheus-cpp, so it serves /metrics.
# Only the agent's metrics (metrics.cc or metrics_off.cc) and the links differ.
#
# Its own output base: a build with another --config in the workspace's
# default output base would discard that one's analysis cache each time.
#
# Usage: scripts/build-portable.sh [bazel build flags...]
# Prints the path of the Debian binary, then, on its last line, the path of
# the portable binary (stdout).
set -euo pipefail
cd "$(dirname "$0")/.."
WS=$PWD
OUTPUT_BASE="${HOME}/.cache/bazel-provisioner-portable-$(printf %s "$WS" | md5sum | cut -c1-8)"
DISK_CACHE=${DISK_CACHE:-$WS/.cache/bazel-disk}
portable_bazel=(bazel --output_base="$OUTPUT_BASE")
flags=(--config=portable --symlink_prefix=/ --disk_cache="$DISK_CACHE")

# libgcc stays dynamic (libgcc_s.so.1, in every distribution's base system):
# Debian 12's static libgcc_eh calls _dl_find_object, GLIBC_2.35.
"${portable_bazel[@]}" build "${flags[@]}" "$@" //engine/cli:provisioner //engine/cli:provisioner-deb >&2
dir=$("${portable_bazel[@]}" info "${flags[@]}" bazel-bin 2>/dev/null)/engine/cli
for b in provisioner-deb provisioner; do
  [[ -x $dir/$b ]] || { echo "build-portable: $dir/$b not built" >&2; exit 1; }
  echo "$dir/$b"
done
