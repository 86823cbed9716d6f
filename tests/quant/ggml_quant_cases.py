"""Seeded inputs for the GGML quantization checks (the oracle test and the fixtures): random
rows of several shapes and scales plus the edge cases, each a (name, rows x cols float32 array)
with cols a multiple of 256 (every block size), and the importance-weight vectors."""
import numpy as np


def _f32(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def cases(seed, cols=256, rows=2, random_sets=4):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(random_sets):
        out.append((f"normal{i}", rng.standard_normal((rows, cols)).astype(np.float32)))
        out.append((f"uniform{i}", rng.uniform(-1, 1, (rows, cols)).astype(np.float32) * np.float32(10.0 ** rng.integers(-3, 4))))
        # Wide dynamic range: log-normal magnitudes, random signs.
        mag = np.exp(rng.normal(0, 3, (rows, cols)))
        out.append((f"lognormal{i}", (mag * rng.choice([-1, 1], (rows, cols))).astype(np.float32)))
    # Rows that do not cross zero, one outlier per block, positive / negative only.
    out.append(("positive", np.abs(rng.standard_normal((rows, cols))).astype(np.float32) + np.float32(0.5)))
    out.append(("negative", -np.abs(rng.standard_normal((rows, cols))).astype(np.float32) - np.float32(0.25)))
    x = (rng.standard_normal((rows, cols)) * 0.01).astype(np.float32)
    x[:, ::32] = np.float32(5.0)
    out.append(("outliers", x))
    # Equal values (positive, negative, alternating blocks).
    out.append(("equal_pos", np.full((rows, cols), 0.75, np.float32)))
    out.append(("equal_neg", np.full((rows, cols), -3.0, np.float32)))
    x = np.full((rows, cols), 2.0, np.float32)
    x[:, 32:64] = -2.0
    x[:, 128:160] = 1e-3
    out.append(("equal_blocks", x))
    # Zeros and signed zeros.
    out.append(("zeros", np.zeros((rows, cols), np.float32)))
    out.append(("neg_zeros", np.full((rows, cols), -0.0, np.float32)))
    x = np.zeros((rows, cols), np.float32)
    x[:, 1::2] = -0.0
    x[:, 64:96] = rng.standard_normal((rows, 32)).astype(np.float32)
    out.append(("signed_zeros", x))
    # Subnormals: only subnormals, subnormals with zeros, smallest normals, tiny normals.
    sub = _f32(rng.integers(1, 0x007FFFFF, (rows, cols), dtype=np.uint32))
    out.append(("subnormal", (sub * rng.choice([-1, 1], (rows, cols))).astype(np.float32)))
    x = sub.copy()
    x[:, ::3] = 0.0
    x[:, 0] = _f32([0x00000001])[0]
    out.append(("subnormal_zero", x))
    out.append(("min_normal", (rng.uniform(1, 2, (rows, cols)) * 1.1754944e-38).astype(np.float32)))
    out.append(("tiny", (rng.standard_normal((rows, cols)) * 1e-30).astype(np.float32)))
    out.append(("small", (rng.standard_normal((rows, cols)) * 1e-8).astype(np.float32)))
    # Large values: f16 scale overflow, near the f32 maximum, huge with small neighbours.
    out.append(("big_f16", (rng.standard_normal((rows, cols)) * 1e7).astype(np.float32)))
    out.append(("huge", (rng.uniform(-1, 1, (rows, cols)) * 3.4e38).astype(np.float32)))
    x = (rng.standard_normal((rows, cols))).astype(np.float32)
    x[:, 7::50] = np.float32(3.0e38)
    x[:, 9::70] = np.float32(-1.0e30)
    out.append(("huge_mixed", x))
    out.append(("max", np.full((rows, cols), np.finfo(np.float32).max, np.float32)))
    out.append(("sq_overflow", (rng.standard_normal((rows, cols)) * 1e20).astype(np.float32)))
    # Exact halves and quarters (rounding ties), and powers of two (MXFP4's exponent).
    out.append(("ties", (rng.integers(-16, 17, (rows, cols)) * 0.5).astype(np.float32)))
    out.append(("pow2", (2.0 ** rng.integers(-20, 20, (rows, cols)) * rng.choice([-1, 1], (rows, cols))).astype(np.float32)))
    x = (2.0 ** rng.integers(-10, 10, (rows, cols))).astype(np.float32)
    x = (x.view(np.uint32) - rng.integers(0, 3, (rows, cols)).astype(np.uint32)).view(np.float32)
    out.append(("below_pow2", x))
    return out


def importance(seed, cols=256):
    rng = np.random.default_rng(seed + 1)
    w = rng.uniform(0, 4, cols).astype(np.float32)
    wz = w.copy()
    wz[::3] = 0.0
    wz[100:140] = 0.0
    return [
        ("w_uniform", w),
        ("w_zeros", wz),
        ("w_allzero", np.zeros(cols, np.float32)),
        ("w_wide", np.exp(rng.normal(0, 4, cols)).astype(np.float32)),
    ]
