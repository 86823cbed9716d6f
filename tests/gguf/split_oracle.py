#!/usr/bin/env python3
"""Split GGUF sets against gguf-py (the oracle).

gguf-py's GGUFWriter writes a model as a 3-part split set (split_max_tensors) and as one
file. Opened through the library from each part (gguf_write_tool dump: tblob_model_open, the
table, lookup, views, tblob_tensor_read, dequantization to f32), the set must be one model:
part 1's key/values, every part's tensors in part order, each tensor's bytes and shape those
gguf-py's GGUFReader reads from its part, its f32 those of gguf.quants.dequantize, its file
index its part's. The single file gives the same tensors. Then the damaged sets: a part
missing (TBLOB_E_GGUF_SPLIT_MISSING, -220); split.no, split.count or split.tensors.count
patched, a part of another set, a part renamed out of the pattern (TBLOB_E_GGUF_SPLIT, -221).

usage: split_oracle.py GGUF_WRITE_TOOL TMPDIR
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np
import gguf
from gguf import GGUFReader, GGMLQuantizationType as QT

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


def write_model(path, split_max_tensors, tensors, extra_key=5):
    w = gguf.GGUFWriter(path, "llama", split_max_tensors=split_max_tensors)
    w.add_uint32("test.x", extra_key)
    w.add_key_value("test.tokens", ["a", "bb", "ccc"], gguf.GGUFValueType.ARRAY, sub_type=gguf.GGUFValueType.STRING)
    for name, arr, qt in tensors:
        w.add_tensor(name, arr, raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


rng = np.random.default_rng(7)
f = lambda *s: rng.standard_normal(s).astype(np.float32)
TENSORS = [
    ("tok_embd.weight", f(4, 64), None),
    ("blk.0.attn_q.weight", gguf.quants.quantize(f(2, 64), QT.Q8_0), QT.Q8_0),
    ("blk.0.attn_k.weight", f(3, 32).astype(np.float16), None),
    ("blk.0.ffn_up.weight", gguf.quants.quantize(f(2, 64), QT.Q4_0), QT.Q4_0),
    ("blk.1.attn_q.weight", gguf.quants.quantize(f(1, 256), QT.Q5_0), QT.Q5_0),
    ("norm.weight", f(16), None),
]


def dump(model):
    out = tempfile.mkdtemp(dir=TMP)
    p = subprocess.run(WRAP + [TOOL, "dump", model, out], capture_output=True, text=True)
    check(p.returncode == 0, f"dump {model}: {p.stderr}")
    info = {"keys": [], "tensors": [], "dir": out}
    for line in open(os.path.join(out, "index.txt"), encoding="utf-8", errors="replace"):
        k, _, rest = line.rstrip("\n").partition(" ")
        if k == "status":
            info["status"] = int(rest)
        elif k == "message":
            info["message"] = rest
        elif k == "files":
            info["files"] = int(rest)
        elif k == "key":
            name, t = rest.rsplit(" ", 1)
            info["keys"].append((name, int(t)))
        elif k == "tensor":
            v = rest.split(" ")
            info["tensors"].append((v[0], int(v[1]), int(v[2]), [int(x) for x in v[4:4 + int(v[3])]]))
    return info


def expected(parts):
    """What gguf-py reads from the parts: part 1's keys, every part's tensors."""
    keys = []
    tensors = []
    for i, part in enumerate(parts):
        r = GGUFReader(part)
        if i == 0:
            keys = [(n, int(fl.types[0])) for n, fl in r.fields.items() if not n.startswith("GGUF.")]
        for t in r.tensors:
            deq = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
            tensors.append((t.name, i, int(t.tensor_type), [int(x) for x in reversed(t.shape.tolist())],
                            bytes(t.data.tobytes()), deq.tobytes()))
    return keys, tensors


def compare(label, info, keys, tensors, files, single=False):
    check(info.get("status") == 0, f"{label}: status {info.get('status')} {info.get('message', '')}")
    if info.get("status") != 0:
        return
    check(info["files"] == files, f"{label}: {info['files']} files")
    check(info["keys"] == keys, f"{label}: keys {info['keys']} != {keys}")
    check(len(info["tensors"]) == len(tensors), f"{label}: {len(info['tensors'])} tensors")
    for i, (got, want) in enumerate(zip(info["tensors"], tensors)):
        name, fi, qt, shape, data, deq = want
        check(got[0] == name and got[2] == qt and got[3] == shape and (single or got[1] == fi),
              f"{label}: tensor {i} {got} != {(name, fi, qt, shape)}")
        check(open(os.path.join(info["dir"], f"{i}.bytes"), "rb").read() == data, f"{label}: {name}: bytes")
        check(open(os.path.join(info["dir"], f"{i}.f32"), "rb").read() == deq, f"{label}: {name}: dequantized f32")


def part_names(d, n):
    return [os.path.join(d, f"model-{i:05d}-of-{n:05d}.gguf") for i in range(1, n + 1)]


setd = os.path.join(TMP, "set")
os.makedirs(setd)
write_model(os.path.join(setd, "model.gguf"), 2, TENSORS)
parts = part_names(setd, 3)
check(all(os.path.exists(p) for p in parts), f"gguf-py wrote {sorted(os.listdir(setd))}")
keys, tensors = expected(parts)
check([k for k, _ in keys][-3:] == ["split.no", "split.count", "split.tensors.count"], f"part 1 keys {keys}")
for k, p in enumerate(parts):
    compare(f"set from part {k + 1}", dump(p), keys, tensors, 3)

single = os.path.join(TMP, "single")
os.makedirs(single)
write_model(os.path.join(single, "model.gguf"), 0, TENSORS)
skeys, stensors = expected([os.path.join(single, "model.gguf")])
compare("single file", dump(os.path.join(single, "model.gguf")), skeys, [t[:1] + (0,) + t[2:] for t in tensors], 1)
check(stensors == [t[:1] + (0,) + t[2:] for t in tensors], "gguf-py: the single file holds the set's tensors")


def damaged(label, mutate, status, open_part=0):
    d = os.path.join(TMP, label)
    shutil.copytree(setd, d)
    ps = part_names(d, 3)
    target = mutate(d, ps)
    info = dump(target or ps[open_part])
    check(info.get("status") == status, f"{label}: status {info.get('status')} want {status} ({info.get('message', '')})")
    print(f"ok {label}: {info.get('message', '')}")


def patch_key(path, key, fmt, value):
    b = bytearray(open(path, "rb").read())
    at = b.find(key.encode()) + len(key) + 4  # after the key's bytes and its u32 type
    struct.pack_into(fmt, b, at, value)
    open(path, "wb").write(b)


damaged("missing_part2", lambda d, ps: os.unlink(ps[1]), -220)
damaged("missing_part1_opened_from_3", lambda d, ps: os.unlink(ps[0]), -220, open_part=2)
damaged("split_no", lambda d, ps: patch_key(ps[1], "split.no", "<H", 2), -221)
damaged("split_count", lambda d, ps: patch_key(ps[2], "split.count", "<H", 4), -221)
damaged("tensors_count", lambda d, ps: patch_key(ps[0], "split.tensors.count", "<i", 7), -221)


def other_set(d, ps):
    # Part 2 of a set written with other tensor names: the total no longer adds up (1 + 2 + 2
    # tensors where part 1 says 6) is not the check here; the names are, and part 2 of a
    # 2-part set says split.count 2.
    o = os.path.join(d, "other")
    os.makedirs(o)
    write_model(os.path.join(o, "model.gguf"), 3, TENSORS)
    shutil.copy(part_names(o, 2)[1], ps[1])


damaged("part_of_another_set", other_set, -221)


def renamed(d, ps):
    n = os.path.join(d, "renamed.gguf")
    os.rename(ps[0], n)
    return n


damaged("renamed_part", renamed, -221)

if failures:
    print(f"{len(failures)} failures")
    sys.exit(1)
print("split sets read as one model, as gguf-py reads their parts")
