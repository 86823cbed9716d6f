#!/usr/bin/env python3
"""Writes the benchmark checkpoint: a safetensors file with many tensors and a sparse data region.

    make_header.py --tensors N --out FILE [--print-stats]

The header looks like a real Llama-style checkpoint's: names model.layers.L.<part>.weight
(8 tensors per layer: self_attn.{q,k,v,o}_proj, mlp.{gate,up,down}_proj, input_layernorm),
then model.embed_tokens.weight, model.norm.weight and lm_head.weight; dtypes BF16 for the
projections and F32 for the norms; 2-D shapes; data_offsets tiling the data region in header
order; and a small __metadata__. Shapes are kept small so the data region stays modest, and
the data region is written as a hole (sparse file): benchmarks read only the header.
Output is deterministic: the same N gives the same bytes.
"""
import argparse
import json
import os
import struct

# (suffix, dtype, shape) per layer; 2-D shapes, sizes in elements.
LAYER = [
    ("self_attn.q_proj.weight", "BF16", (64, 64)),
    ("self_attn.k_proj.weight", "BF16", (16, 64)),
    ("self_attn.v_proj.weight", "BF16", (16, 64)),
    ("self_attn.o_proj.weight", "BF16", (64, 64)),
    ("mlp.gate_proj.weight", "BF16", (172, 64)),
    ("mlp.up_proj.weight", "BF16", (172, 64)),
    ("mlp.down_proj.weight", "BF16", (64, 172)),
    ("input_layernorm.weight", "F32", (1, 64)),
]
TAIL = [
    ("model.embed_tokens.weight", "BF16", (320, 64)),
    ("model.norm.weight", "F32", (1, 64)),
    ("lm_head.weight", "BF16", (320, 64)),
]
BYTES = {"BF16": 2, "F32": 4}


def entries(n):
    out = []
    layer = 0
    while len(out) < n - len(TAIL):
        for suffix, dt, shape in LAYER:
            if len(out) >= n - len(TAIL):
                break
            out.append(("model.layers.%d.%s" % (layer, suffix), dt, shape))
        layer += 1
    out.extend(TAIL[: max(0, n - len(out))])
    return out


def build(n):
    parts = ['"__metadata__":{"format":"pt","generator":"tensorblob bench/make_header.py"}']
    off = 0
    for name, dt, shape in entries(n):
        size = shape[0] * shape[1] * BYTES[dt]
        parts.append('"%s":{"dtype":"%s","shape":[%d,%d],"data_offsets":[%d,%d]}'
                     % (name, dt, shape[0], shape[1], off, off + size))
        off += size
    header = ("{" + ",".join(parts) + "}").encode()
    header += b" " * (-len(header) % 8)  # align the data region to 8, as writers do
    return header, off


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tensors", type=int, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--print-stats", action="store_true")
    args = ap.parse_args()
    header, data = build(args.tensors)
    tmp = args.out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(header)))
        f.write(header)
        f.truncate(8 + len(header) + data)  # the data region is a hole
    os.replace(tmp, args.out)
    if args.print_stats:
        print(json.dumps({"tensors": args.tensors, "header_bytes": len(header), "data_bytes": data,
                          "file_bytes": 8 + len(header) + data}))


if __name__ == "__main__":
    main()
