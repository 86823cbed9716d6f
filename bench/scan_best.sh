#!/usr/bin/env bash
# bench_scan with its benchmarks interleaved at random (Google Benchmark's
# --benchmark_enable_random_interleaving) over -r repetitions: best (minimum) and median CPU
# time of each, and both against simdjson on-demand's best / median of the same run. On a
# shared machine the best is the speed of the code, the median what the neighbours left.
#   bench/scan_best.sh -b BUILD [-f FILE] [-r 15] [-t 0.2]
set -euo pipefail
build=build file= reps=15 mintime=0.2
while getopts b:f:r:t: o; do
  case $o in b) build=$OPTARG ;; f) file=$OPTARG ;; r) reps=$OPTARG ;; t) mintime=$OPTARG ;; *) exit 2 ;; esac
done
file=${file:-$build/bench/st_20k.safetensors}
out=$(mktemp /tmp/tblob_scanbest_XXXXXX.json)
trap 'rm -f "$out"' EXIT
"$build/bench/bench_scan" "$file" --benchmark_min_time="$mintime" --benchmark_repetitions="$reps" \
  --benchmark_enable_random_interleaving=true --benchmark_out="$out" --benchmark_out_format=json >/dev/null 2>&1
python3 - "$out" <<'PY'
import json, statistics, sys
b = json.load(open(sys.argv[1]))
runs = {}
for r in b["benchmarks"]:
    if r.get("run_type") == "iteration":
        runs.setdefault(r["run_name"], []).append(r["cpu_time"] / 1e3)
base_best = min(runs["BM_simdjson_ondemand"])
base_med = statistics.median(runs["BM_simdjson_ondemand"])
print("load at start: %s; %d repetitions, interleaved" % (b["context"].get("load_avg"), len(runs["BM_simdjson_ondemand"])))
print("| benchmark | best CPU us | median CPU us | x simdjson (best) | x simdjson (median) |")
print("|---|---|---|---|---|")
for name in ["BM_st_scan", "BM_st_scan_nocallback", "BM_st_scan_scratch", "BM_open_memory", "BM_simdjson_ondemand"]:
    t = runs.get(name)
    if t:
        print("| %s | %.0f | %.0f | %.2f | %.2f |" % (name, min(t), statistics.median(t), base_best / min(t),
                                                 base_med / statistics.median(t)))
PY
