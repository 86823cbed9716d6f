#!/usr/bin/env python3
"""GGUF fixtures for tests/gguf: small files written by the `gguf` package (pip, ggml-org's
gguf-py, the oracle), and what gguf-py's own GGUFReader and gguf.quants.dequantize report
about them.

tests/data/gguf/ holds, for each fixture F:
  F.gguf       the file (GGUFWriter; v2 and big-endian variants patched/written as noted)
  F.manifest   what GGUFReader reports: version, alignment, every key/value, every tensor
               (name, ggml type, absolute data offset, byte count, shape outermost-first)
  F.f32        gguf.quants.dequantize of every tensor it decodes, little-endian f32,
               concatenated; each manifest tensor line gives its element offset here (-1: none)
and fuzz/corpora/fuzz_gguf/seed_* are these files with fuzz_common.h's 3-byte trailer
(lim, fail, ctl) choosing the harness variant, the limits and the failing allocation.

Manifest lines (whitespace-separated; names and keys contain no whitespace):
  file VERSION ALIGNMENT TENSORS KVS
  kv KEY TYPE VALUE    TYPE is the gguf value type id; VALUE: integers in decimal, bool 0/1,
                       f32/f64 as hex bit patterns, strings as hex of their bytes ("-" if empty)
  arr KEY ELEMTYPE COUNT
  tensor NAME TYPE OFFSET BYTES RANK DIMS... DEQ

quant_types.gguf holds the IQ, TQ, MXFP4 and NVFP4 tensors.

Quantized blocks come from gguf.quants.quantize where gguf-py can quantize the type, else
random bytes whose f16 scale fields are set to finite values. Deterministic (numpy
default_rng(20261125)). Usage: python3 tests/gguf/gen_gguf_fixtures.py
"""
import os
import struct
import sys

import numpy as np

import gguf
from gguf import GGMLQuantizationType as T
from gguf import GGUFValueType as V
from gguf import quants

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "gguf")
SEEDS = os.path.join(HERE, "..", "..", "fuzz", "corpora", "fuzz_gguf")

# f16 scale fields of block types gguf-py cannot quantize (offsets inside the block)
SCALES = {T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
          T.IQ4_NL: [0], T.IQ4_XS: [0], T.TQ1_0: [52], T.TQ2_0: [64], T.IQ2_XXS: [0], T.IQ2_XS: [0],
          T.IQ2_S: [0], T.IQ3_XXS: [0], T.IQ3_S: [0], T.IQ1_S: [0]}

# What the test dequantizes and compares (the GGML kernel table's types).
DECODED = {T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.Q2_K, T.Q3_K, T.Q4_K,
           T.Q5_K, T.Q6_K, T.IQ4_NL, T.IQ4_XS, T.TQ1_0, T.TQ2_0, T.MXFP4, T.IQ2_XXS, T.IQ2_XS, T.IQ2_S,
           T.IQ3_XXS, T.IQ3_S, T.IQ1_S, T.IQ1_M, T.NVFP4}


def blocks_of(rng, t, rows, cols, raw_only=False):
    """Raw bytes [rows, cols / block * block_bytes] of ggml type t."""
    bs, ts = gguf.GGML_QUANT_SIZES[t]
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    if t in (T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.BF16, T.TQ1_0, T.TQ2_0, T.MXFP4) and not raw_only:
        q = quants.quantize(x, t)
        return q.view(np.uint8).reshape(rows, -1)
    nb = rows * cols // bs
    raw = rng.integers(0, 256, size=(nb, ts), dtype=np.uint8)
    for off in SCALES.get(t, []):  # MXFP4's E8M0 scale byte is finite whatever its value
        v = (rng.standard_normal(nb) * 0.02).astype(np.float16).view(np.uint8).reshape(nb, 2)
        raw[:, off:off + 2] = v
    if t == T.IQ1_M:  # its f16 d lives in the top nibbles of the u16 at bytes 48, 50, 52, 54
        h = (rng.standard_normal(nb) * 0.02).astype(np.float16).view(np.uint16).astype(np.uint32)
        for k in range(4):
            raw[:, 49 + 2 * k] = (raw[:, 49 + 2 * k] & 0x0F) | (((h >> (4 * k)) & 0xF) << 4).astype(np.uint8)
    return raw.reshape(rows, -1)


def write_good(path, alignment=None):
    rng = np.random.default_rng(20261125)
    w = gguf.GGUFWriter(path, "llama")
    if alignment:
        w.add_custom_alignment(alignment)
    w.add_uint8("test.u8", 200)
    w.add_int8("test.i8", -100)
    w.add_uint16("test.u16", 65000)
    w.add_int16("test.i16", -32000)
    w.add_uint32("test.u32", 4000000000)
    w.add_int32("test.i32", -2000000000)
    w.add_float32("test.f32", 0.1)
    w.add_float32("test.f32_tiny", 1e-38)
    w.add_uint64("test.u64", 18000000000000000000)
    w.add_int64("test.i64", -9000000000000000000)
    w.add_float64("test.f64", 2.0 / 3.0)
    w.add_bool("test.true", True)
    w.add_bool("test.false", False)
    w.add_string("test.string", "h\u00e9llo w\u00f6rld")
    w.add_key_value("test.empty", "", V.STRING)  # add_string skips empty strings
    w.add_array("tokenizer.ggml.tokens", ["<s>", "</s>", "a", "b", "\u00e9"])
    w.add_array("test.int_array", [1, 2, 3, 4])
    w.add_array("test.float_array", [0.5, 1.5])
    w.add_tensor("f32_2d", rng.standard_normal((3, 5)).astype(np.float32))
    w.add_tensor("f16_1d", rng.standard_normal(7).astype(np.float16))
    w.add_tensor("bf16_2d", blocks_of(rng, T.BF16, 2, 8), raw_dtype=T.BF16)
    w.add_tensor("f64_1d", rng.standard_normal(3))
    w.add_tensor("i8_1d", np.arange(-3, 3, dtype=np.int8))
    w.add_tensor("i16_1d", np.arange(-3, 2, dtype=np.int16))
    w.add_tensor("i32_2d", np.arange(6, dtype=np.int32).reshape(2, 3))
    w.add_tensor("i64_1d", np.arange(2, dtype=np.int64))
    w.add_tensor("q4_0", blocks_of(rng, T.Q4_0, 4, 64), raw_dtype=T.Q4_0)
    w.add_tensor("q4_1", blocks_of(rng, T.Q4_1, 2, 32), raw_dtype=T.Q4_1)
    w.add_tensor("q5_0", blocks_of(rng, T.Q5_0, 2, 64), raw_dtype=T.Q5_0)
    w.add_tensor("q5_1", blocks_of(rng, T.Q5_1, 3, 32), raw_dtype=T.Q5_1)
    q8 = blocks_of(rng, T.Q8_0, 6, 32).reshape(2, 3, -1)  # 3-d: [2, 3, 32]
    w.add_tensor("q8_0_3d", q8, raw_dtype=T.Q8_0)
    q8b = blocks_of(rng, T.Q8_0, 4, 64).reshape(2, 1, 2, -1)  # 4-d: [2, 1, 2, 64]
    w.add_tensor("q8_0_4d", q8b, raw_dtype=T.Q8_0)
    w.add_tensor("q2_K", blocks_of(rng, T.Q2_K, 2, 256), raw_dtype=T.Q2_K)
    w.add_tensor("q3_K", blocks_of(rng, T.Q3_K, 2, 256), raw_dtype=T.Q3_K)
    w.add_tensor("q4_K", blocks_of(rng, T.Q4_K, 3, 512), raw_dtype=T.Q4_K)
    w.add_tensor("q5_K", blocks_of(rng, T.Q5_K, 2, 256), raw_dtype=T.Q5_K)
    w.add_tensor("q6_K", blocks_of(rng, T.Q6_K, 2, 256), raw_dtype=T.Q6_K)
    w.add_tensor("iq4_nl", blocks_of(rng, T.IQ4_NL, 2, 64), raw_dtype=T.IQ4_NL)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_types(path):
    """The block types added to the GGML table after good_v3 was written: quantized by gguf
    where it can, and as random blocks (NVFP4: random bytes, its UE4M3 scales are all finite)."""
    rng = np.random.default_rng(20261126)
    w = gguf.GGUFWriter(path, "llama")
    for t, cols in ((T.IQ4_NL, 64), (T.IQ4_XS, 512), (T.TQ1_0, 256), (T.TQ2_0, 512), (T.MXFP4, 96)):
        name = t.name.lower()
        if t in (T.TQ1_0, T.TQ2_0, T.MXFP4):
            w.add_tensor(name + "_q", blocks_of(rng, t, 2, cols), raw_dtype=t)
        w.add_tensor(name, blocks_of(rng, t, 3, cols, raw_only=True), raw_dtype=t)
    for t in (T.IQ2_XXS, T.IQ2_XS, T.IQ2_S, T.IQ3_XXS, T.IQ3_S, T.IQ1_S, T.IQ1_M):
        w.add_tensor(t.name.lower(), blocks_of(rng, t, 2, 512), raw_dtype=t)
    w.add_tensor("nvfp4", blocks_of(rng, T.NVFP4, 2, 128), raw_dtype=T.NVFP4)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def scalar_text(vtype, value):
    v = np.asarray(value).reshape(-1)[0]
    if vtype == V.FLOAT32:
        return "%08x" % struct.unpack("<I", np.float32(v).tobytes())[0]
    if vtype == V.FLOAT64:
        return "%016x" % struct.unpack("<Q", np.float64(v).tobytes())[0]
    if vtype == V.BOOL:
        return "1" if bool(v) else "0"
    return str(int(v))


def manifest(path, decode=True, oracle=None):
    """What GGUFReader reports about path; writes path's .manifest and .f32. oracle: f32 values
    of tensors gguf-py cannot decode, by name (tests/gguf/gen_ggml_real_fixtures.py)."""
    r = gguf.GGUFReader(path)
    base = path[:-len(".gguf")]
    kvs = [f for f in r.fields.values() if not f.name.startswith("GGUF.")]
    version = int(r.fields["GGUF.version"].parts[-1][0])
    lines = ["# gguf %s, numpy %s: tests/gguf/%s" % (gguf_version(), np.__version__, os.path.basename(sys.argv[0])),
             "file %d %d %d %d" % (version, r.alignment, len(r.tensors), len(kvs))]
    for f in kvs:
        t0 = f.types[0]
        if t0 == V.ARRAY:
            lines.append("arr %s %d %d" % (f.name, int(f.types[1]), len(f.data)))
        elif t0 == V.STRING:
            b = bytes(f.parts[f.data[0]])
            lines.append("kv %s %d %s" % (f.name, int(t0), b.hex() if b else "-"))
        else:
            lines.append("kv %s %d %s" % (f.name, int(t0), scalar_text(t0, f.parts[f.data[0]])))
    deq = []
    at = 0
    for t in r.tensors:
        dims = [int(d) for d in reversed(list(t.shape))]  # gguf-py's shape is ne, innermost first
        off = -1
        if decode and (t.tensor_type in DECODED or t.name in (oracle or {})):
            if t.tensor_type in DECODED:
                y = quants.dequantize(np.asarray(t.data), t.tensor_type).astype(np.float32).reshape(-1)
            else:
                y = np.asarray(oracle[t.name], dtype=np.float32).reshape(-1)
            off = at
            at += y.size
            deq.append(y)
        lines.append("tensor %s %d %d %d %d %s %d" % (t.name, int(t.tensor_type), int(t.data_offset),
                                                    int(t.n_bytes), len(dims), " ".join(map(str, dims)), off))
    with open(base + ".manifest", "w") as fh:
        fh.write("\n".join(lines) + "\n")
    if deq:
        np.concatenate(deq).astype("<f4").tofile(base + ".f32")


def gguf_version():
    from importlib.metadata import version
    return version("gguf")


def main():
    os.makedirs(OUT, exist_ok=True)
    good = os.path.join(OUT, "good_v3.gguf")
    write_good(good)
    manifest(good)
    types = os.path.join(OUT, "quant_types.gguf")
    write_types(types)
    manifest(types)
    a64 = os.path.join(OUT, "align64.gguf")
    write_good(a64, alignment=64)
    manifest(a64, decode=False)
    # v2: the same layout with version 2 (v3 only added big-endian files); GGUFReader reads both.
    small = os.path.join(OUT, "small_v2.gguf")
    w = gguf.GGUFWriter(small, "llama")
    w.add_string("general.name", "small")
    w.add_tensor("w", np.arange(8, dtype=np.float32).reshape(2, 4))
    w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
    b = bytearray(open(small, "rb").read())
    b[4:8] = struct.pack("<I", 2)
    open(small, "wb").write(bytes(b))
    manifest(small)
    # Big-endian: written by gguf-py itself; the reader must refuse it with its own status.
    big = os.path.join(OUT, "big_endian.gguf")
    w = gguf.GGUFWriter(big, "llama", endianess=gguf.GGUFEndian.BIG)
    w.add_tensor("w", np.arange(4, dtype=np.float32))
    w.write_header_to_file(); w.write_kv_data_to_file(); w.write_tensors_to_file(); w.close()
    seeds()


def seeds():
    """(file, ctl, fail, lim): ctl bits 0-1 the fuzz_gguf variant, bits 2-3 the limits preset."""
    cases = [("good_v3", 0, 0, 0), ("good_v3", 1, 0, 0), ("good_v3", 2, 0, 0), ("good_v3", 3, 0, 0),
             ("good_v3", 0, 1, 0), ("good_v3", 0, 5, 0), ("good_v3", 4, 0, 0), ("good_v3", 8, 0, 0x9F),
             ("align64", 0, 0, 0), ("align64", 3, 2, 0), ("small_v2", 0, 0, 0), ("small_v2", 8, 3, 0x2A),
             ("big_endian", 0, 0, 0)]
    os.makedirs(SEEDS, exist_ok=True)
    for name, ctl, fail, lim in cases:
        body = open(os.path.join(OUT, name + ".gguf"), "rb").read()
        with open(os.path.join(SEEDS, "seed_%s_c%d_f%d_l%d" % (name, ctl, fail, lim)), "wb") as fh:
            fh.write(body + bytes([lim, fail, ctl]))


if __name__ == "__main__":
    main()
