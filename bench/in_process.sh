#!/usr/bin/env bash
# In-process header benchmark with its ratios in one table (bench/README.md):
# bench_scan (tblob_st_scan, with scratch, tblob_model_open_memory, simdjson on-demand) with
# repetitions, then the Python safetensors package's safe_open on the same file.
#
#   bench/in_process.sh [-b BUILD_DIR] [-f FILE] [-r REPETITIONS]
#
# FILE defaults to the 20,000-tensor checkpoint the build generates
# (<BUILD_DIR>/bench/st_20k.safetensors). Times are CPU times (see bench_scan.cpp); the
# ratios use the medians over the repetitions.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$src/build-bench}
file=""
reps=5
while [ $# -gt 0 ]; do
  case "$1" in
    -b) build=$2; shift 2 ;;
    -f) file=$2; shift 2 ;;
    -r) reps=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "in_process.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$src"
fi
ninja -C "$build" -j"${JOBS:-1}" bench/bench_scan bench/st_20k.safetensors
file=${file:-$build/bench/st_20k.safetensors}

out=$(mktemp /tmp/tblob_inproc_XXXXXX.json)
py=$(mktemp /tmp/tblob_peer_XXXXXX.json)
trap 'rm -f "$out" "$py"' EXIT
"$build/bench/bench_scan" "$file" --benchmark_min_time=1 --benchmark_repetitions="$reps" \
  --benchmark_report_aggregates_only=true --benchmark_out="$out" --benchmark_out_format=json \
  >/dev/null
python3 "$here/peer_safetensors.py" "$file" --min-seconds 5 --json >"$py"

python3 - "$out" "$py" <<'EOF'
import json, sys
b = json.load(open(sys.argv[1]))
p = json.load(open(sys.argv[2]))
ctx = b["context"]
med = {r["run_name"]: r for r in b["benchmarks"] if r.get("aggregate_name") == "median"}
base = med["BM_simdjson_ondemand"]["cpu_time"]
py_mbps = p["cpu_median_MBps"]
print("file %s: %s tensors, %s header bytes; simdjson %s; %s CPUs, load at start %s"
      % (ctx["file"], ctx["tensors"], ctx["header_bytes"], ctx["simdjson_implementation"],
         ctx["num_cpus"], ctx.get("load_avg")))
print("%-24s %10s %10s %11s %12s %12s %12s" % ("benchmark (median)", "cpu us", "MB/s", "ns/tensor",
                                              "x simdjson", "x python", "x 120 MB/s"))
for name in ["BM_st_scan", "BM_st_scan_nocallback", "BM_st_scan_scratch", "BM_open_memory",
             "BM_simdjson_ondemand"]:
    r = med.get(name)
    if not r:
        continue
    mbps = r["bytes_per_second"] / 1e6
    print("%-24s %10.0f %10.0f %11.1f %12.2f %12.1f %12.1f" % (
        name, r["cpu_time"] / 1e3, mbps, r["ns_per_tensor"], base / r["cpu_time"],
        mbps / py_mbps, mbps / 120))
print("%-24s %10.0f %10.0f %11.1f %12.2f %12.1f %12.1f" % (
    "python safe_open", p["cpu_median_us"], py_mbps,
    p["cpu_median_us"] * 1e3 / int(ctx["tensors"]), base / 1e3 / p["cpu_median_us"], 1.0, py_mbps / 120))
print("(x simdjson from the medians of this run; the x_simdjson counters in bench_scan's own")
print(" output compare each benchmark with a simdjson run right after it)")
EOF
