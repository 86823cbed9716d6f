#!/usr/bin/env python3
"""MLX's side of the whole-model benchmark (bench/README-parallel.md): `mx.load` of a model
written by bench/make_model.py, then `mx.dequantize` of every quantized tensor to bf16 on the
CPU stream, each result evaluated and dropped (as a loader that copies weights out would).
Plain bf16 tensors are already what a loader wants and cost MLX nothing here (tensorblob's
side copies them, which only counts against tensorblob).

    pip install mlx mlx-cpu
    python3 bench/mlx_whole_model.py MODEL [--repeat 3] [--json FILE]

Prints the best of --repeat runs of: load (mx.load, arrays evaluated), dequantize (all
tensors) and total; with --json also writes them. Exit 77 when MLX is not installed.
"""
import argparse
import json
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    a = ap.parse_args()
    try:
        import mlx.core as mx
    except ImportError:
        print("mlx is not installed (pip install mlx mlx-cpu); skipping", file=sys.stderr)
        return 77
    mx.set_default_device(mx.cpu)
    best = {"load": float("inf"), "dequantize": float("inf"), "total": float("inf")}
    cpu = {}  # CPU seconds (every thread) of the best run of each phase: the machine is shared
    out_bytes = 0
    for _ in range(a.repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        arrays, meta = mx.load(a.model, return_metadata=True)
        mx.eval(list(arrays.values()))
        c1, t1 = time.process_time(), time.perf_counter()
        out_bytes = 0
        for name, w in arrays.items():
            qt = meta.get(name + ".quant_type")
            if qt is None:
                if not name.endswith((".scale", ".bias")):
                    out_bytes += w.size * 2
                continue
            group = int(meta[name + ".group_size"])
            mode, bits = {"int4": ("affine", 4), "int8": ("affine", 8), "mxfp4": ("mxfp4", 4),
                          "nvfp4": ("nvfp4", 4), "mxfp8": ("mxfp8", 8)}[qt]
            out = mx.dequantize(w, arrays[name + ".scale"], arrays.get(name + ".bias"), group_size=group,
                                bits=bits, mode=mode, dtype=mx.bfloat16)
            mx.eval(out)
            out_bytes += out.size * 2
            del out
        c2, t2 = time.process_time(), time.perf_counter()
        del arrays
        for k, v, c in (("load", t1 - t0, c1 - c0), ("dequantize", t2 - t1, c2 - c1), ("total", t2 - t0, c2 - c0)):
            if v < best[k]:
                best[k], cpu[k] = v, c
    print(f"mlx {mx.__version__}: load {best['load']:.3f} s (cpu {cpu['load']:.3f} s), dequantize "
          f"{best['dequantize']:.3f} s (cpu {cpu['dequantize']:.3f} s; {out_bytes / best['dequantize'] / 1e9:.2f} GB/s "
          f"of bf16), total {best['total']:.3f} s (cpu {cpu['total']:.3f} s) (best of {a.repeat})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"mlx": mx.__version__, "out_bytes": out_bytes, **best,
                       "cpu": cpu}, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
