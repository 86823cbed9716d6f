#!/usr/bin/env bash
# The whole-model benchmark (bench/README-parallel.md): tensorblob (open, list, dequantize every
# tensor on T threads and on 1, the T-thread streaming fill of the same bytes) and MLX
# (mx.load + mx.dequantize of every tensor) on the same model, alternated round by round.
#
#   bench/whole_model.sh BUILD_DIR MODEL [ROUNDS] [THREADS]
#
# MODEL: e.g. `python3 bench/make_model.py --out mixed.safetensors --tensors 1000 --bytes 2e9`.
# Each round prints both tools' lines; the load average is printed before each round.
set -uo pipefail
build=${1:?usage: whole_model.sh BUILD_DIR MODEL [ROUNDS] [THREADS]}
model=${2:?}
rounds=${3:-3}
threads=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
cat "$model" >/dev/null  # page-cached input for both
for r in $(seq 1 "$rounds"); do
  echo "== round $r; load $(cut -d' ' -f1-3 /proc/loadavg)"
  "$build/bench/bench_parallel" model "$model" --reps 1 --threads "$threads"
  python3 "$here/mlx_whole_model.py" "$model" --repeat 1
done
