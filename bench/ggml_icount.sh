#!/usr/bin/env bash
# Dynamic instruction counts per decoded value of the GGML kernels (scalar and NEON sets) under
# qemu-aarch64: a proxy that needs no arm64 machine. No timing: qemu's speed says nothing about
# a core's.
#
#   bench/ggml_icount.sh [BUILD_DIR] [TYPE...]    # default build-aarch64, every block type
#
# BUILD_DIR is an arm64 cross build (scripts/cross-test.sh). bench/ggml_icount.cpp is linked
# statically against its libtensorblob.a and NEON static libraries, then run under
# `qemu-aarch64 -singlestep -d exec,nochain` (one log line per executed instruction) with one
# and with two kernel calls on the same blocks; the difference divided by the values decoded
# is the count per value. Blocks are random with finite scales (the SIMD fast path).
# Prints "type scalar N neon N" lines (instructions per value).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$(cd "${1:-$src/build-aarch64}" && pwd)
shift || true
types=("$@")
((${#types[@]})) || types=(q4_0 q4_1 q5_0 q5_1 q8_0 q8_1 q2_K q3_K q4_K q5_K q6_K q8_K iq4_nl iq4_xs
  tq2_0 mxfp4 tq1_0 iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq1_s iq1_m)
exe=$build/ggml_icount
libs=("$build/libtensorblob.a")
for a in "$build/lib/dequant/libtblob_dequant_neon.a" "$build/lib/dequant/ggml/libtblob_ggml_neon.a"; do
  [ -f "$a" ] && libs+=("$a")
done
aarch64-linux-gnu-g++ -O2 -std=c++17 -static -I"$src/lib" -I"$src/include" -I"$build/include" -I"$build/lib" \
  "$src/bench/ggml_icount.cpp" -Wl,--start-group "${libs[@]}" -Wl,--end-group -lpthread -o "$exe"
count() { # type set nblocks calls
  qemu-aarch64 -cpu cortex-a53 -singlestep -d exec,nochain -D /dev/stdout "$exe" "$@" | grep -c '^Trace'
}
for t in "${types[@]}"; do
  line=$t
  for set in scalar neon; do
    # 8 blocks of 256 values or 64 of 32: 2048 values either way
    case $t in q4_0|q4_1|q5_0|q5_1|q8_0|q8_1|iq4_nl|mxfp4) nb=64 ;; *) nb=8 ;; esac
    one=$(count "$t" "$set" $nb 1)
    two=$(count "$t" "$set" $nb 2)
    line+=" $set $(awk -v d=$((two - one)) 'BEGIN { printf "%.2f", d / 2048 }')"
  done
  echo "$line"
done
