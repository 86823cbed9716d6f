#!/usr/bin/env python3
"""Generates the dequantization oracle fixtures in tests/data/dequant/.

Oracles:
  * MLX (pip `mlx` plus, on Linux, its CPU backend `mlx-cpu`): mx.quantize of small seeded
    random arrays in every mode / bit width / group size / scale dtype MLX allows, saved with
    mx.save_safetensors in Ollama's combined-blob layout (tensor `w`, `w.scale`, `w.bias`,
    optional `w.global_scale`; __metadata__ {"quant_type", "group_size"} plus "mode" and "bits"),
    and mx.dequantize of the same arrays to f32, f16 and bf16. Hand-crafted code/scale
    tables (every E4M3/E2M1 code against every E8M0/E4M3 scale byte, extreme affine scales)
    are dequantized by MLX the same way.
  * ml_dtypes: the f32 value of every code of E4M3FN, E5M2, E8M0FNU, E4M3FNUZ, E5M2FNUZ,
    E2M1FN, F6 E2M3FN/E3M2FN; numpy/ml_dtypes f32 -> f16/bf16 rounding of edge-case patterns.

Layout written (all small; the whole directory stays well under 2 MB):
  tests/data/dequant/manifest.txt                one line per case (see its header)
  tests/data/dequant/mlx/<case>.safetensors      quantized blob (MLX writer)
  tests/data/dequant/mlx_expected/<case>.safetensors
                                                  `w` F32, `w.f16` F16, `w.bf16` BF16 outputs
  tests/data/dequant/minifloat_tables.txt        ml_dtypes + MLX code tables
  tests/data/dequant/convert_cases.txt           f32 bits -> f16 / bf16 bits

Deterministic: inputs come from numpy's PCG64 with fixed seeds (not MLX's RNG); re-running
with the same mlx/numpy/ml_dtypes versions rewrites byte-identical files (the versions are
recorded in manifest.txt). Usage (from the repository root):
  pip install mlx mlx-cpu ml_dtypes numpy
  python3 tests/oracles/gen_mlx_fixtures.py [--out DIR] [--check] [--run-test BINARY]
--check regenerates into a temporary directory and exits 1 if anything differs.
--run-test regenerates into a temporary directory with the installed MLX and runs the given
test binary (test_dequant_scalar) on it via TBLOB_DEQUANT_DATA_DIR: the live MLX comparison.
Without mlx/ml_dtypes it exits 77 (the Meson "skipped" code) in --run-test mode, 2 otherwise.
"""

import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

IMPORT_ERROR = None
try:
    import ml_dtypes
    import mlx.core as mx
except ImportError as e:  # mlx on Linux also needs its CPU backend package `mlx-cpu`
    IMPORT_ERROR = e

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
DEFAULT_OUT = os.path.join(REPO, "tests", "data", "dequant")



def np_dtype(name):
    return {"bf16": ml_dtypes.bfloat16, "f16": np.float16, "f32": np.float32}[name]


def mlx_e4m3_max_is_nan():
    """MLX <= 0.32.2 decodes E4M3 0x7F as 480; 0.32.4 decodes it as NaN."""
    v = mx.from_fp8(mx.array(np.array([0x7F], dtype=np.uint8)), dtype=mx.float32)
    return bool(np.isnan(np.array(v))[0])


def special_preset():
    # Names understood by the C++ test (kSpecialMlx / kSpecialMlx0324 in quant_desc.h).
    return "mlx0324" if mlx_e4m3_max_is_nan() else "mlx"


class Writer:
    def __init__(self, out):
        self.out = out
        self.lines = []
        os.makedirs(os.path.join(out, "mlx"), exist_ok=True)
        os.makedirs(os.path.join(out, "mlx_expected"), exist_ok=True)

    def case(self, name, mode, bits, group, scale_dtype, shape, q, s, b, expected,
             global_mode="none", global_scale=None):
        """Writes one case. expected: dict f32/f16/bf16 -> mx.array of the logical shape."""
        qt = {"affine": "int%d" % bits}.get(mode, mode)
        arrays = {"w": q, "w.scale": s}
        if b is not None:
            arrays["w.bias"] = b
        if global_scale is not None:
            arrays["w.global_scale"] = global_scale
        meta = {"quant_type": qt, "group_size": str(group), "mode": mode, "bits": str(bits)}
        if global_mode != "none":
            meta["global_scale_mode"] = global_mode
        mx.save_safetensors(os.path.join(self.out, "mlx", name + ".safetensors"), arrays,
                            metadata=meta)
        exp = {"w": expected["f32"].astype(mx.float32),
               "w.f16": expected["f16"].astype(mx.float16),
               "w.bf16": expected["bf16"].astype(mx.bfloat16)}
        for k, v in exp.items():
            assert tuple(v.shape) == tuple(shape), (name, k, v.shape, shape)
        mx.save_safetensors(os.path.join(self.out, "mlx_expected", name + ".safetensors"), exp)
        rows = int(np.prod(shape[:-1]))
        self.lines.append("%s %s %d %d %s %d %d %s" % (name, mode, bits, group, scale_dtype,
                                                        rows, shape[-1], global_mode))

    def finish(self, special):
        hdr = [
            "# dequant oracle fixtures, written by tests/oracles/gen_mlx_fixtures.py",
            "# mlx %s, numpy %s, ml_dtypes %s" % (mx.__version__, np.__version__,
                                                  ml_dtypes.__version__),
            "# special %s" % special,
            "# columns: case mode bits group_size scale_dtype rows cols global_scale_mode",
        ]
        with open(os.path.join(self.out, "manifest.txt"), "w") as f:
            f.write("\n".join(hdr + self.lines) + "\n")


def dequant3(q, s, b, group, bits, mode, global_scale=None):
    out = {}
    for k, dt in (("f32", mx.float32), ("f16", mx.float16), ("bf16", mx.bfloat16)):
        kw = {}
        if global_scale is not None:
            kw["global_scale"] = global_scale
        out[k] = mx.dequantize(q, s, b, group_size=group, bits=bits, mode=mode, dtype=dt, **kw)
    return out


def input_rows(rng, shape, sdt):
    """Random rows with magnitudes that differ per row, one constant row, one outlier row."""
    x = rng.standard_normal(shape).astype(np.float64)
    flat = x.reshape(-1, shape[-1])
    mags = [1.0, 0.01, 37.0, 3e-4, 900.0, 1.0]
    for r in range(flat.shape[0]):
        flat[r] *= mags[r % len(mags)]
    if flat.shape[0] >= 4:
        flat[1, :] = 0.75                     # constant row: degenerate scale
        flat[3, :] = -np.abs(flat[3, :])      # all negative ...
        flat[3, 5] = 2e-3                     # ... but one positive outlier: negative scales
    return mx.array(x.astype(np_dtype(sdt)))


def gen_affine(w, rng):
    for bits in (1, 2, 3, 4, 5, 6, 8):
        for group in (32, 64, 128):
            for sdt in ("bf16", "f16", "f32"):
                shape = (4, 256)
                x = input_rows(rng, shape, sdt)
                try:
                    q, s, b = mx.quantize(x, group_size=group, bits=bits, mode="affine")
                except Exception as e:  # noqa: BLE001 (MLX raises ValueError today)
                    print("skip affine b%d g%d %s: %s" % (bits, group, sdt, e))
                    continue
                name = "affine_b%d_g%d_%s" % (bits, group, sdt)
                w.case(name, "affine", bits, group, sdt, shape, q, s, b,
                       dequant3(q, s, b, group, bits, "affine"))
    # A 3-D tensor (batch axes fold into rows) with an unusual group size.
    x = input_rows(rng, (2, 3, 96), "bf16")
    q, s, b = mx.quantize(x, group_size=32, bits=4, mode="affine")
    w.case("affine_b4_g32_bf16_3d", "affine", 4, 32, "bf16", (2, 3, 96), q, s, b,
           dequant3(q, s, b, 32, 4, "affine"))


def gen_affine_extremes(w):
    """Hand-made scales/biases: overflow to inf, subnormals, NaN, signed zeros."""
    rng = np.random.default_rng(7)
    for sdt in ("bf16", "f16", "f32"):
        bits, group, rows, cols = 4, 32, 2, 256
        nd = np_dtype(sdt)
        codes = rng.integers(0, 16, size=(rows, cols), dtype=np.uint32)
        codes[:, :16] = np.arange(16)
        packed = np.zeros((rows, cols // 8), dtype=np.uint32)
        for j in range(8):
            packed |= codes[:, j::8] << (4 * j)
        big = {"bf16": 3e38, "f16": 60000.0, "f32": 3.3e38}[sdt]
        tiny = {"bf16": 1e-39, "f16": 1e-7, "f32": 1e-44}[sdt]
        sc = np.array([[big, -big, tiny, np.nan, np.inf, 0.0, -0.0, 1.0],
                       [0.1, -0.3, 7.0, -tiny, 1e-3, 123.0, -1.0, 0.5]])
        bi = np.array([[1.0, big, -tiny, 0.0, -np.inf, -0.0, -0.0, np.nan],
                       [-big, 0.25, -tiny, 3.0, 0.0, -7.0, 1e-3, -0.0]])
        s = mx.array(sc.astype(nd))
        b = mx.array(bi.astype(nd))
        q = mx.array(packed)
        w.case("affine_extremes_%s" % sdt, "affine", bits, group, sdt, (rows, cols), q, s, b,
               dequant3(q, s, b, group, bits, "affine"))


def gen_fp(w, rng):
    for mode, bits, group in (("mxfp4", 4, 32), ("mxfp8", 8, 32), ("nvfp4", 4, 16)):
        for sdt in ("bf16", "f32"):
            shape = (4, 256)
            x = input_rows(rng, shape, sdt)
            q, s = mx.quantize(x, group_size=group, bits=bits, mode=mode)[:2]
            w.case("%s_%s" % (mode, sdt), mode, bits, group, "u8", shape, q, s, None,
                   dequant3(q, s, None, group, bits, mode))
    # mx* with extreme row magnitudes: f16 output under/overflows the 2^e scale.
    x = rng.standard_normal((4, 128))
    x[0] *= 2.0 ** -30
    x[1] *= 2.0 ** 20
    x[2] *= 2.0 ** -120
    x[3] *= 2.0 ** 100
    x32 = mx.array(x.astype(np.float32))
    for mode, bits in (("mxfp4", 4), ("mxfp8", 8)):
        q, s = mx.quantize(x32, group_size=32, bits=bits, mode=mode)[:2]
        w.case("%s_range_f32" % mode, mode, bits, 32, "u8", (4, 128), q, s, None,
               dequant3(q, s, None, 32, bits, mode))
    # nvfp4 with a global scale, both conventions.
    x = input_rows(rng, (4, 128), "f32")
    amax = mx.array(np.float32(np.abs(np.array(x)).max()))
    q, s = mx.quantize(x, group_size=16, bits=4, mode="nvfp4", global_scale=amax)[:2]
    exp = dequant3(q, s, None, 16, 4, "nvfp4", global_scale=amax)  # MLX returns f32 here
    exp = {"f32": exp["f32"], "f16": exp["f32"].astype(mx.float16),
           "bf16": exp["f32"].astype(mx.bfloat16)}
    w.case("nvfp4_gs_mlx_amax", "nvfp4", 4, 16, "u8", (4, 128), q, s, None, exp,
           global_mode="mlx_amax", global_scale=amax)
    # Ollama's stored `.global_scale` is a direct multiplier, applied by its runner as
    # Mul(dequantize(w, scale), g).AsType(out) (x/mlxrunner/mlx/ops_extra.go Dequantize).
    q, s = mx.quantize(x, group_size=16, bits=4, mode="nvfp4")[:2]
    g = mx.array(np.float32(0.0123))
    exp = {}
    for k, dt in (("f32", mx.float32), ("f16", mx.float16), ("bf16", mx.bfloat16)):
        d = mx.dequantize(q, s, None, group_size=16, bits=4, mode="nvfp4", dtype=dt)
        exp[k] = (d * g).astype(dt)
    w.case("nvfp4_gs_multiplier", "nvfp4", 4, 16, "u8", (4, 128), q, s, None, exp,
           global_mode="multiplier", global_scale=g)


def gen_code_tables(w):
    """Every element code against a spread (or all) of the scale bytes."""
    # mxfp8: 256 E4M3 codes (8 groups of 32) per row, 8 rows, one scale byte per group.
    codes = np.tile(np.arange(256, dtype=np.uint8), (8, 1))
    scales = np.array([0, 1, 2, 100, 117, 126, 127, 128, 129, 140, 141, 142, 143, 150, 200, 253,
                       254, 255, 3, 96, 97, 110, 111, 112, 113, 114, 115, 130, 131, 160, 240, 252,
                       60, 61, 62, 63, 64, 65, 66, 67, 98, 99, 101, 102, 103, 104, 105, 106,
                       107, 108, 109, 116, 118, 119, 120, 121, 122, 123, 124, 125, 132, 133, 134,
                       135], dtype=np.uint8).reshape(8, 8)
    q = mx.array(codes.view(np.uint32))
    s = mx.array(scales)
    w.case("mxfp8_codes", "mxfp8", 8, 32, "u8", (8, 256), q, s, None,
           dequant3(q, s, None, 32, 8, "mxfp8"))
    # mxfp4: every FP4 code (twice per group) against all 256 E8M0 bytes.
    nib = np.tile(np.arange(16, dtype=np.uint8), 2)                # 32 codes / group
    grp = (nib[0::2] | (nib[1::2] << 4)).astype(np.uint8)         # 16 bytes
    packed = np.tile(grp, (8, 32))                                 # 8 rows x 32 groups
    q = mx.array(packed.view(np.uint32))
    s = mx.array(np.arange(256, dtype=np.uint8).reshape(8, 32))
    w.case("mxfp4_codes", "mxfp4", 4, 32, "u8", (8, 1024), q, s, None,
           dequant3(q, s, None, 32, 4, "mxfp4"))
    # nvfp4: every FP4 code against all 256 E4M3 scale bytes.
    grp = (np.arange(16, dtype=np.uint8)[0::2] | (np.arange(16, dtype=np.uint8)[1::2] << 4))
    packed = np.tile(grp.astype(np.uint8), (16, 16))               # 16 rows x 16 groups
    q = mx.array(packed.view(np.uint32))
    s = mx.array(np.arange(256, dtype=np.uint8).reshape(16, 16))
    w.case("nvfp4_codes", "nvfp4", 4, 16, "u8", (16, 256), q, s, None,
           dequant3(q, s, None, 16, 4, "nvfp4"))


def write_tables(out):
    lines = ["# name code f32_bits_hex  (ml_dtypes %s; mlx_* rows from mlx %s)"
             % (ml_dtypes.__version__, mx.__version__)]
    fmts = [("e4m3fn", ml_dtypes.float8_e4m3fn, 256), ("e5m2", ml_dtypes.float8_e5m2, 256),
            ("e8m0fnu", ml_dtypes.float8_e8m0fnu, 256),
            ("e4m3fnuz", ml_dtypes.float8_e4m3fnuz, 256),
            ("e5m2fnuz", ml_dtypes.float8_e5m2fnuz, 256),
            ("e2m1fn", ml_dtypes.float4_e2m1fn, 16),
            ("f6_e2m3fn", ml_dtypes.float6_e2m3fn, 64),
            ("f6_e3m2fn", ml_dtypes.float6_e3m2fn, 64)]
    for name, dt, n in fmts:
        bits = np.arange(n, dtype=np.uint8).view(dt).astype(np.float32).view(np.uint32)
        lines += ["%s %d %08x" % (name, c, int(bits[c])) for c in range(n)]
    # MLX's own decoders (E4M3 via from_fp8, E8M0 via mxfp8 dequantize of code 0x38 = 1.0).
    e4 = np.array(mx.from_fp8(mx.array(np.arange(256, dtype=np.uint8)), dtype=mx.float32))
    lines += ["mlx_e4m3 %d %08x" % (c, int(e4.view(np.uint32)[c])) for c in range(256)]
    q = mx.array(np.full((256, 8), 0x38383838, dtype=np.uint32))
    s = mx.array(np.arange(256, dtype=np.uint8).reshape(256, 1))
    e8 = np.array(mx.dequantize(q, s, None, group_size=32, bits=8, mode="mxfp8",
                                dtype=mx.float32))[:, 0]
    lines += ["mlx_e8m0 %d %08x" % (c, int(e8.view(np.uint32)[c])) for c in range(256)]
    with open(os.path.join(out, "minifloat_tables.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")


def write_convert_cases(out):
    """f32 bit patterns -> f16 bits (numpy) and bf16 bits (ml_dtypes), round to nearest even."""
    rng = np.random.default_rng(12345)
    pats = set()
    # Every f16 and bf16 rounding boundary region: around each exponent, halfway points.
    for e in range(0, 256):
        for m in (0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x3000, 0x7FFF, 0x8000,
                  0x8001, 0x18000, 0x7FFFFF, 0x7FE000, 0x7FF000, 0x7FEFFF, 0x400000, 0x3FF000,
                  0x3FE000, 0x3FF001):
            for sgn in (0, 0x80000000):
                pats.add(sgn | (e << 23) | m)
    pats.update(int(v) for v in rng.integers(0, 2 ** 32, size=1500, dtype=np.uint64))
    # Random values in the f16 subnormal / normal range.
    for v in rng.uniform(-70000.0, 70000.0, size=300).astype(np.float32):
        pats.add(int(np.array([v], dtype=np.float32).view(np.uint32)[0]))
    for v in (rng.uniform(-1.0, 1.0, size=400) * 2.0 ** -14).astype(np.float32):
        pats.add(int(np.array([v], dtype=np.float32).view(np.uint32)[0]))
    pats = sorted(pats)
    f = np.array(pats, dtype=np.uint32).view(np.float32)
    with np.errstate(all="ignore"):
        h = f.astype(np.float16).view(np.uint16)
        b = f.astype(ml_dtypes.bfloat16).view(np.uint16)
    lines = ["# f32_bits f16_bits(numpy %s) bf16_bits(ml_dtypes %s); NaN rows: only NaN-ness"
             % (np.__version__, ml_dtypes.__version__)]
    lines += ["%08x %04x %04x" % (p, int(hh), int(bb)) for p, hh, bb in zip(pats, h, b)]
    with open(os.path.join(out, "convert_cases.txt"), "w") as fh:
        fh.write("\n".join(lines) + "\n")


def generate(out):
    if os.path.isdir(out):
        for sub in ("mlx", "mlx_expected"):
            shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    os.makedirs(out, exist_ok=True)
    mx.set_default_device(mx.cpu)
    w = Writer(out)
    rng = np.random.default_rng(20260822)
    gen_affine(w, rng)
    gen_affine_extremes(w)
    gen_fp(w, rng)
    gen_code_tables(w)
    w.finish(special_preset())
    write_tables(out)
    write_convert_cases(out)


def same_tree(a, b):
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.diff_files or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(same_tree(os.path.join(a, d), os.path.join(b, d)) for d in cmp.common_dirs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true",
                    help="regenerate into a temp dir and compare with --out")
    ap.add_argument("--run-test", metavar="BINARY",
                    help="generate into a temp dir and run BINARY against it")
    args = ap.parse_args()
    if IMPORT_ERROR is not None:
        print("gen_mlx_fixtures: needs mlx (+ mlx-cpu on Linux) and ml_dtypes: %s"
              % IMPORT_ERROR)
        return 77 if args.run_test else 2
    if args.run_test:
        with tempfile.TemporaryDirectory() as tmp:
            generate(tmp)
            env = dict(os.environ, TBLOB_DEQUANT_DATA_DIR=tmp)
            print("gen_mlx_fixtures: live fixtures from mlx %s in %s" % (mx.__version__, tmp))
            sys.stdout.flush()
            return subprocess.call([args.run_test], env=env)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            generate(tmp)
            if not same_tree(tmp, args.out):
                print("gen_mlx_fixtures: %s differs from a fresh generation" % args.out)
                return 1
            print("gen_mlx_fixtures: fixtures up to date")
            return 0
    generate(args.out)
    total = 0
    for root, _, files in os.walk(args.out):
        total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    print("gen_mlx_fixtures: wrote %s (%d bytes)" % (args.out, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
