#!/usr/bin/env python3
"""GGML block fixtures for tests/uqff: random blocks of every type the `gguf` package (pip,
ggml-org's gguf-py) dequantizes, with gguf.quants.dequantize's f32 output.

For each type T, tests/data/ggml/ holds
  T.blocks    raw little-endian ggml blocks (what UQFF's `<key>.weight` stores)
  T.f32       gguf.quants.dequantize(blocks) as little-endian f32
and MANIFEST lists type id, name, block count, elements and the gguf version.

Blocks are (a) gguf.quants.quantize of random normal data where gguf can quantize the type,
plus (b) random bytes whose scale fields are replaced by finite f16 values covering zero,
negatives, subnormals and the largest finite f16 (non-finite scales decode to NaN, whose
payload neither ggml nor gguf pins; tests/uqff checks the canonical NaN separately).
Q8_1 (gguf-py still has the old 40-byte layout; ggml/candle/mistral.rs use 36), Q8_K and Q1_0
(no dequantizer in gguf-py) are not here: tests/uqff and tests/dequant check them by their
struct definitions (and tests/data/gguf/ggml_real holds Q1_0 blocks decoded by real ggml).

Deterministic: numpy default_rng(20260806). Usage: python3 tests/oracles/gen_ggml_fixtures.py
"""
import os
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as T
from gguf import quants

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "ggml")

# (type, offsets of f16 scale fields inside the block)
TYPES = [
    (T.Q4_0, [0]), (T.Q4_1, [0, 2]), (T.Q5_0, [0]), (T.Q5_1, [0, 2]), (T.Q8_0, [0]),
    (T.Q2_K, [80, 82]), (T.Q3_K, [108]), (T.Q4_K, [0, 2]), (T.Q5_K, [0, 2]), (T.Q6_K, [208]),
    (T.F16, []), (T.BF16, []),
    # Appended later (appending keeps the rng stream, so the files above do not change).
    # MXFP4's scale is an E8M0 byte: every value is finite (large ones overflow to inf).
    (T.IQ4_NL, [0]), (T.IQ4_XS, [0]), (T.TQ1_0, [52]), (T.TQ2_0, [64]), (T.MXFP4, []),
    (T.IQ2_XXS, [0]), (T.IQ2_XS, [0]), (T.IQ2_S, [0]), (T.IQ3_XXS, [0]), (T.IQ3_S, [0]),
    (T.IQ1_S, [0]), (T.IQ1_M, []),
    # NVFP4's four scales are UE4M3 bytes: every value decodes to a finite number.
    (T.NVFP4, []),
]


def iq1_m_finite_d(rng, raw):
    """IQ1_M keeps its f16 d in the top nibbles of the four u16 at bytes 48-55: make it finite."""
    h = finite_f16(rng, raw.shape[0]).astype(np.uint32)
    for k in range(4):
        nib = (h >> (4 * k)) & 0xF
        raw[:, 49 + 2 * k] = (raw[:, 49 + 2 * k] & 0x0F) | (nib << 4).astype(np.uint8)

SPECIAL_F16 = [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00]


def finite_f16(rng, n):
    v = (rng.standard_normal(n) * 0.02).astype(np.float16).view(np.uint16)
    k = max(1, n // 8)
    idx = rng.choice(n, size=k, replace=False)
    v[idx] = rng.choice(SPECIAL_F16, size=k)
    return v


def main():
    rng = np.random.default_rng(20260806)
    os.makedirs(OUT, exist_ok=True)
    from importlib.metadata import version
    lines = [f"# gguf {version('gguf')}, numpy {np.__version__}",
             "# type_id name blocks elements"]
    for t, scale_offs in TYPES:
        bs, ts = gguf.GGML_QUANT_SIZES[t]
        parts = []
        if t in (T.F16, T.BF16):
            # every finite and non-finite bit pattern class, plus random values
            n = 4096
            if t == T.F16:
                bits = np.concatenate([np.array(SPECIAL_F16 + [0x7C00, 0xFC00], np.uint16),
                                       rng.integers(0, 0x7C00, n - 12, dtype=np.uint16) |
                                       (rng.integers(0, 2, n - 12, dtype=np.uint16) << 15)])
            else:
                bits = np.concatenate([np.array([0, 0x8000, 0x0001, 0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x3F80], np.uint16),
                                       rng.integers(0, 0x7F80, n - 8, dtype=np.uint16) |
                                       (rng.integers(0, 2, n - 8, dtype=np.uint16) << 15)])
            parts.append(bits.astype("<u2").tobytes())
        else:
            nq = 2048 if bs == 32 else 2048
            try:
                x = (rng.standard_normal(nq) * rng.choice([0.01, 1.0, 30.0])).astype(np.float32)
                x[:: 97] = 0.0
                parts.append(quants.quantize(x, t).tobytes())
            except Exception:  # gguf cannot quantize this type: random blocks only
                pass
            nb = (4096 if bs == 32 else 4096) // bs
            raw = rng.integers(0, 256, (nb, ts), dtype=np.uint8)
            for off in scale_offs:
                h = finite_f16(rng, nb)
                raw[:, off] = (h & 0xFF).astype(np.uint8)
                raw[:, off + 1] = (h >> 8).astype(np.uint8)
            if t == T.IQ1_M:
                iq1_m_finite_d(rng, raw)
            parts.append(raw.tobytes())
        blob = b"".join(parts)
        nblocks = len(blob) // ts
        assert nblocks * ts == len(blob)
        arr = np.frombuffer(blob, dtype=np.uint8).reshape(nblocks, ts)
        with np.errstate(all="ignore"):
            y = quants.dequantize(arr, t).astype(np.float32).reshape(-1)
        assert y.size == nblocks * bs
        name = t.name.lower()
        with open(os.path.join(OUT, f"{name}.blocks"), "wb") as f:
            f.write(blob)
        with open(os.path.join(OUT, f"{name}.f32"), "wb") as f:
            f.write(y.astype("<f4").tobytes())
        lines.append(f"{int(t)} {name} {nblocks} {y.size}")
        print(name, nblocks, "blocks", y.size, "values", file=sys.stderr)
    with open(os.path.join(OUT, "MANIFEST"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
