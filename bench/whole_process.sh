#!/usr/bin/env bash
# Whole-process benchmark, the way a user meets the library (bench/README.md):
#   tensorblob inspect --json FILE > /dev/null      (open, validate, print every tensor)
#   simdjson_walk FILE                               (read the header, walk it with simdjson
#                                                     on-demand, print a checksum)
#   python3 safe_open(FILE) + keys()                 (the safetensors package, whole process)
# on a 200,000-tensor checkpoint (about 23 MB of header; the data region is a sparse hole),
# both C++ programs built in the default release configuration (no -march=native; simdjson
# dispatches at run time). Prints wall and CPU (user+sys) times and the ratios, plus the
# package's in-process header rate from bench/peer_safetensors.py.
#
#   bench/whole_process.sh [-b BUILD_DIR] [-n TENSORS] [-r RUNS] [-f FILE]
#
# BUILD_DIR defaults to <repo>/build-bench (configured with plain `meson setup` if absent);
# FILE to /tmp/tblob_bench_<N>.safetensors (generated once, about 2 GB apparent size, a few MB
# on disk). Uses hyperfine when installed, else a loop over `date +%s%N`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/.." && pwd)
build=${BUILD_DIR:-$src/build-bench}
tensors=200000
runs=10
file=""
while [ $# -gt 0 ]; do
  case "$1" in
    -b) build=$2; shift 2 ;;
    -n) tensors=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    -f) file=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "whole_process.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
file=${file:-/tmp/tblob_bench_${tensors}.safetensors}

if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" "$src"
fi
ninja -C "$build" -j"${JOBS:-1}" tools/tensorblob/tensorblob bench/simdjson_walk
cli="$build/tools/tensorblob/tensorblob"
walk="$build/bench/simdjson_walk"

if [ ! -f "$file" ]; then
  echo "generating $file ($tensors tensors)"
  python3 "$here/make_header.py" --tensors "$tensors" --out "$file" --print-stats
fi
header_bytes=$(python3 -c "import struct,sys; f=open(sys.argv[1],'rb'); print(8+struct.unpack('<Q', f.read(8))[0])" "$file")
echo "file: $file, $tensors tensors, header $header_bytes bytes"

# Both must accept the file (and the CLI's default limits must let it through).
("$cli" inspect --json "$file" || true) | head -c 120 || true; echo " ..."
"$cli" inspect --json "$file" >/dev/null
"$walk" "$file" >/dev/null

py_cmd="python3 -c \"from safetensors import safe_open; f = safe_open('$file', 'np'); f.keys(); f.metadata()\""
json=$(mktemp /tmp/tblob_whole_XXXXXX.json)
trap 'rm -f "$json"' EXIT

if command -v hyperfine >/dev/null 2>&1; then
  hyperfine -N --warmup 2 --runs "$runs" --export-json "$json" \
    -n tensorblob "$cli inspect --json $file" \
    -n simdjson_walk "$walk $file" \
    -n python_safe_open "$py_cmd" >/dev/null 2>&1 || \
  hyperfine --warmup 2 --runs "$runs" --export-json "$json" \
    -n tensorblob "$cli inspect --json $file > /dev/null" \
    -n simdjson_walk "$walk $file > /dev/null" \
    -n python_safe_open "$py_cmd"
else
  # Fallback: wall time per run from date +%s%N; CPU time from bash's `times` is not
  # per-command, so only wall times are reported.
  python3 - "$json" "$runs" "$cli" "$walk" "$file" <<'EOF'
import json, subprocess, sys, time
out, runs, cli, walk, f = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
cmds = {"tensorblob": [cli, "inspect", "--json", f], "simdjson_walk": [walk, f],
        "python_safe_open": ["python3", "-c", "from safetensors import safe_open; f = safe_open(%r, 'np'); f.keys(); f.metadata()" % f]}
res = []
for name, cmd in cmds.items():
    times = []
    for i in range(runs + 2):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        if i >= 2:
            times.append(time.perf_counter() - t0)
    res.append({"command": name, "times": times, "mean": sum(times) / len(times), "min": min(times)})
json.dump({"results": res}, open(out, "w"))
EOF
fi

python3 - "$json" "$header_bytes" <<'EOF'
import json, statistics, sys
data = json.load(open(sys.argv[1]))
hb = int(sys.argv[2])
rows = {}
for r in data["results"]:
    name = r["command"]
    wall = r["times"]
    cpu = None
    if "user" in r and "system" in r and r.get("exit_codes") is not None:
        cpu = r["user"] + r["system"]  # means over the runs
    rows[name] = {"wall_min": min(wall), "wall_median": statistics.median(wall), "cpu_mean": cpu}
print()
print("%-18s %12s %12s %12s %14s" % ("program", "wall min ms", "wall med ms", "cpu mean ms", "MB/s (cpu)"))
for name, v in rows.items():
    cpu = v["cpu_mean"]
    print("%-18s %12.1f %12.1f %12s %14s" % (
        name, v["wall_min"] * 1e3, v["wall_median"] * 1e3,
        "%.1f" % (cpu * 1e3) if cpu is not None else "-",
        "%.0f" % (hb / cpu / 1e6) if cpu else "-"))
t, s = rows.get("tensorblob"), rows.get("simdjson_walk")
p = rows.get("python_safe_open")
print()
if t and s:
    print("tensorblob vs simdjson_walk: %.2fx (wall min)" % (s["wall_min"] / t["wall_min"]), end="")
    if t["cpu_mean"] and s["cpu_mean"]:
        print(", %.2fx (cpu mean)" % (s["cpu_mean"] / t["cpu_mean"]))
    else:
        print()
if t and p:
    print("tensorblob vs python safe_open (whole process, incl. interpreter start): %.1fx (wall min)"
          % (p["wall_min"] / t["wall_min"]), end="")
    if t["cpu_mean"] and p["cpu_mean"]:
        print(", %.1fx (cpu mean)" % (p["cpu_mean"] / t["cpu_mean"]))
    else:
        print()
if t and t["cpu_mean"]:
    rate = hb / t["cpu_mean"] / 1e6
    print("tensorblob whole process: %.0f MB/s of header (cpu) = %.1fx the 120 MB/s reference"
          % (rate, rate / 120))
EOF

echo
echo "python safetensors, header parse only (in process):"
python3 "$here/peer_safetensors.py" "$file" --min-seconds 5
