#!/usr/bin/env python3
"""Expected dequantized values of the GGML layers of the real mistral.rs exports in
tests/data/uqff/real (written by gen_uqff_real.py), as 64-bit FNV-1a hashes of the
little-endian f32 output, into tests/data/uqff/real/expected_ggml.txt.

Oracle: gguf.quants.dequantize (pip `gguf`, ggml-org's gguf-py) for every type it decodes.
Q8_1 (gguf-py has the old 40-byte block; candle/mistral.rs write 36 bytes: d f16, s f16,
qs[32]) and Q8_K (no gguf-py dequantizer) use the struct definitions in numpy:
y = f32(d) * qs, computed in f32. Lines: `<export> <tensor> <ggml type> <elements> <fnv64>`.
"""
import json
import os
import struct

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import quants

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "uqff", "real")


def fnv1a64(b):
    h = 0xcbf29ce484222325
    for x in b:
        h ^= x
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def read_st(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    h = json.loads(b[8:8 + n])
    h.pop("__metadata__", None)
    base = 8 + n
    return {k: (v, b[base + v["data_offsets"][0]: base + v["data_offsets"][1]]) for k, v in h.items()}


def deq(tid, raw, n):
    if tid == 9:  # Q8_1, 36-byte blocks
        a = np.frombuffer(raw, np.uint8).reshape(-1, 36)
        d = a[:, 0:2].copy().view(np.float16).astype(np.float32)
        qs = a[:, 4:].copy().view(np.int8).astype(np.float32)
        return (d * qs).reshape(-1)
    if tid == 15:  # Q8_K: d f32, qs[256], bsums[16] i16
        a = np.frombuffer(raw, np.uint8).reshape(-1, 292)
        d = a[:, 0:4].copy().view(np.float32)
        qs = a[:, 4:260].copy().view(np.int8).astype(np.float32)
        return (d * qs).reshape(-1)
    if tid == 0:
        return np.frombuffer(raw, "<f4").astype(np.float32)
    t = T(tid)
    from gguf import GGML_QUANT_SIZES
    bs, ts = GGML_QUANT_SIZES[t]
    a = np.frombuffer(raw, np.uint8).reshape(-1, ts)
    with np.errstate(all="ignore"):
        return quants.dequantize(a, t).astype(np.float32).reshape(-1)


def main():
    out = []
    for model in sorted(os.listdir(ROOT)):
        mdir = os.path.join(ROOT, model)
        if not os.path.isdir(mdir):
            continue
        for typ in sorted(os.listdir(mdir)):
            edir = os.path.join(mdir, typ)
            if not os.path.isdir(edir):
                continue
            ents = {}
            for f in sorted(os.listdir(edir)):
                if f.endswith(".uqff"):
                    ents.update(read_st(os.path.join(edir, f)))
            for k in sorted(ents):
                if not k.endswith(".weight.format"):
                    continue
                key = k[: -len(".format")]
                if ents[k][1][0] != 0:
                    continue
                tid = struct.unpack("<I", ents[key + ".dtype"][1])[0]
                shape = struct.unpack(f"<{len(ents[key + '.shape'][1]) // 4}I", ents[key + ".shape"][1])
                n = int(np.prod(shape))
                y = deq(tid, ents[key][1], n)
                assert y.size == n, (key, y.size, n)
                out.append(f"{model}/{typ} {key} {tid} {n} {fnv1a64(y.astype('<f4').tobytes()):016x}")
    with open(os.path.join(ROOT, "expected_ggml.txt"), "w") as f:
        f.write("\n".join(out) + "\n")
    print(len(out), "GGML layers")


if __name__ == "__main__":
    main()
