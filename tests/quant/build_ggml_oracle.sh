#!/usr/bin/env bash
# Builds (once) the GGML quantization oracle, tests/quant/ggml_quant_oracle.c linked with the
# llama-cpp-python sdist's ggml-quants.c (fetched by bench/ggml_src.sh into $TBLOB_PEER_DIR,
# default /tmp/tblob-ggml-peer, never into the checkout), and prints its path.
# Pinned to the sdist the GGUF fixtures come from (TBLOB_PEER_VERSION, default 0.3.36).
# Flags: -O3 -DNDEBUG (ggml's Release build) and -ffp-contract=off, with no -march: ggml's own
# CMake build of ggml-base on x86, which never contracts a*b+c into an FMA. A build that
# contracts (gcc -march=native or -mfma, clang's default, aarch64 gcc) gives other bytes for
# the importance-weighted types and is the wrong reference (docs/quantize.md).
# The binary is cached in the peer directory under a name keyed by the version and the hash of
# the harness and flags. Exit status non-zero (and nothing on stdout) when it cannot be built.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CC=${CC:-cc}
flags="-O3 -DNDEBUG -ffp-contract=off -std=c11"
export TBLOB_PEER_VERSION=${TBLOB_PEER_VERSION:-0.3.36}
# ggml_src.sh cds into the peer directory, fetching the sdist when it is not there yet.
. "$root/bench/ggml_src.sh" >&2
key=$( (cat "$here/ggml_quant_oracle.c"; echo "$CC $flags") | sha256sum | cut -c1-16)
out="$WORK/ggml-quant-oracle-$VER-$key"
if [ ! -x "$out" ]; then
  tmp="$out.tmp.$$"
  # shellcheck disable=SC2086
  $CC $flags -I"$G/include" -I"$G/src" "$here/ggml_quant_oracle.c" "$G/src/ggml-quants.c" -lm -o "$tmp" >&2
  mv "$tmp" "$out"
fi
echo "$out"
