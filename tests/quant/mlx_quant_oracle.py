#!/usr/bin/env python3
"""tblob_quant_quantize against its oracles, through the shared library (ctypes).

Oracles:
  * MLX (pip "mlx[cpu]==0.32.4", CPU backend): mx.quantize for affine (bits 2, 3, 4, 5, 6, 8;
    group sizes 32, 64, 128), mxfp4, mxfp8, nvfp4 (without and with global_scale), inputs in
    f32, f16 and bf16 (MLX's scales and biases take the input's dtype; f32 input with f16/bf16
    scales is compared with mx.quantize's f32 scales and biases cast by MLX). Codes, scales
    and biases byte for byte, and tblob_quant_dequantize(tblob_quant_quantize(x)) against
    mx.dequantize(mx.quantize(x)) bit for bit.
  * numpy + ml_dtypes for Hugging Face block FP8 (s = amax / 448 rounded to the scale dtype,
    code = float8_e4m3fn(clip(x / s, -448, 448))) and hand-computed blocks.
  * numpy for SLM1 q8_0 / q4_0 (docs/slm1.md section 8).
Inputs: seeded random rows (numpy PCG64) plus edge cases: equal values, zeros, +-0,
subnormals, values past the range, NaN and Inf (refused: TBLOB_E_QUANT_NONFINITE, see
docs/quantize.md for what MLX produces), cols not a multiple of the group (a status).

Usage: mlx_quant_oracle.py --lib path/to/libtensorblob.so
       mlx_quant_oracle.py --write-fixtures DIR   (tests/data/quant: the gtest's fixtures)
Without mlx/ml_dtypes it exits 77 (Meson's "skipped"), but FAILS (exit 1) when CI=true.
"""

import argparse
import ctypes
import os
import sys

import numpy as np

IMPORT_ERROR = None
try:
    import ml_dtypes
    import mlx.core as mx
except ImportError as e:
    IMPORT_ERROR = e

MLX_VERSION = "0.32.4"

# tensorblob.h numbers
DT = {"f16": 6, "bf16": 7, "f32": 10, "e8m0": 17, "e4m3": 16}
QUANT_AFFINE, QUANT_MXFP4, QUANT_MXFP8, QUANT_NVFP4 = 1, 2, 3, 4
QUANT_BLOCK_FP8, QUANT_SLM1_Q8, QUANT_SLM1_Q4 = 14, 15, 16
GS_NONE, GS_MLX_AMAX = 0, 2
SPECIAL_MLX0324 = 2  # E8M0 0xFF = inf, E4M3 as OCP: mlx 0.32.4's decoder
E_QUANT_GROUP_SIZE, E_QUANT_GLOBAL_SCALE, E_UNSUPPORTED, E_QUANT_VALUE, E_QUANT_NONFINITE = -71, -78, -9, -82, -87


class Desc(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("scheme", ctypes.c_uint32),
                ("bits", ctypes.c_uint32), ("group_size", ctypes.c_uint32),
                ("scale_dtype", ctypes.c_uint32), ("bias_dtype", ctypes.c_uint32),
                ("special", ctypes.c_uint32), ("global_scale_mode", ctypes.c_uint32),
                ("rows", ctypes.c_uint64), ("cols", ctypes.c_uint64),
                ("data", ctypes.c_void_p), ("data_bytes", ctypes.c_uint64),
                ("scales", ctypes.c_void_p), ("scales_bytes", ctypes.c_uint64),
                ("biases", ctypes.c_void_p), ("biases_bytes", ctypes.c_uint64),
                ("global_scale", ctypes.c_void_p), ("global_scale_bytes", ctypes.c_uint64)]


class Diag(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("status", ctypes.c_int32),
                ("offset", ctypes.c_uint64), ("tensor_index", ctypes.c_int64),
                ("message", ctypes.c_char * 256)]


class Options(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("threads", ctypes.c_uint32),
                ("importance", ctypes.c_void_p), ("importance_count", ctypes.c_uint64),
                ("reserved", ctypes.c_uint32 * 2)]


def np_dt(name):
    return {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16}[name]


def mx_dt(name):
    return {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16}[name]


def mx_bytes(a):
    """Raw little-endian bytes of an MLX array (bf16 through a uint16 view)."""
    if a.dtype == mx.bfloat16:
        a = a.view(mx.uint16)
    return np.array(a).tobytes()


class Lib:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.tblob_quant_size.argtypes = [ctypes.POINTER(Desc), ctypes.POINTER(Diag)]
        self.lib.tblob_quant_quantize.argtypes = [ctypes.POINTER(Desc), ctypes.c_uint32, ctypes.c_void_p,
                                                  ctypes.c_size_t, ctypes.POINTER(Options),
                                                  ctypes.POINTER(Diag)]
        self.lib.tblob_quant_dequantize.argtypes = [ctypes.POINTER(Desc), ctypes.c_uint32, ctypes.c_uint64,
                                                    ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t,
                                                    ctypes.POINTER(Diag)]

    def quantize(self, scheme, x, src, bits=0, group=0, sdt=0, gmode=GS_NONE, gscale=None,
                 threads=1, importance=None):
        """Returns (status, message, desc-with-buffers, data, scales, biases)."""
        rows, cols = x.shape
        d = Desc(ctypes.sizeof(Desc), scheme, bits, group, sdt, sdt if scheme == QUANT_AFFINE else 0,
                 SPECIAL_MLX0324, gmode, rows, cols)
        diag = Diag(ctypes.sizeof(Diag), 0, 0, -1)
        st = self.lib.tblob_quant_size(ctypes.byref(d), ctypes.byref(diag))
        if st != 0:
            return st, diag.message.decode(), None, None, None, None
        data = ctypes.create_string_buffer(max(1, d.data_bytes))
        scales = ctypes.create_string_buffer(max(1, d.scales_bytes))
        biases = ctypes.create_string_buffer(max(1, d.biases_bytes))
        g = ctypes.create_string_buffer(np.float32(gscale if gscale is not None else 0).tobytes(), 4)
        d.data = ctypes.addressof(data) if d.data_bytes else None
        d.scales = ctypes.addressof(scales) if d.scales_bytes else None
        d.biases = ctypes.addressof(biases) if d.biases_bytes else None
        d.global_scale = ctypes.addressof(g) if d.global_scale_bytes else None
        buf = np.ascontiguousarray(x.astype(np_dt(src)))
        opts = Options(ctypes.sizeof(Options), threads, None, 0)
        if importance is not None:
            imp = np.ascontiguousarray(importance, np.float32)
            opts.importance = imp.ctypes.data
            opts.importance_count = imp.size
        st = self.lib.tblob_quant_quantize(ctypes.byref(d), DT[src], buf.ctypes.data, buf.nbytes,
                                           ctypes.byref(opts), ctypes.byref(diag))
        d._keep = (data, scales, biases, g)
        return (st, diag.message.decode(), d, data.raw[:d.data_bytes], scales.raw[:d.scales_bytes],
                biases.raw[:d.biases_bytes])

    def dequantize(self, d, out):
        n = d.rows * d.cols * (4 if out == "f32" else 2)
        buf = ctypes.create_string_buffer(max(1, n))
        diag = Diag(ctypes.sizeof(Diag), 0, 0, -1)
        st = self.lib.tblob_quant_dequantize(ctypes.byref(d), DT[out], 0, ~0 & 0xFFFFFFFFFFFFFFFF,
                                             buf, n, ctypes.byref(diag))
        if st != 0:
            raise AssertionError("dequantize: %d %s" % (st, diag.message.decode()))
        return buf.raw[:n]


class Checker:
    def __init__(self):
        self.fails = 0
        self.checks = 0

    def eq(self, what, got, want):
        self.checks += 1
        if got != want:
            self.fails += 1
            if self.fails <= 30:
                if isinstance(got, bytes) and isinstance(want, bytes):
                    k = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), None)
                    print("FAIL %s: %d vs %d bytes, first differing byte %s (got %s want %s)" %
                          (what, len(got), len(want), k, got[k:k + 8].hex() if k is not None else "",
                           want[k:k + 8].hex() if k is not None else ""))
                else:
                    print("FAIL %s: got %r want %r" % (what, got, want))


# ---- inputs ---------------------------------------------------------------------------------

def random_rows(rng, rows, cols):
    x = rng.standard_normal((rows, cols)).astype(np.float32)
    scale = 10.0 ** rng.uniform(-3, 2, size=(rows, 1))
    x = x * scale
    x[1::4] += (scale[1::4] * 3)       # rows that do not cross zero
    x[2::4] = np.abs(x[2::4]) * -1     # all negative
    return x.astype(np.float32)


def edge_cases(cols):
    """(name, values f32, refused_by) - refused_by: set of mode names expected to refuse."""
    n = cols
    lin = np.linspace(-1, 1, n, dtype=np.float32)
    out = [
        ("equal", np.full(n, 0.37, np.float32), set()),
        ("equal_neg", np.full(n, -5.5, np.float32), set()),
        ("zeros", np.zeros(n, np.float32), set()),
        ("neg_zeros", np.full(n, -0.0, np.float32), set()),
        ("signed_zeros", np.where(np.arange(n) % 2 == 0, 0.0, -0.0).astype(np.float32), set()),
        ("f16_subnormals", np.linspace(-3e-6, 3e-6, n).astype(np.float32), set()),
        ("tiny_normal", np.full(n, 1e-4, np.float32), set()),
        ("nvfp4_scale_past_448", np.linspace(-2800, 2800, n).astype(np.float32), set()),
        ("mxfp8_past_448", np.concatenate([np.full(n // 2, 500.0), np.full(n - n // 2, -0.001)]).astype(np.float32), set()),
    ]
    x = lin.copy(); x[3] = np.nan
    out.append(("nan", x, {"all"}))
    x = lin.copy(); x[5] = np.inf
    out.append(("inf", x, {"all"}))
    x = lin.copy(); x[7] = -np.inf
    out.append(("neg_inf", x, {"all"}))
    return out


def f32_only_edges(cols):
    n = cols
    return [
        # f32 subnormals: the mx scale exponent falls below E8M0 (MLX wraps it): refused
        ("f32_subnormals", np.full(n, 1e-40, np.float32), {"mxfp4", "mxfp8"}),
        ("f32_subnormal_mix", np.linspace(-1e-39, 1e-39, n).astype(np.float32), {"mxfp4", "mxfp8"}),
        # the affine range max - min overflows f32: refused; mx modes/nvfp4 saturate
        ("past_f32_range", np.where(np.arange(n) % 2 == 0, 3e38, -3e38).astype(np.float32), {"affine"}),
        ("huge_equal", np.full(n, 3.3e38, np.float32), set()),
    ]


# ---- MLX cases --------------------------------------------------------------------------------

def mlx_case(lib, ck, label, x, src, mode, bits, group, sdt_name=None, gscale=None, expect_refusal=False):
    """Quantizes x (f32 values, exactly representable in src) both ways and compares."""
    xm = mx.array(x.astype(np.float32)).astype(mx_dt(src))
    kw = {}
    if gscale is not None:
        kw["global_scale"] = mx.array(np.float32(gscale))
    scheme = {"affine": QUANT_AFFINE, "mxfp4": QUANT_MXFP4, "mxfp8": QUANT_MXFP8, "nvfp4": QUANT_NVFP4}[mode]
    if mode == "affine":
        sdt = sdt_name or src
        sdt_code = DT[sdt]
    else:
        sdt_code = DT["e4m3"] if mode == "nvfp4" else DT["e8m0"]
    gmode = GS_MLX_AMAX if gscale is not None else GS_NONE
    st, msg, d, data, scales, biases = lib.quantize(scheme, x, src, bits if mode == "affine" else 0,
                                                    group, sdt_code, gmode, gscale)
    if expect_refusal:
        finite = np.all(np.isfinite(np.asarray(x, dtype=np.float32)))
        ck.eq(label + " refused", st, E_QUANT_VALUE if finite else E_QUANT_NONFINITE)
        return None
    ck.eq(label + " status (" + msg + ")", st, 0)
    if st != 0:
        return None
    if mode == "affine":
        if sdt_name and sdt_name != src:
            # Scales in another dtype than the input: MLX's f32 computation (the input widened
            # exactly to f32) with its scales and biases cast once.
            q, s, b = mx.quantize(xm.astype(mx.float32), group_size=group, bits=bits, mode="affine")
            s, b = s.astype(mx_dt(sdt_name)), b.astype(mx_dt(sdt_name))
        else:
            q, s, b = mx.quantize(xm, group_size=group, bits=bits, mode="affine")
    else:
        q, s = mx.quantize(xm, mode=mode, **kw)
        b = None
    ck.eq(label + " codes", data, mx_bytes(q))
    ck.eq(label + " scales", scales, mx_bytes(s))
    if b is not None:
        ck.eq(label + " biases", biases, mx_bytes(b))
    # Round trip: MLX's output dtype, our decoder in that dtype.
    if mode == "affine":
        ref = mx.dequantize(q, s, b, group_size=group, bits=bits, mode="affine")
    else:
        ref = mx.dequantize(q, s, mode=mode, **kw)
    out = {mx.float32: "f32", mx.float16: "f16", mx.bfloat16: "bf16"}[ref.dtype]
    ck.eq(label + " round trip (" + out + ")", lib.dequantize(d, out), mx_bytes(ref))
    return (q, s, b)


def affine_params():
    for bits in (2, 3, 4, 5, 6, 8):
        for group in (32, 64, 128):
            yield bits, group


def run_mlx(lib, ck):
    rng = np.random.default_rng(20261128)
    rows, cols = 8, 256
    for src in ("f32", "f16", "bf16"):
        x = random_rows(rng, rows, cols).astype(np_dt(src)).astype(np.float32)
        for bits, group in affine_params():
            mlx_case(lib, ck, "affine %s b%d g%d random" % (src, bits, group), x, src, "affine", bits, group)
        for mode in ("mxfp4", "mxfp8", "nvfp4"):
            mlx_case(lib, ck, "%s %s random" % (mode, src), x, src, mode, 0, 16 if mode == "nvfp4" else 32)
        amax = float(np.max(np.abs(x)))
        for g in (amax, amax * 0.37, amax * 3.1):
            mlx_case(lib, ck, "nvfp4 %s global %g" % (src, g), x, src, "nvfp4", 0, 16, gscale=g)
        # edge cases, one row each (plus a random row so groups differ)
        edges = edge_cases(cols) + (f32_only_edges(cols) if src != "f16" else [])
        for name, e, refused in edges:
            if src == "f16" and np.max(np.abs(e[np.isfinite(e)]), initial=0) > 65504:
                continue
            xe = np.stack([e, x[0]]).astype(np_dt(src)).astype(np.float32)
            if src == "bf16" and name.startswith("f32_subnormal"):
                # bf16 rounds amax / maxval to 0 (scale 2^0, MLX's rule) except amax 1e-39 / 6
                refused = {"mxfp4"} if name == "f32_subnormal_mix" else set()
            for bits, group in ((2, 32), (4, 64), (8, 128), (3, 32), (6, 64)):
                r = "all" in refused or "affine" in refused
                mlx_case(lib, ck, "affine %s b%d g%d %s" % (src, bits, group, name), xe, src, "affine", bits,
                         group, expect_refusal=r)
            for mode in ("mxfp4", "mxfp8", "nvfp4"):
                r = "all" in refused or mode in refused
                mlx_case(lib, ck, "%s %s %s" % (mode, src, name), xe, src, mode, 0, 16 if mode == "nvfp4" else 32,
                         expect_refusal=r)
    # Scale dtype other than the input's: MLX's f32 results cast by MLX.
    x = random_rows(rng, rows, cols)
    for src, sdt in (("f32", "f16"), ("f32", "bf16"), ("f16", "bf16"), ("f16", "f32"), ("bf16", "f32"),
                     ("bf16", "f16")):
        xs = x.astype(np_dt(src)).astype(np.float32)
        for bits, group in ((4, 64), (8, 32), (3, 128)):
            mlx_case(lib, ck, "affine %s->%s b%d g%d" % (src, sdt, bits, group), xs, src, "affine", bits, group,
                     sdt_name=sdt)
    # Threads never change the bytes.
    big = random_rows(rng, 512, 256)
    for scheme, bits, group, sdt in ((QUANT_AFFINE, 4, 64, DT["bf16"]), (QUANT_MXFP4, 0, 32, DT["e8m0"]),
                                     (QUANT_NVFP4, 0, 16, DT["e4m3"])):
        one = lib.quantize(scheme, big, "bf16", bits, group, sdt, threads=1)
        four = lib.quantize(scheme, big, "bf16", bits, group, sdt, threads=4)
        ck.eq("threads 1 vs 4 scheme %d" % scheme, (one[0], one[3], one[4], one[5]),
              (four[0], four[3], four[4], four[5]))
    # Statuses: cols not a multiple of the group, importance weights, unsupported parameters.
    xs = np.ones((2, 48), np.float32)
    ck.eq("affine cols 48 group 32", lib.quantize(QUANT_AFFINE, xs, "f32", 4, 32, DT["f32"])[0], E_QUANT_GROUP_SIZE)
    ck.eq("mxfp4 cols 48", lib.quantize(QUANT_MXFP4, xs, "f32", 0, 32, DT["e8m0"])[0], E_QUANT_GROUP_SIZE)
    ck.eq("affine group 16", lib.quantize(QUANT_AFFINE, np.ones((2, 64), np.float32), "f32", 4, 16,
                                          DT["f32"])[0], E_QUANT_GROUP_SIZE)
    ck.eq("importance refused", lib.quantize(QUANT_AFFINE, np.ones((2, 64), np.float32), "f32", 4, 32, DT["f32"],
                                             importance=np.ones(64, np.float32))[0], E_UNSUPPORTED)
    ck.eq("nvfp4 global 0", lib.quantize(QUANT_NVFP4, np.ones((2, 64), np.float32), "f32", 0, 16, DT["e4m3"],
                                         GS_MLX_AMAX, 0.0)[0], E_QUANT_GLOBAL_SCALE)


# ---- block FP8 and SLM1 ----------------------------------------------------------------------

def block_fp8_ref(x, g, sdt):
    rows, cols = x.shape
    nbr, nbc = -(-rows // g), -(-cols // g)
    scales = np.zeros((nbr, nbc), np.float32)
    codes = np.zeros((rows, cols), ml_dtypes.float8_e4m3fn)
    for i in range(nbr):
        for j in range(nbc):
            blk = x[i * g:(i + 1) * g, j * g:(j + 1) * g]
            amax = np.max(np.abs(blk))
            s = np.float32(1.0) if amax == 0 else np.float32(amax / np.float32(448.0))
            s = np.float32(np.array(s).astype(np_dt(sdt)))
            scales[i, j] = s
            codes[i * g:(i + 1) * g, j * g:(j + 1) * g] = np.clip(blk / s, -448, 448).astype(ml_dtypes.float8_e4m3fn)
    return codes.view(np.uint8).tobytes(), scales.astype(np_dt(sdt)).tobytes()


def run_block_fp8(lib, ck):
    rng = np.random.default_rng(7)
    for sdt in ("f32", "bf16", "f16"):
        for src in ("f32", "bf16"):
            for rows, cols, g in ((300, 200, 128), (64, 96, 32), (128, 128, 128)):
                x = (rng.standard_normal((rows, cols)) * 10.0 ** rng.uniform(-3, 1)).astype(np_dt(src)).astype(np.float32)
                x[:g, :g] *= 0  # an all-zero block (scale 1)
                st, msg, d, data, scales, _ = lib.quantize(QUANT_BLOCK_FP8, x, src, 0, g, DT[sdt])
                ck.eq("block-fp8 %s/%s %dx%d g%d status (%s)" % (src, sdt, rows, cols, g, msg), st, 0)
                if st:
                    continue
                want_codes, want_scales = block_fp8_ref(x, g, sdt)
                ck.eq("block-fp8 %s/%s %dx%d codes" % (src, sdt, rows, cols), data, want_codes)
                ck.eq("block-fp8 %s/%s %dx%d scales" % (src, sdt, rows, cols), scales, want_scales)
                # the checkpoint convention: every non-zero block holds a code of magnitude 448
                codes = np.frombuffer(data, np.uint8).reshape(rows, cols)
                for i in range(0, rows, g):
                    for j in range(0, cols, g):
                        blk = codes[i:i + g, j:j + g] & 0x7F
                        if np.any(x[i:i + g, j:j + g] != 0) and sdt == "f32":
                            ck.eq("block-fp8 block (%d,%d) max code" % (i, j), int(blk.max()), 0x7E)
    # Hand-computed: amax 896 -> s = 2; 3 -> 1.5 (0x3C), -896 -> -448 (0xFE), 1 -> 0.5 (0x30),
    # 2^-10 -> 2^-11 rounds to 0 (half of the smallest subnormal 2^-9 is 2^-10: below it),
    # 0.01 -> 0.005 = 2.56 * 2^-9 -> 3 * 2^-9 (0x03).
    x = np.array([[3.0, -896.0, 1.0, 2.0 ** -10, 0.01, -0.0]], np.float32)
    st, msg, d, data, scales, _ = lib.quantize(QUANT_BLOCK_FP8, x, "f32", 0, 128, DT["f32"])
    ck.eq("block-fp8 hand codes", data, bytes([0x3C, 0xFE, 0x30, 0x00, 0x03, 0x80]))
    ck.eq("block-fp8 hand scale", scales, np.float32(2.0).tobytes())
    xn = np.ones((4, 4), np.float32); xn[1, 2] = np.nan
    ck.eq("block-fp8 NaN refused", lib.quantize(QUANT_BLOCK_FP8, xn, "f32", 0, 128, DT["f32"])[0], E_QUANT_NONFINITE)


def slm1_ref(x, block, qmax):
    rows, cols = x.shape
    scales, codes = [], np.zeros((rows, cols), np.int32)
    for r in range(rows):
        for b in range(0, cols, block):
            v = x[r, b:b + block]
            s = np.float32(np.max(np.abs(v)) / np.float32(qmax))
            s = np.float32(1.0) if s == 0 else s
            scales.append(s)
            codes[r, b:b + block] = np.clip(np.rint(v / s), -qmax, qmax)
    if qmax == 127:
        data = codes.astype(np.int8).tobytes()
    else:
        n = (codes & 0xF).astype(np.uint8)
        data = (n[:, 0::2] | (n[:, 1::2] << 4)).tobytes()
    return data, np.array(scales, np.float32).tobytes()


def run_slm1(lib, ck):
    rng = np.random.default_rng(11)
    x = (rng.standard_normal((5, 64)) * 0.1).astype(np.float32)
    x[2] = 0
    st, msg, d, data, scales, _ = lib.quantize(QUANT_SLM1_Q8, x, "f32", 0, 64, DT["f32"])
    want = slm1_ref(x, 64, 127)
    ck.eq("slm1 q8_0 (%s)" % msg, (st, data, scales), (0,) + want)
    st, msg, d, data, scales, _ = lib.quantize(QUANT_SLM1_Q4, x, "f32", 0, 32, DT["f32"])
    want = slm1_ref(x, 32, 7)
    ck.eq("slm1 q4_0 (%s)" % msg, (st, data, scales), (0,) + want)


# ---- fixtures for the gtest (builds that cannot run MLX) -------------------------------------

def write_fixtures(out):
    """manifest.txt: one line per case
         name scheme bits group src_dtype scale_dtype global_mode global_f32_hex rows cols
       cases.bin: per case, in manifest order: src bytes, then MLX's codes, scales, biases
       (lengths: tblob_quant_size for the case's descriptor; src rows*cols*element size)."""
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(42)
    lines = ["# written by tests/quant/mlx_quant_oracle.py --write-fixtures with mlx %s" % mx.__version__,
             "# name scheme bits group src_dtype scale_dtype global_mode global_f32_hex rows cols"]
    blob = bytearray()
    rows, cols = 2, 128

    def add(name, x, src, mode, bits, group, gscale=None):
        xm = mx.array(x).astype(mx_dt(src))
        if mode == "affine":
            q, s, b = mx.quantize(xm, group_size=group, bits=bits)
            scheme, sdt = QUANT_AFFINE, DT[src]
        else:
            kw = {"global_scale": mx.array(np.float32(gscale))} if gscale is not None else {}
            q, s = mx.quantize(xm, mode=mode, **kw)
            b = None
            scheme = {"mxfp4": QUANT_MXFP4, "mxfp8": QUANT_MXFP8, "nvfp4": QUANT_NVFP4}[mode]
            sdt = DT["e4m3"] if mode == "nvfp4" else DT["e8m0"]
        g_hex = np.float32(gscale if gscale is not None else 0).tobytes().hex()
        lines.append("%s %d %d %d %d %d %d %s %d %d" % (name, scheme, bits, group, DT[src], sdt,
                                                        GS_MLX_AMAX if gscale is not None else 0, g_hex, rows, cols))
        blob.extend(mx_bytes(xm))
        blob.extend(mx_bytes(q))
        blob.extend(mx_bytes(s))
        if b is not None:
            blob.extend(mx_bytes(b))

    for src in ("f32", "f16", "bf16"):
        x = random_rows(rng, rows, cols)
        for bits, group in affine_params():
            add("affine_%s_b%d_g%d" % (src, bits, group), x, src, "affine", bits, group)
        for mode in ("mxfp4", "mxfp8", "nvfp4"):
            add("%s_%s" % (mode, src), x, src, mode, 0, 16 if mode == "nvfp4" else 32)
        xr = np.array(mx.array(x).astype(mx_dt(src)).astype(mx.float32))
        add("nvfp4_%s_global" % src, x, src, "nvfp4", 0, 16, gscale=float(np.max(np.abs(xr))))
        for name, e, refused in edge_cases(cols):
            if refused:
                continue
            xe = np.stack([e, x[0]]).astype(np.float32)
            add("affine_%s_b4_g32_%s" % (src, name), xe, src, "affine", 4, 32)
            for mode in ("mxfp4", "mxfp8", "nvfp4"):
                add("%s_%s_%s" % (mode, src, name), xe, src, mode, 0, 16 if mode == "nvfp4" else 32)
    with open(os.path.join(out, "manifest.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(out, "cases.bin"), "wb") as f:
        f.write(bytes(blob))
    print("wrote %d cases, %d bytes" % (len(lines) - 2, len(blob)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--write-fixtures")
    args = ap.parse_args()
    if IMPORT_ERROR is not None:
        msg = "mlx_quant_oracle: needs mlx[cpu]==%s and ml_dtypes (%s)" % (MLX_VERSION, IMPORT_ERROR)
        if os.environ.get("CI") == "true":
            print(msg + ": CI=true, failing (scripts/install-deps.sh installs them)")
            return 1
        print(msg + ": skipped")
        return 77
    if mx.__version__ != MLX_VERSION:
        print("mlx_quant_oracle: mlx %s installed; the oracle is %s" % (mx.__version__, MLX_VERSION))
        return 1
    mx.set_default_device(mx.cpu)
    if args.write_fixtures:
        write_fixtures(args.write_fixtures)
        return 0
    lib = Lib(args.lib)
    ck = Checker()
    run_mlx(lib, ck)
    run_block_fp8(lib, ck)
    run_slm1(lib, ck)
    print("%d checks, %d failed" % (ck.checks, ck.fails))
    return 1 if ck.fails else 0


if __name__ == "__main__":
    sys.exit(main())
