#!/usr/bin/env python3
"""Typed-metadata fixtures for tests/gguf/test_gguf_typed.cpp, written and read back by the
`gguf` Python package (gguf-py, the oracle).

  tests/data/gguf/arrays.gguf    key/values of every value type, arrays of every element
                                 type (strings with empty and multi-byte entries; gguf-py
                                 refuses to write an empty array)
  tests/data/gguf/arrays.typed   what GGUFReader reports about every key/value of it
  tests/data/gguf/tokens150k.typed
                                 a 150,000-token vocabulary (tokens, scores, token types) that
                                 is not committed: its bytes are a function of the index (see
                                 token()), the test writes the same file and checks its SHA-256
                                 against the one recorded here, then the sampled elements.

.typed lines (whitespace-separated; keys have no whitespace):
  file SHA256 BYTES KVS
  kv KEY TYPE VALUE          as gen_gguf_fixtures.py: integers decimal, bool 0/1, floats as
                             hex bit patterns, strings as hex ("-" if empty)
  arr KEY ELEMTYPE COUNT     then, for every element (arrays.typed) or a sample (tokens150k):
  el INDEX VALUE             VALUE as above
Usage: python3 tests/gguf/gen_typed_metadata.py [SCRATCH_DIR]
"""
import hashlib
import os
import struct
import sys

import numpy as np

import gguf
from gguf import GGUFValueType as V

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "data", "gguf")
N_TOKENS = 150000


def token(i):
    """The big vocabulary's token i (test_gguf_typed.cpp's token_of() is the same function)."""
    if i % 1000 == 999:
        return ""
    if i % 3 == 0:
        return "\u2581w%d" % i
    if i % 3 == 1:
        return "t%d" % i
    return "<0x%02X>" % (i % 256)


def text(vtype, v):
    if vtype == V.FLOAT32:
        return "%08x" % struct.unpack("<I", np.float32(v).tobytes())[0]
    if vtype == V.FLOAT64:
        return "%016x" % struct.unpack("<Q", np.float64(v).tobytes())[0]
    if vtype == V.BOOL:
        return "1" if bool(v) else "0"
    if vtype == V.STRING:
        b = bytes(v)
        return b.hex() if b else "-"
    return str(int(v))


def write_arrays(path):
    w = gguf.GGUFWriter(path, "llama")
    w.add_string("general.name", "typed")
    w.add_uint8("s.u8", 255)
    w.add_int8("s.i8", -128)
    w.add_uint16("s.u16", 65535)
    w.add_int16("s.i16", -32768)
    w.add_uint32("s.u32", 4294967295)
    w.add_int32("s.i32", -2147483648)
    w.add_float32("s.f32", -1.5e-3)
    w.add_bool("s.bool", True)
    w.add_uint64("s.u64", 18446744073709551615)
    w.add_int64("s.i64", -9223372036854775808)
    w.add_float64("s.f64", 1.0 / 3.0)
    w.add_string("s.string", "\u00e9t\u00e9 \u2581")
    arrays = [
        ("a.u8", V.UINT8, [0, 1, 254, 255]),
        ("a.i8", V.INT8, [-128, -1, 0, 127]),
        ("a.u16", V.UINT16, [0, 65535, 258]),
        ("a.i16", V.INT16, [-32768, 32767, -2]),
        ("a.u32", V.UINT32, [4294967295, 0, 16909060]),
        ("a.i32", V.INT32, [-2147483648, 2147483647, -3]),
        ("a.f32", V.FLOAT32, [0.1, -2.5, 1e-38, 3.4e38]),
        ("a.bool", V.BOOL, [True, False, True]),
        ("a.u64", V.UINT64, [18446744073709551615, 1, 72623859790382856]),
        ("a.i64", V.INT64, [-9223372036854775808, 9223372036854775807, -4]),
        ("a.f64", V.FLOAT64, [1.0 / 3.0, -0.0, 1e300]),
        ("a.string", V.STRING, ["<s>", "", "\u00e9", "\u2581hello", "a b"]),
    ]
    for key, sub, vals in arrays:
        w.add_key_value(key, vals, V.ARRAY, sub_type=sub)
    w.add_tensor("w", np.arange(8, dtype=np.float32).reshape(2, 4))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_tokens(path):
    w = gguf.GGUFWriter(path, "llama")
    w.add_string("tokenizer.ggml.model", "gpt2")
    w.add_key_value("tokenizer.ggml.tokens", [token(i) for i in range(N_TOKENS)], V.ARRAY, sub_type=V.STRING)
    w.add_key_value("tokenizer.ggml.scores", [-0.25 * i for i in range(N_TOKENS)], V.ARRAY, sub_type=V.FLOAT32)
    w.add_key_value("tokenizer.ggml.token_type", [i % 6 for i in range(N_TOKENS)], V.ARRAY, sub_type=V.INT32)
    w.add_uint32("tokenizer.ggml.bos_token_id", 1)
    w.add_tensor("w", np.arange(4, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def element_text(f, etype, j):
    part = f.parts[f.data[j]]
    if etype == V.STRING:
        return text(V.STRING, part)
    return text(etype, np.asarray(part).reshape(-1)[0])


def describe(path, out, sample=None):
    r = gguf.GGUFReader(path)
    body = open(path, "rb").read()
    kvs = [f for f in r.fields.values() if not f.name.startswith("GGUF.")]
    lines = ["# gguf %s, numpy %s: tests/gguf/gen_typed_metadata.py" % (gguf_version(), np.__version__),
             "file %s %d %d" % (hashlib.sha256(body).hexdigest(), len(body), len(kvs))]
    for f in kvs:
        t0 = f.types[0]
        if t0 != V.ARRAY:
            lines.append("kv %s %d %s" % (f.name, int(t0), element_text(f, t0, 0)))
            continue
        et = f.types[1] if len(f.types) > 1 else V.UINT8
        lines.append("arr %s %d %d" % (f.name, int(et), len(f.data)))
        idx = range(len(f.data)) if sample is None else sample(len(f.data))
        for j in idx:
            lines.append("el %d %s" % (j, element_text(f, et, j)))
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def gguf_version():
    from importlib.metadata import version
    return version("gguf")


def sample(n):
    rng = np.random.default_rng(20261125)
    picks = {0, 1, 2, 998, 999, 1000, n // 2, n - 2, n - 1}
    picks.update(int(x) for x in rng.integers(0, n, size=200))
    return sorted(picks)


def main():
    scratch = sys.argv[1] if len(sys.argv) > 1 else "/tmp"
    arrays = os.path.join(OUT, "arrays.gguf")
    write_arrays(arrays)
    describe(arrays, os.path.join(OUT, "arrays.typed"))
    big = os.path.join(scratch, "tokens150k.gguf")
    write_tokens(big)
    describe(big, os.path.join(OUT, "tokens150k.typed"), sample=sample)
    os.remove(big)


if __name__ == "__main__":
    main()
