#!/usr/bin/env python3
"""Times MLX's CPU mx.dequantize on the tensors bench_dequant uses (same shapes, group sizes,
scale dtypes, output dtype f32), as the peer of bench/bench_dequant.cpp.

    pip install mlx mlx-cpu          # (Linux: the CPU backend is the mlx-cpu wheel)
    python3 bench/mlx_peer.py [--threads N] [--repeat R] [--large] [--json FILE]

Cases: cache-resident 16 x 4096 (Gelem/s, like cache/...) and, with --large, 16384 x 4096 =
64 Mi elements into a 256 MiB f32 output (GB/s, like large/...). Each timing is the best of R
runs of `mx.eval(mx.dequantize(...))` on the CPU stream after a warm-up; MLX allocates the
output each call (that is how the API works), which is part of what is measured. Threads:
MLX's CPU backend uses one thread per element-wise op unless told otherwise; --threads sets
OMP/MKL/OpenBLAS-style variables for completeness (they do not change mx.dequantize).
Prints one line per case, and a JSON list with --json.
"""
import argparse
import json
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--large", action="store_true", help="also the 256 MiB output cases")
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    try:
        import mlx.core as mx
    except ImportError:
        print("mlx is not installed (pip install mlx mlx-cpu); skipping", file=sys.stderr)
        return 77
    mx.set_default_device(mx.cpu)

    cases = [
        # name, mode, bits, group, scale dtype (affine)
        ("affine4-g64-bf16", "affine", 4, 64, mx.bfloat16),
        ("affine4-g32-f16", "affine", 4, 32, mx.float16),
        ("affine4-g64-f32", "affine", 4, 64, mx.float32),
        ("affine8-g64-bf16", "affine", 8, 64, mx.bfloat16),
        ("affine8-g32-f16", "affine", 8, 32, mx.float16),
        ("affine8-g64-f32", "affine", 8, 64, mx.float32),
        ("affine2-g64-bf16", "affine", 2, 64, mx.bfloat16),
        ("affine3-g64-bf16", "affine", 3, 64, mx.bfloat16),
        ("affine5-g64-bf16", "affine", 5, 64, mx.bfloat16),
        ("affine6-g64-bf16", "affine", 6, 64, mx.bfloat16),
        ("mxfp4", "mxfp4", 4, 32, None),
        ("mxfp8", "mxfp8", 8, 32, None),
        ("nvfp4", "nvfp4", 4, 16, None),
    ]
    shapes = [("cache", 16, 4096)]
    if args.large:
        shapes.append(("large", 16384, 4096))
    results = []
    mx.random.seed(0)
    for kind, rows, cols in shapes:
        for name, mode, bits, group, sdt in cases:
            w = mx.random.normal((rows, cols), dtype=mx.float32) * 0.02
            if sdt is not None:
                w = w.astype(sdt)
            try:
                q = mx.quantize(w, group_size=group, bits=bits, mode=mode)
            except Exception as e:  # mode not in this MLX
                print(f"{kind}/mlx/{name}: quantize failed: {e}", file=sys.stderr)
                continue
            wq, scales = q[0], q[1]
            biases = q[2] if mode == "affine" else None
            mx.eval(wq, scales, *( [biases] if biases is not None else []))

            def run():
                out = mx.dequantize(wq, scales, biases, group_size=group, bits=bits, mode=mode,
                                    dtype=mx.float32)
                mx.eval(out)
                return out

            run()
            reps = args.repeat if kind == "cache" else max(3, args.repeat // 5)
            best = float("inf")
            for _ in range(reps):
                t0 = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - t0)
            elems = rows * cols
            r = {"case": f"{kind}/mlx/{name}/f32", "seconds": best,
                 "gelem_per_s": elems / best / 1e9, "gbytes_per_s": elems * 4 / best / 1e9}
            results.append(r)
            unit = (f"{r['gelem_per_s']:.3f} Gelem/s" if kind == "cache"
                    else f"{r['gbytes_per_s']:.2f} GB/s ({r['gelem_per_s']:.3f} Gelem/s)")
            print(f"{r['case']:32s} {best * 1e6:12.1f} us  {unit}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mlx": mx.__version__, "threads": args.threads, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
