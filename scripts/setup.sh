#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks to build and test provisioner.
# Idempotent: does nothing when every package is already there.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap g++ git python3
  libyaml-cpp-dev libvalijson-dev nlohmann-json3-dev libcli11-dev
  libspdlog-dev libfmt-dev
  libpci-dev pci.ids pciutils
  libkmod-dev kmod
  libnl-3-dev libnl-route-3-dev libnl-genl-3-dev
  libibverbs-dev
  libudev-dev libsystemd-dev prometheus-cpp-dev
  libgtest-dev libgmock-dev
  mstflint ansible-core iproute2 util-linux
  systemd python3-yaml
  clang-14 libclang-rt-14-dev
  dpkg-dev lintian binutils man-db python3-apt
  strace
  shellcheck
)
# netplan generate checks our netplan YAML (test/integration:railnet_persist_cli_test).
# netplan.io 0.106 has no maintainer scripts; its systemd generator
# (/lib/systemd/system-generators/netplan) renders /etc/netplan/*.yaml at boot
# and daemon-reload: installed only where there is none, so that the host's
# networking stays as it is.
if ! compgen -G "/etc/netplan/*.yaml" >/dev/null; then
  PACKAGES+=(netplan.io)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
