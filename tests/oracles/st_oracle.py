#!/usr/bin/env python3
"""Independent oracle for `tensorblob inspect --json`, built on the Python `safetensors` package.

    python3 st_oracle.py --cli <path-to-tensorblob> --workdir <dir> [--seed S] [--keep-going] [-v]

What it does:
  1. Writes safetensors files with the `safetensors` package (safetensors.numpy.save_file, and
     safetensors.serialize_file with a raw TensorSpec for F4, which numpy cannot express), one
     hand-written file for the F6 dtypes (the package cannot write them, it must accept them),
     and a sharded checkpoint directory laid out as transformers writes it.
  2. For every file it builds three independent views and checks they agree:
       - the arrays we handed to the writer (expected bytes = little-endian tobytes()),
       - the package's view (safe_open: keys/dtype/shape/metadata; deserialize: data bytes),
       - our own parse of the header with Python's json module (offsets, tiling).
  3. Runs `<cli> inspect --json` on each file, on the sharded directory and on its index, and
     checks names, dtypes, shapes, offsets, lengths, metadata and the bytes at those offsets.
  4. Writes invalid files, checks the package rejects each one and the CLI reports ok:false
     with the exact TBLOB_E_* status.
Ends with the plain line `N passed, N failed`; exits 1 if anything failed.

Only numpy, ml_dtypes and safetensors are needed (no torch).
"""
import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import traceback

try:
    import numpy as np
    import safetensors
    from safetensors import safe_open, deserialize, serialize_file, TensorSpec
    from safetensors.numpy import save_file
except ImportError as e:
    # The oracle's peer is missing. In CI (CI=true) that is a failure: the comparison would
    # silently not happen. Elsewhere the test is skipped (exit 77), and says why.
    in_ci = os.environ.get("CI", "").lower() in ("true", "1", "yes")
    print("st_oracle: the Python peer is missing (%s): scripts/install-deps.sh installs numpy and "
          "safetensors%s" % (e, "; failing because CI is set" if in_ci else "; skipped"))
    print("0 passed, 1 failed" if in_ci else "0 passed, 0 failed")
    sys.exit(1 if in_ci else 77)

try:
    import ml_dtypes
except ImportError:  # the oracle still runs, without bf16/f8 through numpy
    ml_dtypes = None

# The 22 safetensors dtypes (reference section 1.4) and their bit widths.
DTYPE_BITS = {
    "BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8,
    "F8_E5M2": 8, "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8,
    "I16": 16, "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32,
    "C64": 64, "F64": 64, "I64": 64, "U64": 64,
}

CLI_TIMEOUT = 120


# ----------------------------------------------------------------------------------------
# Result bookkeeping
# ----------------------------------------------------------------------------------------
class Results:
    def __init__(self, verbose):
        self.passed = 0
        self.failed = 0
        self.verbose = verbose

    def check(self, cond, label, detail=""):
        if cond:
            self.passed += 1
            if self.verbose:
                print(f"PASS {label}")
        else:
            self.failed += 1
            msg = f"FAIL {label}"
            if detail:
                msg += f": {detail}"
            print(msg)
        return bool(cond)

    def eq(self, got, want, label):
        return self.check(got == want, label, f"got {_short(got)!s}, want {_short(want)!s}")


def _short(v, n=300):
    s = repr(v)
    return s if len(s) <= n else s[:n] + "..."


# ----------------------------------------------------------------------------------------
# Our own header parser: the independent oracle for offsets and lengths
# ----------------------------------------------------------------------------------------
class OracleError(Exception):
    pass


def _no_dup_pairs(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise OracleError(f"duplicate key {k!r}")
        d[k] = v
    return d


def oracle_parse(path):
    """Returns {"n": N, "data_start": 8+N, "tensors": {name: (dtype, shape, begin, end)},
    "metadata": dict, "file_len": L}. Raises OracleError if the file is not a valid
    safetensors file by the rules of reference section 1 (with duplicate keys refused)."""
    with open(path, "rb") as f:
        buf = f.read()
    if len(buf) < 8:
        raise OracleError("fewer than 8 bytes")
    (n,) = struct.unpack("<Q", buf[:8])
    if n > 100_000_000:
        raise OracleError("header too large")
    if 8 + n > len(buf):
        raise OracleError("header length beyond file")
    try:
        text = buf[8:8 + n].decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        raise OracleError(f"utf-8: {e}")
    try:
        hdr = json.loads(text, object_pairs_hook=_no_dup_pairs,
                         parse_constant=lambda c: (_ for _ in ()).throw(OracleError(c)))
    except (ValueError, OracleError) as e:
        raise OracleError(f"json: {e}")
    if not isinstance(hdr, dict):
        raise OracleError("top level not an object")
    meta = hdr.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise OracleError("bad __metadata__")
    tensors = {}
    for name, info in hdr.items():
        if not isinstance(info, dict):
            raise OracleError(f"{name!r}: not an object")
        dt, shape, offs = info.get("dtype"), info.get("shape"), info.get("data_offsets")
        if dt not in DTYPE_BITS:
            raise OracleError(f"{name!r}: dtype {dt!r}")
        if (not isinstance(shape, list)
                or not all(type(x) is int and 0 <= x < 2**64 for x in shape)):
            raise OracleError(f"{name!r}: shape")
        if (not isinstance(offs, list) or len(offs) != 2
                or not all(type(x) is int and 0 <= x < 2**64 for x in offs)):
            raise OracleError(f"{name!r}: data_offsets")
        tensors[name] = (dt, shape, offs[0], offs[1])
    cursor = 0
    for name, (dt, shape, b, e) in sorted(tensors.items(), key=lambda kv: (kv[1][2], kv[1][3])):
        if b != cursor or e < b:
            raise OracleError(f"{name!r}: offsets")
        cursor = e
        count = 1
        for d in shape:
            count *= d
            if count >= 2**64:
                raise OracleError(f"{name!r}: shape overflow")
        bits = count * DTYPE_BITS[dt]
        if bits >= 2**64:
            raise OracleError(f"{name!r}: bit overflow")
        if bits % 8:
            raise OracleError(f"{name!r}: misaligned")
        if e - b != bits // 8:
            raise OracleError(f"{name!r}: size")
    if 8 + n + cursor != len(buf):
        raise OracleError("file length differs from 8 + N + data")
    return {"n": n, "data_start": 8 + n, "tensors": tensors, "metadata": meta,
            "file_len": len(buf), "buf": buf}


# ----------------------------------------------------------------------------------------
# The package's view
# ----------------------------------------------------------------------------------------
def package_view(path):
    """(tensors {name: (dtype, shape)}, metadata, data {name: bytes}) from the package."""
    out = {}
    with safe_open(path, framework="numpy") as f:
        meta = f.metadata() or {}
        for k in f.keys():
            sl = f.get_slice(k)
            out[k] = (sl.get_dtype(), list(sl.get_shape()))
    with open(path, "rb") as fh:
        raw = fh.read()
    data = {}
    for name, info in deserialize(raw):
        data[name] = bytes(info["data"])
        if name in out:
            # deserialize must agree with safe_open.
            if (info["dtype"], list(info["shape"])) != out[name]:
                raise AssertionError(f"safe_open/deserialize disagree on {name!r}")
    return out, meta, data


def package_rejects(path):
    """Returns (rejected: bool, text). Both entry points must refuse the file."""
    texts = []
    rejected_open = rejected_deser = False
    try:
        with safe_open(path, framework="numpy") as f:
            for k in f.keys():
                f.get_slice(k)
    except Exception as e:  # SafetensorError, or anything else the package raises
        rejected_open = True
        texts.append(f"safe_open: {e}")
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        deserialize(raw)
    except Exception as e:
        rejected_deser = True
        texts.append(f"deserialize: {e}")
    return rejected_open and rejected_deser, "; ".join(texts)


# ----------------------------------------------------------------------------------------
# The CLI
# ----------------------------------------------------------------------------------------
def run_cli(cli, args):
    """Runs the CLI; returns (returncode, [parsed json objects] or None, stdout text, stderr)."""
    try:
        p = subprocess.run([cli] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=CLI_TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, None, "", "timeout"
    except OSError as e:
        return None, None, "", f"cannot run: {e}"
    err = p.stderr.decode("utf-8", "replace")
    try:
        text = p.stdout.decode("utf-8", errors="strict")
    except UnicodeDecodeError as e:
        return p.returncode, None, repr(p.stdout[:400]), f"stdout not UTF-8: {e}; " + err
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    objs = []
    for ln in lines:
        try:
            objs.append(_cli_undo(json.loads(ln)))
        except ValueError as e:
            return p.returncode, None, text, f"bad JSON line {ln[:200]!r}: {e}; " + err
    return p.returncode, objs, text, err


def _cli_undo(v):
    """The CLI's --json writes a byte that is not part of valid UTF-8 as U+10FFXX, and so each
    byte of a real U+10FF80-U+10FFFF (README, "--json"): undone here as the README says, on
    every key and string, so names compare with the package's."""
    if isinstance(v, str):
        if not any(0x10FF80 <= ord(c) <= 0x10FFFF for c in v):
            return v
        raw = b"".join(bytes([ord(c) - 0x10FF00]) if 0x10FF80 <= ord(c) <= 0x10FFFF
                       else c.encode("utf-8", "surrogatepass") for c in v)
        return raw.decode("utf-8", "surrogateescape")
    if isinstance(v, list):
        return [_cli_undo(x) for x in v]
    if isinstance(v, dict):
        return {_cli_undo(k): _cli_undo(x) for k, x in v.items()}
    return v


def cli_inspect_one(res, cli, path, label):
    rc, objs, text, err = run_cli(cli, ["inspect", "--json", path])
    if not res.check(objs is not None, f"{label}: CLI output parses as JSON lines",
                     f"rc={rc} {err.strip()[:400]}"):
        return rc, None
    if not res.eq(len(objs), 1, f"{label}: one JSON line per path"):
        return rc, None
    o = objs[0]
    res.check(isinstance(o, dict), f"{label}: line is an object", _short(o))
    if not isinstance(o, dict):
        return rc, None
    res.eq(o.get("path"), path, f"{label}: path echoes the argument")
    return rc, o


# ----------------------------------------------------------------------------------------
# Test data
# ----------------------------------------------------------------------------------------
def numpy_dtypes():
    """(safetensors name, numpy dtype) pairs to try with safetensors.numpy.save_file."""
    cands = [("BOOL", np.dtype(bool)), ("U8", np.dtype(np.uint8)), ("I8", np.dtype(np.int8)),
             ("I16", np.dtype(np.int16)), ("U16", np.dtype(np.uint16)),
             ("F16", np.dtype(np.float16)), ("I32", np.dtype(np.int32)),
             ("U32", np.dtype(np.uint32)), ("F32", np.dtype(np.float32)),
             ("F64", np.dtype(np.float64)), ("I64", np.dtype(np.int64)),
             ("U64", np.dtype(np.uint64)), ("C64", np.dtype(np.complex64))]
    if ml_dtypes is not None:
        for st, attr in [("BF16", "bfloat16"), ("F8_E4M3", "float8_e4m3fn"),
                         ("F8_E5M2", "float8_e5m2"), ("F8_E8M0", "float8_e8m0fnu"),
                         ("F8_E4M3FNUZ", "float8_e4m3fnuz"), ("F8_E5M2FNUZ", "float8_e5m2fnuz")]:
            if hasattr(ml_dtypes, attr):
                cands.append((st, np.dtype(getattr(ml_dtypes, attr))))
    return cands


def random_array(rng, dt, shape):
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if dt == np.dtype(bool):
        a = rng.integers(0, 2, size=n).astype(bool)
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
    elif dt.kind == "c":
        a = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    elif dt.kind == "f":
        a = rng.standard_normal(n).astype(dt)
    else:  # ml_dtypes kinds ('V'): every bit pattern is a legal byte for the file
        a = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8).view(dt)
    return np.ascontiguousarray(a.reshape(shape))


SHAPES = [[], [1], [7], [0], [2, 3], [3, 0, 2], [0, 0], [2, 1, 3, 1, 2], [1, 1, 1, 1, 1, 1, 1, 4]]

FUNNY_NAMES = [
    'quote"inside', "back\\slash", "both\\\"mix", "nul\x00byte", "ctl\x01\x07\x08\x0b\x0c\x1f",
    "nl\nand\ttab\rcr", "del\x7f", "slash/and\\/", "caf\u00e9.\u4e2d\u6587", "emoji\U0001F916\U0001F600",
    "\u2028line\u2029sep", "bmp-edge\uffff\ufffd", "astral-edge\U0010FFFF", "", " ", "__metadata",
    "__metadata__ ", "model.layers.0.self_attn.q_proj.weight", "{\"json\":[1,2]}", "\\u0041",
]

FUNNY_META = {"format": "pt", 'k"q': 'v"q', "k\\b": "v\\b", "ctl\x00\x1f": "val\n\t",
              "\u00e9\U0001F916": "\u4e2d\U0010FFFF", "": "", "empty-value": ""}


def write_f6_file(path, rng):
    """The package cannot write F6 (its writer knows no such dtype); we write the file by hand
    exactly as its serializer would lay it out, and require that the package *reads* it."""
    specs = [("f6a", "F6_E2M3", [4]), ("f6b", "F6_E3M2", [2, 4]), ("f6z", "F6_E2M3", [0, 3]),
             ("f4", "F4", [2, 3]), ("u8", "U8", [3])]
    hdr = {}
    blobs = {}
    cursor = 0
    for name, dt, shape in specs:
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        nbytes = count * DTYPE_BITS[dt] // 8
        blobs[name] = rng.integers(0, 256, size=nbytes, dtype=np.uint8).tobytes()
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [cursor, cursor + nbytes]}
        cursor += nbytes
    h = json.dumps(hdr, separators=(",", ":")).encode()
    h += b" " * ((-len(h)) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs[n] for n, _, _ in specs))
    return {n: blobs[n] for n, _, _ in specs}


def build_valid(work, rng, res, report):
    """Writes the valid files. Returns {path: {name: expected_bytes or None}}."""
    files = {}
    vdir = os.path.join(work, "valid")
    os.makedirs(vdir)

    accepted, refused = [], []
    per_dtype = {}
    for st, dt in numpy_dtypes():
        arrays = {f"{st.lower()}_{'x'.join(map(str, s)) or 'scalar'}": random_array(rng, dt, s)
                  for s in SHAPES}
        p = os.path.join(vdir, f"dtype_{st}.safetensors")
        try:
            save_file(arrays, p, metadata={"dtype": st, "format": "np"})
        except Exception as e:
            refused.append(f"{st} ({dt.name}): {e}")
            continue
        accepted.append(f"{st} ({dt.name})")
        files[p] = {k: v.tobytes() for k, v in arrays.items()}
        per_dtype[st] = arrays[f"{st.lower()}_2x3"]
    report["numpy_accepted"] = accepted
    report["numpy_refused"] = refused

    # complex128 and other numpy dtypes outside the format must be refused by the writer.
    for bad in ["complex128", "float128"]:
        if hasattr(np, bad):
            try:
                save_file({"x": np.zeros(2, dtype=getattr(np, bad))},
                          os.path.join(work, f"refused_{bad}.safetensors"))
                report.setdefault("numpy_refused_extra", []).append(f"{bad}: ACCEPTED")
            except Exception as e:
                report.setdefault("numpy_refused_extra", []).append(f"{bad}: {str(e)[:60]}...")

    # Every dtype in one file, with metadata; a big-endian input (the writer byteswaps).
    p = os.path.join(vdir, "all_dtypes.safetensors")
    arrays = {f"t.{st}": a for st, a in per_dtype.items()}
    arrays["t.big_endian_u32"] = np.arange(6, dtype=">u4").reshape(2, 3)
    arrays["t.big_endian_f64"] = np.linspace(-1, 1, 5).astype(">f8")
    save_file(arrays, p, metadata={"format": "pt", "note": "all numpy dtypes"})
    files[p] = {k: np.ascontiguousarray(v).astype(v.dtype.newbyteorder("<")).tobytes()
                for k, v in arrays.items()}

    # F4 through the package's raw writer (float4_e2m1fn_x2: two values per byte; the package
    # doubles the last dimension for the header).
    p = os.path.join(vdir, "f4_raw.safetensors")
    f4 = rng.integers(0, 256, size=(3, 2), dtype=np.uint8)
    f4b = rng.integers(0, 256, size=(5,), dtype=np.uint8)
    u8 = rng.integers(0, 256, size=(4,), dtype=np.uint8)
    try:
        serialize_file({
            "f4": TensorSpec(dtype="float4_e2m1fn_x2", shape=[3, 2], data_ptr=f4.ctypes.data,
                             data_len=f4.nbytes),
            "f4_1d": TensorSpec(dtype="float4_e2m1fn_x2", shape=[5], data_ptr=f4b.ctypes.data,
                                data_len=f4b.nbytes),
            "u8": TensorSpec(dtype="uint8", shape=[4], data_ptr=u8.ctypes.data,
                             data_len=u8.nbytes),
        }, p, metadata={"format": "raw"})
        files[p] = {"f4": f4.tobytes(), "f4_1d": f4b.tobytes(), "u8": u8.tobytes()}
        report["raw_accepted"] = "F4 via TensorSpec(dtype='float4_e2m1fn_x2')"
    except Exception as e:
        report["raw_accepted"] = f"F4 refused: {e}"

    p = os.path.join(vdir, "f6_handwritten.safetensors")
    files[p] = write_f6_file(p, rng)

    # Names that need escaping, and metadata that does.
    p = os.path.join(vdir, "names.safetensors")
    arrays = {n: random_array(rng, np.dtype(np.float32), [i % 3 + 1])
              for i, n in enumerate(FUNNY_NAMES)}
    arrays["zero-size a"] = np.zeros((0, 4), np.float32)
    arrays["zero-size b"] = np.zeros((2, 0), np.int64)
    save_file(arrays, p, metadata=FUNNY_META)
    files[p] = {k: v.tobytes() for k, v in arrays.items()}

    # Edge files: nothing at all, only metadata, only zero-size tensors, a scalar only.
    p = os.path.join(vdir, "empty.safetensors")
    save_file({}, p)
    files[p] = {}
    p = os.path.join(vdir, "metadata_only.safetensors")
    save_file({}, p, metadata={"format": "pt", "empty": ""})
    files[p] = {}
    p = os.path.join(vdir, "zero_size_only.safetensors")
    arrays = {"z0": np.zeros((0,), np.float32), "z1": np.zeros((5, 0, 2), np.uint8),
              "z2": np.zeros((0, 0), ml_dtypes.bfloat16 if ml_dtypes else np.float16)}
    save_file(arrays, p)
    files[p] = {k: b"" for k in arrays}
    p = os.path.join(vdir, "scalar.safetensors")
    arrays = {"s": np.array(3.5, dtype=np.float64)}
    save_file(arrays, p)
    files[p] = {"s": arrays["s"].tobytes()}

    # A larger table: 3000 small tensors of mixed dtypes.
    p = os.path.join(vdir, "many.safetensors")
    dts = [dt for _, dt in numpy_dtypes()]
    arrays = {f"blk.{i // 10}.w{i % 10}": random_array(rng, dts[i % len(dts)], [i % 5])
              for i in range(3000)}
    save_file(arrays, p, metadata={"count": "3000"})
    files[p] = {k: v.tobytes() for k, v in arrays.items()}
    return files


def build_sharded(work, rng):
    """A checkpoint directory as transformers' save_pretrained writes it. Returns
    (dir, index path, {name: (shard file name, expected bytes)})."""
    d = os.path.join(work, "sharded")
    os.makedirs(d)
    bf16 = ml_dtypes.bfloat16 if ml_dtypes else np.float16
    shards = [
        {"model.embed_tokens.weight": random_array(rng, np.dtype(bf16), [32, 8]),
         "model.layers.0.self_attn.q_proj.weight": random_array(rng, np.dtype(bf16), [8, 8]),
         "model.layers.0.input_layernorm.weight": random_array(rng, np.dtype(np.float32), [8])},
        {"model.layers.0.mlp.up_proj.weight": random_array(rng, np.dtype(np.float16), [16, 8]),
         "model.layers.0.mlp.\"quoted\\name\u00e9": random_array(rng, np.dtype(np.int8), [3]),
         "model.layers.0.empty": np.zeros((0, 8), np.float32)},
        {"model.norm.weight": random_array(rng, np.dtype(np.float32), [8]),
         "lm_head.weight": random_array(rng, np.dtype(bf16), [32, 8])},
    ]
    total = len(shards)
    weight_map = {}
    expected = {}
    total_size = 0
    for i, tensors in enumerate(shards):
        fname = f"model-{i + 1:05d}-of-{total:05d}.safetensors"
        save_file(tensors, os.path.join(d, fname), metadata={"format": "pt"})
        for k, v in tensors.items():
            weight_map[k] = fname
            expected[k] = (fname, v.tobytes())
            total_size += v.nbytes
    index = {"metadata": {"total_size": total_size}, "weight_map": weight_map}
    ipath = os.path.join(d, "model.safetensors.index.json")
    with open(ipath, "w", encoding="utf-8") as f:
        # transformers: json.dumps(index, indent=2, sort_keys=True) + "\n"
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    return d, ipath, expected


def _file(hdr_obj, data, pad=True, raw_header=None):
    h = raw_header if raw_header is not None else json.dumps(
        hdr_obj, separators=(",", ":")).encode()
    if pad:
        h += b" " * ((-len(h)) % 8)
    return struct.pack("<Q", len(h)) + h + data


def build_invalid(work, rng):
    """Returns [(path, {acceptable statuses}, required: bool, why)]. `required` cases are the
    ones the brief pins; the others are extra edge cases with their natural status."""
    d = os.path.join(work, "invalid")
    os.makedirs(d)
    base_p = os.path.join(d, "_base.safetensors")
    save_file({"a": np.arange(6, dtype=np.float32).reshape(2, 3),
               "b": np.arange(4, dtype=np.int16)}, base_p, metadata={"format": "pt"})
    with open(base_p, "rb") as f:
        base = f.read()
    (n,) = struct.unpack("<Q", base[:8])
    os.remove(base_p)
    cases = []

    def add(name, content, statuses, required, why):
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(content)
        cases.append((p, set(statuses), required, why))

    add("truncated.safetensors", base[:-3], ["TBLOB_E_TRUNCATED"], True,
        "package-written file with its last 3 data bytes cut off")
    add("truncated_to_header.safetensors", base[:8 + n], ["TBLOB_E_TRUNCATED"], True,
        "package-written file with the whole data region cut off")
    add("polyglot.safetensors", base + b"extra_bogus_data_for_polyglot_file",
        ["TBLOB_E_TRAILING_BYTES"], True, "package-written file with 34 bytes appended")
    add("polyglot_one_byte.safetensors", base + b"\x00", ["TBLOB_E_TRAILING_BYTES"], True,
        "package-written file with one NUL byte appended")
    add("overlap.safetensors",
        _file({"A": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
               "B": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}, bytes(6)),
        ["TBLOB_E_OFFSETS"], True, "A=[0,4) and B=[2,6): overlap, sizes right, length right")
    add("hole.safetensors",
        _file({"A": {"dtype": "U8", "shape": [4], "data_offsets": [0, 4]},
               "B": {"dtype": "U8", "shape": [4], "data_offsets": [5, 9]}}, bytes(9)),
        ["TBLOB_E_OFFSETS"], True, "one unowned byte between A and B")
    add("not_at_zero.safetensors",
        _file({"A": {"dtype": "U8", "shape": [4], "data_offsets": [2, 6]}}, bytes(6)),
        ["TBLOB_E_OFFSETS"], True, "first tensor starts at 2")
    add("wrong_length.safetensors",
        _file({"A": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 12]}}, bytes(12)),
        ["TBLOB_E_TENSOR_SIZE"], True, "F32 [2,2] needs 16 bytes, has 12")
    add("wrong_length_second.safetensors",
        _file({"A": {"dtype": "U8", "shape": [2], "data_offsets": [0, 2]},
               "B": {"dtype": "I16", "shape": [3], "data_offsets": [2, 10]}}, bytes(10)),
        ["TBLOB_E_TENSOR_SIZE"], True, "I16 [3] needs 6 bytes, has 8")
    add("bad_dtype.safetensors",
        _file({"A": {"dtype": "F33", "shape": [1], "data_offsets": [0, 4]}}, bytes(4)),
        ["TBLOB_E_DTYPE"], True, "dtype F33")
    add("bad_dtype_case.safetensors",
        _file({"A": {"dtype": "f32", "shape": [1], "data_offsets": [0, 4]}}, bytes(4)),
        ["TBLOB_E_DTYPE"], True, "dtype f32 (names are case-sensitive)")
    add("bad_dtype_fn.safetensors",
        _file({"A": {"dtype": "F8_E4M3FN", "shape": [1], "data_offsets": [0, 1]}}, bytes(1)),
        ["TBLOB_E_DTYPE"], True, "F8_E4M3FN is not a safetensors spelling")
    # Extra edge cases, one per remaining status in the reference's check order.
    add("too_small.safetensors", b"\x08\x00\x00", ["TBLOB_E_HEADER_TOO_SMALL"], False,
        "3 bytes")
    add("too_large.safetensors", b"\x3c\x00\x00\x00\x00\xff\xff\xff" + base[8:],
        ["TBLOB_E_HEADER_TOO_LARGE"], False, "N far above 100,000,000")
    add("header_length.safetensors", base[:8 + n // 2], ["TBLOB_E_HEADER_LENGTH"], False,
        "cut inside the header")
    add("not_utf8.safetensors", struct.pack("<Q", 1) + b"\xff", ["TBLOB_E_UTF8"], False,
        "header byte 0xFF")
    add("not_json.safetensors", struct.pack("<Q", 1) + b"{", ["TBLOB_E_JSON"], False,
        "header '{'")
    add("shape_overflow.safetensors",
        _file(None, bytes(16), pad=False,
              raw_header=b'{"test":{"dtype":"I32","shape":[2,18446744073709551614],'
                         b'"data_offsets":[0,16]}}'),
        ["TBLOB_E_SHAPE_OVERFLOW"], False, "element count overflows")
    add("misaligned_f4.safetensors",
        _file({"A": {"dtype": "F4", "shape": [3], "data_offsets": [0, 1]}}, bytes(1)),
        ["TBLOB_E_MISALIGNED"], False, "F4 [3] is 12 bits")
    add("float_shape.safetensors",
        _file(None, bytes(4),
              raw_header=b'{"A":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}}'),
        ["TBLOB_E_SHAPE"], False, "shape [1.0]")
    add("dup_name_escaped.safetensors",
        _file(None, bytes(8),
              raw_header=b'{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},'
                         b'"\\u0061":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}}'),
        ["TBLOB_E_DUPLICATE_NAME"], False,
        "names a and \\u0061 (the package lets the last win, then rejects the hole)")
    # The package's own writer produces a tensor named __metadata__ that its reader refuses.
    p = os.path.join(d, "metadata_named_tensor.safetensors")
    save_file({"__metadata__": np.zeros(2, np.float32)}, p)
    cases.append((p, {"TBLOB_E_METADATA", "TBLOB_E_SCHEMA"}, False,
                  "written by save_file({'__metadata__': ...}); its own reader refuses it"))
    return cases


# ----------------------------------------------------------------------------------------
# Checks
# ----------------------------------------------------------------------------------------
def check_oracle_vs_package(res, path, expected, label):
    """Cross-checks our parse, the package and the arrays we wrote. Returns our parse."""
    try:
        ours = oracle_parse(path)
    except OracleError as e:
        res.check(False, f"{label}: own parser accepts the package's file", str(e))
        return None
    res.check(True, f"{label}: own parser accepts the package's file")
    try:
        ptens, pmeta, pdata = package_view(path)
    except Exception as e:
        res.check(False, f"{label}: package reads its file back", repr(e))
        return ours
    res.eq(sorted(ptens), sorted(ours["tensors"]), f"{label}: package and own parse: names")
    res.eq(sorted(expected), sorted(ours["tensors"]), f"{label}: written and parsed names")
    res.eq(pmeta, ours["metadata"], f"{label}: package and own parse: metadata")
    bad = []
    for name, (dt, shape, b, e) in ours["tensors"].items():
        if ptens.get(name) != (dt, shape):
            bad.append(f"{name!r}: package {ptens.get(name)} own {(dt, shape)}")
        sl = ours["buf"][ours["data_start"] + b:ours["data_start"] + e]
        if pdata.get(name) != sl:
            bad.append(f"{name!r}: package data differs from the file slice")
        if name in expected and expected[name] is not None and expected[name] != sl:
            bad.append(f"{name!r}: written bytes differ from the file slice")
    res.check(not bad, f"{label}: dtype/shape/bytes agree (package, own parse, written)",
              "; ".join(bad[:5]))
    return ours


def check_cli_tensors(res, label, cli_tensors, want, slice_of, sharded):
    """want: {name: (dtype, shape, begin, end, file or None)}; slice_of(file, off, len)."""
    if not res.check(isinstance(cli_tensors, list), f"{label}: tensors is a list",
                     _short(cli_tensors)):
        return
    seen = {}
    bad = []
    for t in cli_tensors:
        if not isinstance(t, dict) or "name" not in t:
            bad.append(f"malformed tensor entry {_short(t)}")
            continue
        if t["name"] in seen:
            bad.append(f"{t['name']!r} listed twice")
        seen[t["name"]] = t
    res.eq(sorted(seen), sorted(want), f"{label}: tensor names (unescaped)")
    for name, (dt, shape, b, e, fname) in want.items():
        t = seen.get(name)
        if t is None:
            continue
        if t.get("dtype") != dt:
            bad.append(f"{name!r}: dtype {t.get('dtype')!r} want {dt!r}")
        if t.get("shape") != shape:
            bad.append(f"{name!r}: shape {t.get('shape')!r} want {shape!r}")
        if t.get("offset") != b:
            bad.append(f"{name!r}: offset {t.get('offset')!r} want {b}")
        if t.get("length") != e - b:
            bad.append(f"{name!r}: length {t.get('length')!r} want {e - b}")
        if sharded and t.get("file") != fname:
            bad.append(f"{name!r}: file {t.get('file')!r} want {fname!r}")
        off, ln = t.get("offset"), t.get("length")
        if type(off) is int and type(ln) is int:
            got = slice_of(fname, off, ln)
            want_bytes = slice_of(fname, b, e - b)
            if got != want_bytes:
                bad.append(f"{name!r}: bytes at the CLI's offset differ")
    res.check(not bad, f"{label}: dtype/shape/offset/length/bytes of every tensor",
              "; ".join(bad[:6]) + (f" (+{len(bad) - 6} more)" if len(bad) > 6 else ""))


def check_valid_file(res, cli, path, expected):
    label = os.path.relpath(path, os.path.dirname(os.path.dirname(path)))
    ours = check_oracle_vs_package(res, path, expected, label)
    if ours is None:
        return
    # Bytes written must equal the file slice the header names (numpy's tobytes()).
    rc, o = cli_inspect_one(res, cli, path, label)
    res.eq(rc, 0, f"{label}: exit status 0")
    if o is None:
        return
    if not res.eq(o.get("ok"), True, f"{label}: ok"):
        print(f"     CLI said: {_short(o.get('error'))}")
        return
    res.eq(o.get("format"), "safetensors", f"{label}: format")
    res.eq(o.get("metadata"), ours["metadata"], f"{label}: metadata")
    want = {n: (dt, shape, b, e, None) for n, (dt, shape, b, e) in ours["tensors"].items()}
    buf, ds = ours["buf"], ours["data_start"]
    check_cli_tensors(res, label, o.get("tensors"), want,
                      lambda _f, off, ln: buf[ds + off:ds + off + ln], sharded=False)


def check_sharded(res, cli, d, ipath, expected):
    with open(ipath, encoding="utf-8") as f:
        index = json.load(f)
    want = {}
    parsed = {}
    for fname in sorted(set(index["weight_map"].values())):
        p = os.path.join(d, fname)
        exp = {k: v for k, (fn, v) in expected.items() if fn == fname}
        ours = check_oracle_vs_package(res, p, exp, f"sharded/{fname}")
        if ours is None:
            return
        parsed[fname] = ours
        for n, (dt, shape, b, e) in ours["tensors"].items():
            want[n] = (dt, shape, b, e, fname)
    res.eq(sorted(want), sorted(index["weight_map"]), "sharded: shards hold the weight_map")
    res.eq(index["metadata"]["total_size"],
           sum(e - b for _, _, b, e, _ in want.values()), "sharded: total_size")

    def slice_of(fname, off, ln):
        o = parsed.get(fname)
        if o is None:
            return None
        return o["buf"][o["data_start"] + off:o["data_start"] + off + ln]

    for arg, label in [(d, "sharded (directory)"), (ipath, "sharded (index path)"),
                       (d + os.sep, "sharded (directory/)")]:
        rc, o = cli_inspect_one(res, cli, arg, label)
        res.eq(rc, 0, f"{label}: exit status 0")
        if o is None:
            continue
        if not res.eq(o.get("ok"), True, f"{label}: ok"):
            print(f"     CLI said: {_short(o.get('error'))}")
            continue
        res.eq(o.get("format"), "safetensors-sharded", f"{label}: format")
        res.check(isinstance(o.get("metadata"), dict), f"{label}: metadata is an object",
                  _short(o.get("metadata")))
        check_cli_tensors(res, label, o.get("tensors"), want, slice_of, sharded=True)


def check_invalid(res, cli, case):
    path, statuses, required, why = case
    label = "invalid/" + os.path.basename(path) + ("" if required else " (extra)")
    rejected, text = package_rejects(path)
    res.check(rejected, f"{label}: the package rejects it ({why})", text or "accepted")
    try:
        oracle_parse(path)
        res.check(False, f"{label}: own parser rejects it", "accepted")
    except OracleError:
        res.check(True, f"{label}: own parser rejects it")
    rc, o = cli_inspect_one(res, cli, path, label)
    res.eq(rc, 1, f"{label}: exit status 1")
    if o is None:
        return
    res.eq(o.get("ok"), False, f"{label}: ok is false")
    err = o.get("error")
    if not res.check(isinstance(err, dict), f"{label}: error object", _short(o)):
        return
    res.check(err.get("status") in statuses, f"{label}: status",
              f"got {err.get('status')!r}, want {' or '.join(sorted(statuses))} "
              f"(message: {_short(err.get('message'), 200)})")
    res.check(isinstance(err.get("message"), str) and err.get("message") != "",
              f"{label}: message is a non-empty string", _short(err.get("message")))
    off = err.get("offset")
    res.check(off is None or (type(off) is int and off >= 0),
              f"{label}: offset is a non-negative integer (or null)", _short(off))


def check_multi(res, cli, valid_paths, invalid_paths):
    """Several paths in one call: one line each, in argument order; exit 1 if any invalid."""
    rc, objs, _, err = run_cli(cli, ["inspect", "--json"] + valid_paths)
    if res.check(objs is not None, "multi (valid): output parses", err[:300]):
        res.eq([o.get("path") for o in objs], valid_paths, "multi (valid): paths in order")
        res.check(all(o.get("ok") is True for o in objs), "multi (valid): all ok")
    res.eq(rc, 0, "multi (valid): exit status 0")
    mixed = []
    for i in range(max(len(valid_paths), len(invalid_paths))):
        if i < len(invalid_paths):
            mixed.append(invalid_paths[i])
        if i < len(valid_paths):
            mixed.append(valid_paths[i])
    rc, objs, _, err = run_cli(cli, ["inspect", "--json"] + mixed)
    if res.check(objs is not None, "multi (mixed): output parses", err[:300]):
        res.eq([o.get("path") for o in objs], mixed, "multi (mixed): paths in order")
        res.eq([o.get("ok") for o in objs], [p not in invalid_paths for p in mixed],
               "multi (mixed): ok flags")
    res.eq(rc, 1, "multi (mixed): exit status 1")
    # The same file twice is two lines.
    rc, objs, _, _ = run_cli(cli, ["inspect", "--json", valid_paths[0], valid_paths[0]])
    res.check(objs is not None and len(objs) == 2, "multi: a repeated path gives two lines")


def check_usage(res, cli, work):
    rc, _, _, _ = run_cli(cli, [])
    res.eq(rc, 2, "usage: no arguments exits 2")
    rc, _, _, _ = run_cli(cli, ["no-such-command"])
    res.eq(rc, 2, "usage: unknown command exits 2")
    missing = os.path.join(work, "does-not-exist.safetensors")
    rc, o = cli_inspect_one(res, cli, missing, "missing file")
    res.eq(rc, 1, "missing file: exit status 1")
    if o is not None:
        res.eq(o.get("ok"), False, "missing file: ok is false")
        st = (o.get("error") or {}).get("status")
        res.check(st in ("TBLOB_E_IO", "TBLOB_E_NOT_FOUND"), "missing file: status",
                  f"got {st!r}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="path to the tensorblob binary")
    ap.add_argument("--workdir", required=True,
                    help="scratch directory (its st_oracle/ subdirectory is recreated)")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("-v", "--verbose", action="store_true", help="print passing checks too")
    args = ap.parse_args()

    cli = os.path.abspath(args.cli)
    work = os.path.join(os.path.abspath(args.workdir), "st_oracle")
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    rng = np.random.default_rng(args.seed)
    res = Results(args.verbose)
    report = {}
    print(f"safetensors {safetensors.__version__}, numpy {np.__version__}, "
          f"ml_dtypes {getattr(ml_dtypes, '__version__', 'absent')}")
    try:
        files = build_valid(work, rng, res, report)
        d, ipath, sh_expected = build_sharded(work, rng)
        invalid = build_invalid(work, rng)
    except Exception:
        traceback.print_exc()
        print(f"{res.passed} passed, {res.failed + 1} failed")
        return 1
    print("numpy dtypes the package writes: " + ", ".join(report["numpy_accepted"]))
    for r in report["numpy_refused"] + report.get("numpy_refused_extra", []):
        print("numpy dtype refused by the writer: " + r)
    print("raw writer: " + report.get("raw_accepted", "?"))

    if not os.access(cli, os.X_OK):
        res.check(False, "CLI exists and is executable", cli)
        print(f"{res.passed} passed, {res.failed} failed")
        return 1

    try:
        for p, exp in files.items():
            check_valid_file(res, cli, p, exp)
        check_sharded(res, cli, d, ipath, sh_expected)
        for case in invalid:
            check_invalid(res, cli, case)
        check_multi(res, cli, sorted(files)[:6], [c[0] for c in invalid[:4]])
        check_usage(res, cli, work)
    except Exception:
        traceback.print_exc()
        res.check(False, "oracle ran to completion")
    print(f"{res.passed} passed, {res.failed} failed")
    return 0 if res.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
