#!/usr/bin/env bash
# Installs everything the build, the tests and the oracles need on a fresh Debian 12
# machine. Idempotent: skips what is already there.
set -euo pipefail

APT_PACKAGES=(meson ninja-build pkg-config jq libsimdjson-dev libxxhash-dev libssl-dev
  libgtest-dev libbenchmark-dev clang libclang-rt-14-dev llvm tmux cmake)
PIP_PACKAGES=(numpy safetensors ml_dtypes)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
if ! "$PY" -c 'import numpy, safetensors, ml_dtypes' 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check "${PIP_PACKAGES[@]}"
fi
# Optional oracles: a failure to install them only skips the tests that need them.
for extra in ${TBLOB_OPTIONAL_PIP:-}; do
  "$PY" -m pip install -q --disable-pip-version-check "$extra" || echo "note: optional $extra not installed"
done
