#!/bin/sh
# Instructions per output element of the public dequantize call under callgrind, per case
# (bench/bench_dequant_ipe.cpp). Usage: bench/dequant_ipe.sh [builddir] [set]
set -eu
b=${1:-build}
s=${2:-avx2}
t=$(mktemp -d)
for c in affine4-g32-f16 affine4-g64-bf16 affine8-g64-bf16 nvfp4 mxfp4 mxfp8; do
  valgrind --tool=callgrind --callgrind-out-file="$t/$c.out" "$b/bench/bench_dequant_ipe" "$c" "$s" >/dev/null 2>&1
  ir=$(callgrind_annotate --inclusive=yes "$t/$c.out" | grep -m1 tblob_quant_dequantize | awk '{gsub(",", "", $1); print $1}')
  echo "$c $s $(awk -v ir="$ir" 'BEGIN { printf "%.3f", ir / (3 * 64 * 8192) }') Ir/element"
done
rm -rf "$t"
