#!/usr/bin/env python3
"""tblob_gguf_writer against gguf-py (the `gguf` package, the oracle).

For each case, gguf-py's GGUFWriter writes a file from known values; gguf_write_tool copies it
through the library (reader -> writer: to a path, and through the write callback in 7-byte
pieces). The writer's file must be byte-identical with gguf-py's, and gguf-py's GGUFReader
must read from it exactly the values the case started from (not what either side read).
Cases: every scalar type, arrays of every element type (strings included, a 3,000-string
vocabulary), alignments 1, 8, 32 (default) and 64, empty tensors, plain and block ggml types,
a rank-0 tensor, 600 tensors. Then the content gguf-py cannot write (nested and empty arrays)
is written by the tool and read with GGUFReader.

usage: writer_oracle.py GGUF_WRITE_TOOL TMPDIR
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGUFReader, GGUFValueType as VT, GGMLQuantizationType as QT

# Cross builds run the built programs through meson's exe wrapper (qemu-aarch64).
import shlex  # noqa: E402
WRAP = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))

TOOL = sys.argv[1]
TMP = tempfile.mkdtemp(dir=sys.argv[2] if len(sys.argv) > 2 else None)
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


SCALARS = [
    ("t.u8", 200, VT.UINT8), ("t.i8", -100, VT.INT8), ("t.u16", 60000, VT.UINT16),
    ("t.i16", -30000, VT.INT16), ("t.u32", 4000000000, VT.UINT32), ("t.i32", -2000000000, VT.INT32),
    ("t.f32", 0.1, VT.FLOAT32), ("t.bool_t", True, VT.BOOL), ("t.bool_f", False, VT.BOOL),
    ("t.str", "héllo wörld", VT.STRING), ("t.empty_str", "", VT.STRING),
    ("t.u64", 2**63 + 5, VT.UINT64), ("t.i64", -(2**62), VT.INT64), ("t.f64", 1e-300, VT.FLOAT64),
]
ARRAYS = [
    ("a.u8", [0, 1, 255], VT.UINT8), ("a.i8", [-128, 0, 127], VT.INT8), ("a.u16", [1, 65535], VT.UINT16),
    ("a.i16", [-32768, 32767], VT.INT16), ("a.u32", [7, 2**32 - 1], VT.UINT32), ("a.i32", [-5, 5, 2**31 - 1], VT.INT32),
    ("a.f32", [0.5, -1.25, 3.0e38], VT.FLOAT32), ("a.bool", [True, False, True], VT.BOOL),
    ("a.str", ["", "a", "ünïcode", "x" * 300], VT.STRING), ("a.u64", [2**64 - 1], VT.UINT64),
    ("a.i64", [-(2**63), 2**63 - 1], VT.INT64), ("a.f64", [1.5, -2.0**-1000], VT.FLOAT64),
]


def expect_value(v, t):
    if t == VT.FLOAT32:
        return float(np.float32(v))
    return v


def tensors_basic(rng):
    q = lambda qt, shape: (rng.integers(0, 256, size=gguf.quant_shape_to_byte_shape(shape, qt), dtype=np.uint8), qt)
    return [
        ("f32", rng.standard_normal((3, 5)).astype(np.float32), None),
        ("f16", rng.standard_normal((4, 8)).astype(np.float16), None),
        ("empty_f32", np.zeros((0, 4), dtype=np.float32), None),
        ("bf16", *q(QT.BF16, (2, 16))),
        ("q8_0", *q(QT.Q8_0, (2, 64))),
        ("empty_q4_0", *q(QT.Q4_0, (0, 32))),
        ("q4_k", *q(QT.Q4_K, (1, 256))),
        ("iq4_nl", *q(QT.IQ4_NL, (3, 32))),
        ("i8", rng.integers(-128, 127, size=(7,), dtype=np.int8), None),
        ("i16", rng.integers(-1000, 1000, size=(2, 3), dtype=np.int16), None),
        ("i32", rng.integers(-1000, 1000, size=(5,), dtype=np.int32), None),
        ("i64", rng.integers(-1000, 1000, size=(1, 1, 3), dtype=np.int64), None),
        ("f64", rng.standard_normal((2, 2, 2, 2)), None),
        ("rank0", np.array(3.5, dtype=np.float32), None),
    ]


def write_case(path, alignment, tensors, kv=True, vocab=0):
    w = gguf.GGUFWriter(path, "test")
    if alignment is not None:
        w.add_custom_alignment(alignment)
    if kv:
        for k, v, t in SCALARS:
            w.add_key_value(k, v, t)
        for k, v, t in ARRAYS:
            w.add_key_value(k, v, VT.ARRAY, sub_type=t)
    if vocab:
        w.add_key_value("tokenizer.ggml.tokens", ["tok%d\u00e9" % i for i in range(vocab)], VT.ARRAY, sub_type=VT.STRING)
    for name, arr, qt in tensors:
        w.add_tensor(name, arr, raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def verify_read(path, alignment, tensors, kv, vocab):
    r = GGUFReader(path)
    want = {"general.architecture": "test"}
    if alignment is not None:
        want["general.alignment"] = alignment
    if kv:
        for k, v, t in SCALARS:
            want[k] = expect_value(v, t)
        for k, v, t in ARRAYS:
            want[k] = [expect_value(x, t) for x in v]
    if vocab:
        want["tokenizer.ggml.tokens"] = ["tok%d\u00e9" % i for i in range(vocab)]
    got = {}
    for name, f in r.fields.items():
        if name.startswith("GGUF."):
            continue
        got[name] = f.contents()
    check(list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}")
    for k in want:
        check(got.get(k) == want[k], f"{path}: {k}: {got.get(k)!r} != {want[k]!r}")
    check(len(r.tensors) == len(tensors), f"{path}: {len(r.tensors)} tensors, want {len(tensors)}")
    for t, (name, arr, qt) in zip(r.tensors, tensors):
        check(t.name == name, f"{path}: tensor {t.name} != {name}")
        wtype = qt if qt is not None else {np.float32: QT.F32, np.float16: QT.F16, np.int8: QT.I8, np.int16: QT.I16,
                                           np.int32: QT.I32, np.int64: QT.I64, np.float64: QT.F64}[arr.dtype.type]
        check(t.tensor_type == wtype, f"{path}: {name}: type {t.tensor_type} != {wtype}")
        check(t.data.tobytes() == arr.tobytes(), f"{path}: {name}: data differs")
        # GGUF's ne is innermost first; the numpy shape (gguf-py's view) outermost first.
        if qt is None:
            check([int(x) for x in t.shape] == list(reversed(arr.shape)), f"{path}: {name}: shape {list(t.shape)}")


def run_case(label, alignment, tensors, kv=True, vocab=0):
    src = os.path.join(TMP, label + ".gguf")
    write_case(src, alignment, tensors, kv, vocab)
    ref = open(src, "rb").read()
    for mode, extra in (("path", []), ("callback", ["--callback", "--chunk", "7"])):
        out = os.path.join(TMP, f"{label}.{mode}.out.gguf")
        p = subprocess.run(WRAP + [TOOL, "copy", src, out] + extra, capture_output=True, text=True)
        check(p.returncode == 0, f"{label} {mode}: tool failed: {p.stderr}")
        if p.returncode != 0:
            continue
        got = open(out, "rb").read()
        same = got == ref
        if not same:
            at = next((i for i in range(min(len(got), len(ref))) if got[i] != ref[i]), min(len(got), len(ref)))
            check(False, f"{label} {mode}: differs from gguf-py at byte {at} ({len(got)} vs {len(ref)} bytes)")
        verify_read(out, alignment, tensors, kv, vocab)
        # No temporary file left beside the output.
        left = [f for f in os.listdir(TMP) if f.startswith(".tblob-tmp-")]
        check(not left, f"{label} {mode}: temporary files left: {left}")
    print(f"ok {label}: {len(ref)} bytes")


rng = np.random.default_rng(31)
base = tensors_basic(rng)
for a in (None, 1, 8, 32, 64):
    run_case(f"align{a}", a, base)
run_case("no_tensors", None, [])
run_case("only_empty", 8, [("e0", np.zeros((0,), dtype=np.float32), None), ("e1", np.zeros((4, 0), dtype=np.float16), None)])
run_case("vocab", None, base[:2], vocab=3000)
many = [(f"blk.{i}.w", rng.standard_normal((1 + i % 5, 3)).astype(np.float32), None) for i in range(600)]
run_case("many", 64, many, kv=False)

# Nested and empty arrays: written by the tool (gguf-py refuses empty arrays and the library's
# reader refuses nested ones), read by gguf-py.
nested = os.path.join(TMP, "nested.gguf")
p = subprocess.run(WRAP + [TOOL, "nested", nested], capture_output=True, text=True)
check(p.returncode == 0, f"nested: tool failed: {p.stderr}")
if p.returncode == 0:
    r = GGUFReader(nested)
    f = r.fields["test.nested_ints"]
    check(f.types == [VT.ARRAY, VT.ARRAY, VT.INT32], f"nested ints types {f.types}")
    # The element values gguf-py parsed, in order: every INT32 part (each element's own array
    # header parts are u32 type and u64 count).
    # parts[0:2] are the key's length and bytes.
    ints = [int(p[0]) for p in f.parts[2:] if p.dtype == np.int32]
    check(ints == [1, 2, 3, 4], f"nested ints values {ints}")
    counts = [int(p[0]) for p in f.parts[2:] if p.dtype == np.uint64]
    check(counts == [3, 3, 1, 0], f"nested ints counts {counts}")
    f = r.fields["test.nested_strings"]
    check(f.types == [VT.ARRAY, VT.ARRAY, VT.STRING], f"nested strings types {f.types}")
    strs = [bytes(p).decode() for p in f.parts[2:] if p.dtype == np.uint8]
    check(strs == ["a", "bc", "def"], f"nested strings {strs}")
    f = r.fields["test.empty_f32"]
    check(f.types == [VT.ARRAY, VT.FLOAT32] or f.types == [VT.ARRAY], f"empty array types {f.types}")
    check(f.contents() == [], f"empty array contents {f.contents()}")
    check(r.tensors[0].name == "t" and r.tensors[0].data.tolist() == [[1, 2, 3], [4, 5, 6]], "nested: tensor")

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("all cases identical with gguf-py and read back by GGUFReader")
