#!/usr/bin/env python3
"""Regenerates tests/data/ggml_quant: ggml's own bytes for the cases of ggml_quant_cases.py,
so builds that cannot run the oracle (arm64 under qemu, i386) check the same bytes
(test_ggml_quantize.cpp reads them).

    tests/quant/gen_ggml_quant_fixtures.py [--oracle PATH] [--types q4_0,...]

The oracle is built by build_ggml_oracle.sh (llama-cpp-python 0.3.36's ggml-quants.c, -O3
-DNDEBUG -ffp-contract=off). Writes inputs.bin (the F32 rows and the importance vectors) and
one <type>.bin per type of ggml_quant_types.GGML_QUANT_TYPES (or those named), each file
written to a temporary name and renamed.

inputs.bin: "TBQI", u32 version 1, u32 case count, u32 weight count; each case: u32 name
length, name, u64 rows, u64 cols, rows*cols f32; each weight vector: u32 name length, name,
u64 cols, cols f32. <type>.bin: "TBQE", u32 version 1, u32 ggml type, u32 record count; each
record: u32 case index, i32 weight index (-1: none), u64 byte count, the bytes. All
little-endian.
"""
import argparse
import os
import struct
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from ggml_quant_cases import cases, importance  # noqa: E402
from ggml_quant_oracle import Oracle, build_oracle  # noqa: E402
from ggml_quant_types import GGML_QUANT_TYPES  # noqa: E402

SEED = 20261128
OUT = os.path.join(HERE, "..", "data", "ggml_quant")
FIXTURE_WEIGHTS = ("w_zeros", "w_wide")  # the importance vectors the fixtures use


def write_atomic(path, data):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--oracle")
    ap.add_argument("--types")
    args = ap.parse_args()
    path = args.oracle or build_oracle()
    if not path:
        sys.exit("the ggml oracle cannot be built (see build_ggml_oracle.sh)")
    oracle = Oracle(path)
    rows_cases = cases(SEED, cols=256, rows=2, random_sets=1)
    weights = [(n, w) for n, w in importance(SEED) if n in FIXTURE_WEIGHTS]
    os.makedirs(OUT, exist_ok=True)

    blob = bytearray(b"TBQI" + struct.pack("<III", 1, len(rows_cases), len(weights)))
    for name, x in rows_cases:
        blob += struct.pack("<I", len(name)) + name.encode() + struct.pack("<QQ", *x.shape) + x.astype("<f4").tobytes()
    for name, w in weights:
        blob += struct.pack("<I", len(name)) + name.encode() + struct.pack("<Q", len(w)) + w.astype("<f4").tobytes()
    write_atomic(os.path.join(OUT, "inputs.bin"), bytes(blob))

    only = set(args.types.split(",")) if args.types else None
    for tname, tid, _, _, takes_w in GGML_QUANT_TYPES:
        if only and tname not in only:
            continue
        reqs, keys = [], []
        for ci, (_, x) in enumerate(rows_cases):
            for wi, (_, w) in [(-1, (None, None))] + (list(enumerate(weights)) if takes_w else []):
                reqs.append((tid, x, w))
                keys.append((ci, wi))
        outs = oracle.run(reqs)
        blob = bytearray(b"TBQE" + struct.pack("<III", 1, tid, len(reqs)))
        for (ci, wi), o in zip(keys, outs):
            if not o:
                sys.exit(f"the oracle does not run {tname}")
            blob += struct.pack("<IiQ", ci, wi, len(o)) + o
        write_atomic(os.path.join(OUT, tname + ".bin"), bytes(blob))
        print(f"{tname}.bin: {len(reqs)} records, {len(blob)} bytes")


if __name__ == "__main__":
    main()
