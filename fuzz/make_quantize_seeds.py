#!/usr/bin/env python3
"""Writes the seeds of fuzz_quantize (fuzz/corpora/fuzz_quantize/, files named by content
hash): every type slot of the harness's table on F32/F16/BF16 input, with and without
importance, normal and edge-case values (header layout: fuzz_quantize.cpp)."""
import hashlib
import os
import struct

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpora", "fuzz_quantize")


def seed(type_sel, dtype, rows, cols, flags, scale, values):
    return bytes([type_sel, dtype, rows, cols & 0xFF, cols >> 8, flags, scale, 0]) + values


def main():
    rng = np.random.default_rng(7)
    os.makedirs(OUT, exist_ok=True)
    seeds = []
    for t in range(18):
        cols = 256 if t >= 6 else 64
        for dt in range(3):
            x = rng.standard_normal(2 * cols).astype(np.float32)
            raw = x.tobytes() if dt == 0 else x.astype(np.float16).tobytes() if dt == 1 else \
                (x.view(np.uint32) >> 16).astype(np.uint16).tobytes()
            seeds.append(seed(t, dt, 2, cols, 0, 128, raw))
            seeds.append(seed(t, dt, 2, cols, 2, 128, raw))
    edge = [np.zeros(64, np.float32), np.full(64, -0.0, np.float32), np.full(64, 3.0, np.float32),
            np.array([1e-40] * 64, np.float32), np.array([3e38, -1e30] * 32, np.float32),
            np.array([np.nan, 1.0] * 32, np.float32), np.array([np.inf, 1.0] * 32, np.float32)]
    for i, x in enumerate(edge):
        for t in (0, 1, 4, 5, 8):
            seeds.append(seed(t, 0, 1, 64, 4 if i >= 5 else 0, 128, x.tobytes()))
    seeds.append(seed(0, 0, 1, 33, 1, 128, b"\0" * 132))   # cols not a multiple of the block
    seeds.append(seed(4, 0, 2, 64, 8, 128, b"\1" * 512))   # src one byte short
    seeds.append(seed(4, 0, 2, 64, 16, 128, b"\1" * 512))  # dst one byte short
    seeds.append(seed(0xC1, 0, 1, 32, 0, 128, b"\1" * 128))  # raw type id 0xC1 (unknown)
    seeds.append(seed(0, 3, 1, 32, 0, 128, b"\1" * 32))    # I8 source (refused)
    seeds.append(seed(0, 0, 2, 64, 2 | 4 | 64, 128, struct.pack("<f", -1.0) * 128))  # negative weights
    for s in seeds:
        with open(os.path.join(OUT, hashlib.sha1(s).hexdigest()), "wb") as f:
            f.write(s)
    print(f"{len(seeds)} seeds in {OUT}")


if __name__ == "__main__":
    main()
