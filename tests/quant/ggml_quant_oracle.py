#!/usr/bin/env python3
"""tblob_ggml_quantize against ggml itself: every type of ggml_quant_types.GGML_QUANT_TYPES,
with and without importance weights, on seeded random rows and the edge cases of
ggml_quant_cases.py, byte for byte against the oracle build_ggml_oracle.sh builds from the
llama-cpp-python sdist (ggml's quantize_<type>), through every kernel set the host runs, on 1
and 3 threads, from F32 (aligned and not), F16 and BF16 input; and against gguf-py's
gguf.quants.quantize for the types it implements.

    ggml_quant_oracle.py --lib LIBTENSORBLOB.so [--oracle PATH] [--seed N]

Without --oracle it runs build_ggml_oracle.sh. When the oracle cannot be built (no network for
the sdist, no compiler) it exits 77 (skip), except with CI=true, where that is a failure.
Prints one line per failed check, then `N passed, N failed`.
"""
import argparse
import os
import struct
import subprocess
import sys

try:
    import numpy as np
except ImportError:  # numpy is installed by scripts/install-deps.sh; required in CI
    print("numpy is missing")
    sys.exit(1 if os.environ.get("CI", "").lower() == "true" else 77)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ggml_quant_cases import cases, importance  # noqa: E402
from ggml_quant_types import GGML_QUANT_TYPES, GGUF_PY_TYPES  # noqa: E402
from tblob_quant_ctypes import BF16, F16, F32, Lib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


class Oracle:
    """Batches requests to the oracle process: one run for many requests."""

    def __init__(self, path):
        self.path = path

    def run(self, requests):
        blob = bytearray()
        for t, x, w in requests:
            rows, cols = x.shape
            blob += struct.pack("<IIQQ", t, 1 if w is not None else 0, rows, cols)
            blob += np.ascontiguousarray(x, np.float32).tobytes()
            if w is not None:
                blob += np.ascontiguousarray(w, np.float32).tobytes()
        p = subprocess.run([self.path], input=bytes(blob), stdout=subprocess.PIPE, check=True)
        out, pos = [], 0
        for _ in requests:
            (n,) = struct.unpack_from("<Q", p.stdout, pos)
            pos += 8
            out.append(p.stdout[pos:pos + n])
            pos += n
        return out


def build_oracle():
    p = subprocess.run(["bash", os.path.join(HERE, "build_ggml_oracle.sh")], stdout=subprocess.PIPE)
    path = p.stdout.decode().strip().splitlines()[-1] if p.returncode == 0 and p.stdout.strip() else ""
    return path if path and os.access(path, os.X_OK) else None


def bf16_round_trip(x):
    """The f32 values of bf16 inputs (x truncated to bf16 bit patterns) and those patterns."""
    hi = (x.view(np.uint32) >> 16).astype(np.uint16)
    return (hi.astype(np.uint32) << 16).view(np.float32), hi


def gguf_blocks_equal(name, x, ours, gg, block_elems, block_bytes):
    """gguf-py vs our bytes, block by block. Blocks of only +-0 in Q4_0/Q5_0/Q4_1/Q5_1 are
    compared without the sign bits of their f16 d (and m): numpy's max/min keep a -0.0 where
    ggml's loops keep +0.0 (d = -0 in ggml for a block of -0, +0 in gguf-py; m the other way)."""
    xs = x.reshape(-1, block_elems)
    a = np.frombuffer(ours, np.uint8).reshape(-1, block_bytes).copy()
    b = np.frombuffer(gg, np.uint8).reshape(-1, block_bytes).copy()
    bad = 0
    for i in range(a.shape[0]):
        if name in ("q4_0", "q5_0", "q4_1", "q5_1") and not np.any(xs[i]):
            for j in ((1,) if name in ("q4_0", "q5_0") else (1, 3)):
                a[i, j] &= 0x7F
                b[i, j] &= 0x7F
        if not np.array_equal(a[i], b[i]):
            bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--oracle")
    ap.add_argument("--seed", type=int, default=20261128)
    args = ap.parse_args()

    oracle_path = args.oracle or build_oracle()
    if not oracle_path:
        if os.environ.get("CI", "").lower() == "true":
            print("the ggml oracle cannot be built (bench/ggml_src.sh, cc): required in CI")
            print("0 passed, 1 failed")
            return 1
        print("skip: the ggml oracle cannot be built here")
        return 77
    oracle = Oracle(oracle_path)
    lib = Lib(args.lib)
    sets = lib.kernel_sets()
    passed = failed = 0

    def check(ok, what):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
            print("FAIL", what)

    check("scalar" in sets, f"kernel sets {sets} include scalar")
    # 768 columns: three 256-value blocks a row, so the K-quants' importance is read at each
    # block's offset too (the fixtures keep 256).
    rows_cases = cases(args.seed, cols=768)
    weights = importance(args.seed, cols=768)
    # One request list for the oracle: F32 values, their F16 and BF16 roundings, each type,
    # without and (where ggml takes it) with every weight vector.
    reqs, meta = [], []
    for name, tid, be, bb, takes_w in GGML_QUANT_TYPES:
        wsets = [(None, None)] + ([(wn, w) for wn, w in weights] if takes_w else [weights[0]])
        for cname, x in rows_cases:
            with np.errstate(over="ignore"):
                x16 = x.astype(np.float16)
            xb, xb_bits = bf16_round_trip(x)
            variants = [("f32", x, x.tobytes(), F32)]
            if np.all(np.isfinite(x16)):
                variants.append(("f16", x16.astype(np.float32), x16.tobytes(), F16))
            variants.append(("bf16", xb, xb_bits.tobytes(), BF16))
            for wn, w in wsets:
                for vn, xv, raw, dt in variants:
                    reqs.append((tid, xv, w))
                    meta.append((name, tid, be, bb, cname, wn, vn, raw, dt, xv, w))
    expected = oracle.run(reqs)

    for k in sets:
        lib.set_kernels(k)
        for (name, tid, be, bb, cname, wn, vn, raw, dt, xv, w), exp in zip(meta, expected):
            rows, cols = xv.shape
            label = f"{name} {cname} {vn} importance={wn} kernels={k}"
            check(len(exp) > 0, f"{label}: the oracle runs the type")
            st, got, msg = lib.quantize(tid, dt, raw, rows, cols, w, threads=1)
            if st != 0 or got != exp:
                diff = next((i for i in range(min(len(got), len(exp))) if got[i] != exp[i]), None)
                check(False, f"{label}: status {st} {msg}; first differing byte {diff} (block {None if diff is None else diff // bb})")
                continue
            check(True, label)
            # Threads and alignment change nothing (checked on the F32 input, default kernels).
            if vn == "f32" and k == sets[-1]:
                st3, got3, _ = lib.quantize(tid, dt, raw, rows, cols, w, threads=3)
                check(st3 == 0 and got3 == exp, f"{label}: 3 threads")
                st1, got1, _ = lib.quantize(tid, dt, raw, rows, cols, w, threads=1, misalign=1)
                check(st1 == 0 and got1 == exp, f"{label}: unaligned input")
    lib.set_kernels(None)

    # gguf-py (numpy) for the types it implements, no importance.
    try:
        import gguf
        import gguf.quants as gq
    except ImportError:
        gguf = None
    if gguf is None:
        check(os.environ.get("CI", "").lower() != "true", "gguf-py is importable (required in CI)")
    else:
        for name, tid, be, bb, _ in GGML_QUANT_TYPES:
            if name not in GGUF_PY_TYPES:
                continue
            qt = getattr(gq.GGMLQuantizationType, name.upper())
            for cname, x in rows_cases:
                rows, cols = x.shape
                st, ours, msg = lib.quantize(tid, F32, x.tobytes(), rows, cols)
                with np.errstate(all="ignore"):
                    gg = gq.quantize(x, qt).tobytes()
                bad = gguf_blocks_equal(name, x, ours, gg, be, bb)
                check(st == 0 and bad == 0, f"gguf-py {name} {cname}: {bad} blocks differ")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
