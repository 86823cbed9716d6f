#!/usr/bin/env python3
"""Independent oracle for docs/slm1.md: builds the golden SLM1 files in this folder.

Pure Python (no numpy), written from docs/slm1.md only, so it can serve as a check on the
C++ writer and reader. f32 arithmetic is emulated by rounding every double result to f32 with
struct; for one +, -, *, / of two f32 values this gives the correctly rounded f32 result.

    python3 gen_golden.py          # rewrites tiny_btok.slm, tiny_bpe1.slm
    python3 gen_golden.py --check  # verifies the committed files, changes nothing
    python3 gen_golden.py --dump   # prints the hex dumps used in docs/slm1.md
"""
import math
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
M64 = (1 << 64) - 1
FNV_BASIS = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
CHECKSUM_ROT = 27


def fnv1a64(data: bytes) -> int:
    h = FNV_BASIS
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & M64
    return h


def rotl64(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & M64


def slm1_checksum(buf: bytes) -> int:
    c = FNV_BASIS
    for i, b in enumerate(buf):
        if 100 <= i < 108:
            b = 0
        c ^= (b | (i << 8)) & M64
        c = rotl64(c, CHECKSUM_ROT)
        c = (c * FNV_PRIME) & M64
    return c


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def align64(n: int) -> int:
    return (n + 63) & ~63


def rows_cols(dims):
    cols = dims[-1]
    rows = 1
    for d in dims[:-1]:
        rows *= d
    return rows, cols


def quant_scale(amax: float, qmax: int) -> float:
    s = f32(amax / qmax)  # f32 division
    return 1.0 if s == 0.0 else s


def quant_values(xs, scale, qmax):
    out = []
    for x in xs:
        q = round(f32(x / scale))  # f32 quotient, then round half to even
        out.append(max(-qmax, min(qmax, q)))
    return out


def encode_q8_0(values, dims):
    rows, cols = rows_cols(dims)
    payload, scales = bytearray(), bytearray()
    for r in range(rows):
        row = [f32(v) for v in values[r * cols:(r + 1) * cols]]
        s = quant_scale(max(abs(v) for v in row), 127)
        payload += bytes(q & 0xFF for q in quant_values(row, s, 127))
        scales += struct.pack("<f", s)
    return bytes(payload), bytes(scales), cols


def encode_q4_0(values, dims, block):
    rows, cols = rows_cols(dims)
    assert block % 2 == 0 and cols % block == 0
    qs, scales = [], bytearray()
    for r in range(rows):
        for b0 in range(0, cols, block):
            blk = [f32(v) for v in values[r * cols + b0:r * cols + b0 + block]]
            s = quant_scale(max(abs(v) for v in blk), 7)
            qs += quant_values(blk, s, 7)
            scales += struct.pack("<f", s)
    payload = bytes((qs[k] & 0xF) | ((qs[k + 1] & 0xF) << 4) for k in range(0, len(qs), 2))
    return payload, bytes(scales), block


def btok_section() -> bytes:
    return b"BTOK" + struct.pack("<6I", 1, 260, 256, 257, 258, 259)


def bpe1_section() -> bytes:
    # The public fixture: t + h -> 260, then 260 + e -> 261. Vocabulary 262.
    tokens = [(260, b"th"), (261, b"the")]
    merges = [(ord("t"), ord("h"), 260, 0), (260, ord("e"), 261, 1)]
    out = b"BPE1" + struct.pack("<8I", 1, 262, 256, 257, 258, 259, len(tokens), len(merges))
    for tid, tb in tokens:
        out += struct.pack("<II", tid, len(tb)) + tb
    for m in merges:
        out += struct.pack("<4I", *m)
    return out


DTYPE_F32, DTYPE_Q8_0, DTYPE_Q4_0 = 1, 2, 3


def build(tokenizer: bytes, vocab: int, tensors, hparams) -> bytes:
    """tensors: list of (name, dtype, dims, values, block_size_for_q4)."""
    enc = []
    for name, dtype, dims, values, blk in tensors:
        h = fnv1a64(name.encode("utf-8"))
        if dtype == DTYPE_F32:
            payload, scales, bs = b"".join(struct.pack("<f", v) for v in values), b"", 0
        elif dtype == DTYPE_Q8_0:
            payload, scales, bs = encode_q8_0(values, dims)
        else:
            payload, scales, bs = encode_q4_0(values, dims, blk)
        enc.append((h, dtype, dims, payload, scales, bs))
    enc.sort(key=lambda e: e[0])  # the writer sorts by name_hash, ascending
    assert len({e[0] for e in enc}) == len(enc)

    header_len = 108
    tok_off = header_len
    dir_off = align64(tok_off + len(tokenizer))
    data_off = dir_off + 64 * len(enc)  # dir_off is a multiple of 64
    cursor = data_off
    body = bytearray()
    entries = bytearray()

    def place(blob):
        nonlocal cursor
        start = align64(cursor)
        body.extend(b"\0" * (start - cursor))
        body.extend(blob)
        cursor = start + len(blob)
        return start

    for h, dtype, dims, payload, scales, bs in enc:
        off = place(payload)
        soff = place(scales) if scales else 0
        d4 = list(dims) + [0] * (4 - len(dims))
        entries += struct.pack("<QII4IQQQII", h, dtype, len(dims), *d4, off, len(payload), soff, bs, 0)

    hp = hparams
    hdr = b"SLM1" + struct.pack(
        "<13I", 1, header_len, hp["model_type"], hp["flags"], vocab, 4, hp["hidden"], hp["layers"],
        hp["heads"], hp["kv_heads"], hp["head_dim"], hp["ffn"], hp["ctx"])
    hdr += struct.pack("<ff", hp["rope_theta"], hp["eps"])
    hdr += struct.pack("<QQQIQQ", tok_off, len(tokenizer), dir_off, len(enc), data_off, 0)
    assert len(hdr) == 108

    f = bytearray(hdr)
    f += tokenizer
    f += b"\0" * (dir_off - len(f))
    f += entries
    assert len(f) == data_off
    f += body
    assert len(f) == cursor
    c = slm1_checksum(bytes(f))
    assert c != 0
    f[100:108] = struct.pack("<Q", c)
    return bytes(f)


HP = dict(model_type=1, flags=0, hidden=4, layers=1, heads=2, kv_heads=2, head_dim=2, ffn=8, ctx=16,
          rope_theta=10000.0, eps=1e-5)

TINY_TENSORS = [
    ("norm.weight", DTYPE_F32, [4], [1.0, 0.5, -2.0, 0.25], 0),
    ("attn.q.weight", DTYPE_Q8_0, [2, 4], [127.0, 2.5, -3.5, -0.5,
                                            1.0, -2.0, 3.0, -4.0], 0),
    ("ffn.up.weight", DTYPE_Q4_0, [2, 8], [7.0, 3.5, -2.5, 0.5, 1.0, 2.0, 3.0, 4.0,
                                            0.0, 0.0, 0.0, 0.0, -1.0, 0.5, 0.0, 0.25], 4),
]

FILES = {
    "tiny_btok.slm": lambda: build(btok_section(), 260, TINY_TENSORS, HP),
    "tiny_bpe1.slm": lambda: build(bpe1_section(), 262, TINY_TENSORS[:1], HP),
}


def hexdump(b: bytes) -> str:
    lines = []
    for o in range(0, len(b), 16):
        chunk = b[o:o + 16]
        hx = " ".join(f"{x:02x}" for x in chunk)
        asc = "".join(chr(x) if 32 <= x < 127 else "." for x in chunk)
        lines.append(f"{o:08x}  {hx:<47}  |{asc}|")
    return "\n".join(lines)


def main():
    # FNV-1a 64 published vectors.
    assert fnv1a64(b"") == 0xCBF29CE484222325
    assert fnv1a64(b"a") == 0xAF63DC4C8601EC8C
    assert fnv1a64(b"foobar") == 0x85944171F73967E8
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    bad = 0
    for fname, make in FILES.items():
        data = make()
        path = os.path.join(HERE, fname)
        if mode == "--check":
            with open(path, "rb") as fh:
                ok = fh.read() == data
            print(f"{fname}: {'ok' if ok else 'DIFFERS'}")
            bad += not ok
        elif mode == "--dump":
            print(f"== {fname} ({len(data)} bytes, checksum {slm1_checksum(data):016x})")
            print(hexdump(data))
        else:
            with open(path, "wb") as fh:
                fh.write(data)
            print(f"wrote {fname} ({len(data)} bytes)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
