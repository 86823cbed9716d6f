#!/usr/bin/env bash
# `tensorblob export` of a quantized model to bf16 against `cp` of a file the size of the
# output to the same file system, interleaved in the same run (bench/README-parallel.md).
#
#   bench/export_vs_cp.sh TENSORBLOB SRC WORKDIR [ROUNDS]
#
# SRC is what export takes (e.g. a directory written with bench/make_model.py --mix int4).
# The source is read once first (page-cached input, as the issue asks), then one export makes
# the reference output, whose largest shard is concatenated with the others into WORKDIR/cp.src
# (a file of exactly the output's size, page-cached too). Each round then times, in order:
#   export       tensorblob export SRC WORKDIR/out   (ends with fsync of every shard)
#   cp           cp WORKDIR/cp.src WORKDIR/cp.dst      (returns with the data still dirty)
#   cp+sync      cp ...; sync --data WORKDIR/cp.dst    (durable, like export)
# with `sync` and removal of the outputs between runs (untimed), and prints each best wall
# time with user/sys CPU, and the ratios. KEEP_CP_SRC=1 keeps WORKDIR/cp.src for another run. Needs GNU time (/usr/bin/time) and coreutils >= 8.24.
set -euo pipefail
tb=${1:?usage: export_vs_cp.sh TENSORBLOB SRC WORKDIR [ROUNDS]}
src=${2:?}
work=${3:?}
rounds=${4:-3}
mkdir -p "$work"
rm -rf "$work/ref" "$work/out" "$work"/out.tmp-* "$work/cp.dst"
if [ -d "$src" ]; then cat "$src"/* >/dev/null; else cat "$src" >/dev/null; fi
if [ ! -f "$work/cp.src" ]; then  # kept between runs with KEEP_CP_SRC=1
  "$tb" export "$src" "$work/ref" >/dev/null
  cat "$work"/ref/*.safetensors >"$work/cp.src"
  rm -rf "$work/ref"
fi
out_bytes=$(stat -c %s "$work/cp.src")
sync
cat "$work/cp.src" >/dev/null
if [ -d "$src" ]; then cat "$src"/* >/dev/null; else cat "$src" >/dev/null; fi

best() {  # name wall user sys: keeps the run with the smallest wall time
  local n=$1 w=$2 u=$3 s=$4
  local cur=${best_wall[$n]:-}
  if [ -z "$cur" ] || awk -v a="$w" -v b="$cur" 'BEGIN{exit !(a < b)}'; then
    best_wall[$n]=$w; best_user[$n]=$u; best_sys[$n]=$s
  fi
}
declare -A best_wall best_user best_sys
timed() {  # name command...
  local n=$1; shift
  local t
  /usr/bin/time -o "$work/time.txt" -f "%e %U %S" "$@" >/dev/null 2>&1 || { echo "$n failed" >&2; exit 1; }
  t=$(tail -1 "$work/time.txt")
  echo "round $r: $n $t (wall user sys)"
  best "$n" $t
}
for r in $(seq 1 "$rounds"); do
  timed export "$tb" export "$src" "$work/out"
  rm -rf "$work/out"; sync
  timed cp cp "$work/cp.src" "$work/cp.dst"
  rm -f "$work/cp.dst"; sync
  timed cp+sync sh -c "cp '$work/cp.src' '$work/cp.dst' && sync --data '$work/cp.dst'"
  rm -f "$work/cp.dst"; sync
done
[ "${KEEP_CP_SRC:-0}" = 1 ] || rm -f "$work/cp.src"
echo "output $out_bytes bytes on $(df --output=fstype "$work" | tail -1); best of $rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for n in export cp cp+sync; do
  printf '%-8s %8.2f s  (user %6.2f s, sys %6.2f s)  %.2f GB/s\n' "$n" "${best_wall[$n]}" "${best_user[$n]}" \
    "${best_sys[$n]}" "$(awk -v b="$out_bytes" -v t="${best_wall[$n]}" 'BEGIN{print b/t/1e9}')"
done
awk -v e="${best_wall[export]}" -v c="${best_wall[cp]}" -v s="${best_wall[cp+sync]}" \
  'BEGIN{printf "export / cp %.2f, export / (cp+sync) %.2f\n", e/c, e/s}'
