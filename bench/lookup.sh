#!/usr/bin/env bash
# Lookup by name among N tensors: tblob_tensor_find (safetensors and SLM1 models),
# std::unordered_map<std::string_view, uint32_t> (bench_lookup) and the safetensors crate
# (bench/lookup_rs: SafeTensors::tensor and Metadata::info), on the same names file and
# safetensors file, the two programs alternated -p times; each prints its best round of -r
# (thread CPU time per lookup) and its median round; this script keeps the best over the passes
# and the median of the passes' medians. Each run starts from one of two cache states (-s, both
# by default): warm (the structures in the last-level cache only) and cold (from memory, after
# an eviction pass of twice the last-level cache); bench/README.md, "Lookup by name".
#   bench/lookup.sh -b BUILD [-n 100000] [-r 7] [-p 3] [-d DIR] [-s warm|cold|both]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=build n=100000 rounds=7 passes=3 dir= states=both
while getopts b:n:r:p:d:s: o; do
  case $o in
    b) build=$OPTARG ;; n) n=$OPTARG ;; r) rounds=$OPTARG ;; p) passes=$OPTARG ;; d) dir=$OPTARG ;;
    s) states=$OPTARG ;; *) exit 2 ;;
  esac
done
[[ $states == both ]] && states="warm cold"
llc=$(getconf LEVEL3_CACHE_SIZE 2>/dev/null || echo 0)
[[ $llc =~ ^[0-9]+$ && $llc -gt 0 ]] || llc=$((128 << 20))
evict_mib=$((2 * llc >> 20))
((evict_mib >= 64)) || evict_mib=64
dir=${dir:-${TMPDIR:-/tmp}/tblob_lookup_$n}
mkdir -p "$dir"
names=$dir/names.txt st=$dir/names.safetensors
[[ -s $names && -s $st ]] || python3 "$here/make_names.py" --count "$n" --names "$names" --safetensors "$st"
(cd "$here/lookup_rs" && cargo build --release --quiet)
echo "# $(date -u '+%F %H:%M') UTC, $n names, load: $(cut -d' ' -f1-3 /proc/loadavg), cold eviction: $evict_mib MiB"
for state in $states; do
out=$dir/results-$state.txt
: > "$out"
for ((p = 0; p < passes; ++p)); do
  "$build/bench/bench_lookup" "$names" "$st" "$rounds" "$state" "$evict_mib" >> "$out" 2>/dev/null
  "$here/lookup_rs/target/release/lookup_rs" "$names" "$st" "$rounds" "$state" "$evict_mib" >> "$out"
done
echo
echo "state: $state"
python3 - "$out" <<'PY'
import statistics, sys
best, meds = {}, {}
for line in open(sys.argv[1]):
    what, kind, b, m = line.split()
    best[(what, kind)] = min(float(b), best.get((what, kind), 1e30))
    meds.setdefault((what, kind), []).append(float(m))
med = {k: statistics.median(v) for k, v in meds.items()}
t = "tblob-safetensors"
fl = best[("floor-name-compare", "hit")]
print("| lookup | hit ns best / median | miss ns best / median | tblob hit speed-up best / median | tblob miss speed-up best / median | hit ns above the floor (best) |")
print("|---|---|---|---|---|---|")
for what in [t, "std-unordered_map", "rust-info", "rust-tensor", "tblob-slm1-sorted"]:
    h, m, hm, mm = best[(what, "hit")], best[(what, "miss")], med[(what, "hit")], med[(what, "miss")]
    print(f"| {what} | {h:.1f} / {hm:.1f} | {m:.1f} / {mm:.1f} | {h / best[(t, 'hit')]:.2f}x / {hm / med[(t, 'hit')]:.2f}x"
          f" | {m / best[(t, 'miss')]:.2f}x / {mm / med[(t, 'miss')]:.2f}x | {h - fl:.1f} |")
print(f"| floor: compare each hit with its name in the model, addresses known | {fl:.1f} / {med[('floor-name-compare', 'hit')]:.1f} | - | - | - | 0 |")
fv = best[("floor-fnv1a", "hit")]
print(f"| floor for SLM1: FNV-1a 64 of each name (the format's directory key) | {fv:.1f} / {med[('floor-fnv1a', 'hit')]:.1f} | - | - | - | - |")
for lines, sizes in [(2, "tblob's table and slots"), (4, "the map's buckets, nodes, nodes and names")]:
    k = (f"floor-{lines}-lines", "hit")
    if k in best:
        print(f"| memory alone: {lines} dependent line reads a query, arrays the sizes of {sizes} | {best[k]:.1f} / {med[k]:.1f} | - | - | - | - |")
PY
done
