#!/usr/bin/env python3
"""Writes a synthetic quantized model for the whole-model and export benchmarks
(bench/README-parallel.md): one safetensors file in the Ollama combined layout (`N` U32 codes,
`N.scale` [+ `N.bias`], per-tensor `N.quant_type` / `N.group_size` in `__metadata__`), which
tensorblob resolves as quantized and MLX reads with `mx.load(..., return_metadata=True)`.

    python3 bench/make_model.py --out model.safetensors [--tensors 1000] [--bytes 2e9]
                                [--mix mixed|int4] [--seed 0]

--mix mixed: 40% affine int4 g64, 15% affine int8 g64 (bf16 scales and biases), 15% mxfp4,
10% nvfp4, 10% mxfp8, 10% plain bf16; --mix int4: every tensor affine int4 g64 (a typical
mlx-community 4-bit model). Rows are 2048, 4096 or 8192 values long; row counts are chosen so
the file is about --bytes. Codes are random; scales are finite (E8M0 exponents near 1, E4M3
values away from the NaN codes, bf16 scales 2^-9..2^-6), so every tensor decodes to finite
numbers. Written tensor by tensor, so memory stays at one tensor.
"""
import argparse
import json
import struct

import numpy as np

SCHEMES = {
    # name: (quant_type, bits, group, scale kind)
    "int4": ("int4", 4, 64, "bf16"),
    "int8": ("int8", 8, 64, "bf16"),
    "mxfp4": ("mxfp4", 4, 32, "e8m0"),
    "nvfp4": ("nvfp4", 4, 16, "e4m3"),
    "mxfp8": ("mxfp8", 8, 32, "e8m0"),
    "bf16": (None, 16, 0, None),
}
MIXED = ["int4"] * 8 + ["int8"] * 3 + ["mxfp4"] * 3 + ["nvfp4"] * 2 + ["mxfp8"] * 2 + ["bf16"] * 2


def row_bytes(scheme, cols):
    _, bits, group, kind = SCHEMES[scheme]
    b = cols * bits // 8
    if kind == "bf16":
        b += 2 * 2 * (cols // group)
    elif kind:
        b += cols // group
    return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tensors", type=int, default=1000)
    ap.add_argument("--bytes", type=float, default=2e9)
    ap.add_argument("--mix", choices=["mixed", "int4"], default="mixed")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    per = a.bytes / a.tensors
    plan = []  # (name, scheme, rows, cols)
    for i in range(a.tensors):
        scheme = MIXED[i % len(MIXED)] if a.mix == "mixed" else "int4"
        cols = (2048, 4096, 8192)[i % 3]
        rows = max(8, int(round(per / row_bytes(scheme, cols) / 8)) * 8)
        plan.append((f"layers.{i // 10}.t{i % 10}.weight", scheme, rows, cols))

    header, meta, off = {}, {}, 0

    def add(name, dtype, shape, nbytes):
        nonlocal off
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + nbytes]}
        off += nbytes

    for name, scheme, rows, cols in plan:
        qt, bits, group, kind = SCHEMES[scheme]
        if qt is None:
            add(name, "BF16", [rows, cols], rows * cols * 2)
            continue
        add(name, "U32", [rows, cols * bits // 32], rows * cols * bits // 8)
        if kind == "bf16":
            add(name + ".scale", "BF16", [rows, cols // group], rows * (cols // group) * 2)
            add(name + ".bias", "BF16", [rows, cols // group], rows * (cols // group) * 2)
        else:
            add(name + ".scale", "U8", [rows, cols // group], rows * (cols // group))
        meta[name + ".quant_type"] = qt
        meta[name + ".group_size"] = str(group)
    header = {"__metadata__": meta, **header}
    hj = json.dumps(header, separators=(",", ":")).encode()
    hj += b" " * (-len(hj) % 8)

    def bf16(x):
        return (np.asarray(x, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16)

    with open(a.out, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for name, scheme, rows, cols in plan:
            qt, bits, group, kind = SCHEMES[scheme]
            if qt is None:
                f.write(bf16(rng.standard_normal(rows * cols, dtype=np.float32) * 0.02).tobytes())
                continue
            f.write(rng.integers(0, 2**32, size=rows * cols * bits // 32, dtype=np.uint32).tobytes())
            n = rows * (cols // group)
            if kind == "bf16":
                f.write(bf16(np.exp2(rng.uniform(-9, -6, n)).astype(np.float32)).tobytes())
                f.write(bf16(-np.exp2(rng.uniform(-6, -3, n)).astype(np.float32)).tobytes())
            elif kind == "e8m0":
                f.write(rng.integers(120, 131, size=n, dtype=np.uint8).tobytes())
            else:  # e4m3: exponents 6..9, any mantissa: 2^-1 .. 2^2.9, never 0x7F
                f.write(rng.integers(0x30, 0x50, size=n, dtype=np.uint8).tobytes())
    print(f"{a.out}: {len(plan)} tensors ({a.mix}), {8 + len(hj) + off} bytes")


if __name__ == "__main__":
    main()
