"""dequantize() against the fixtures' expected values: MLX (written by MLX), the companion
layouts (Ollama, mlx-community, HF block FP8), GGML blocks in real UQFF exports (gguf's
reference dequantization, hashed), SLM1 (hand arithmetic from the golden generator)."""
import ctypes
import importlib.util
import threading
from concurrent.futures import ThreadPoolExecutor

import ml_dtypes
import numpy as np
import pytest
from safetensors import safe_open as st_open

import tensorblob
from tensorblob import _ffi
from conftest import REPO, fnv1a64, needs, rel

DATA = REPO / "tests" / "data"


def mlx_amax_cases():
    """Fixtures whose nvfp4 global scale follows MLX's amax convention: a model decodes
    Ollama's multiplier convention, so only tblob_quant_dequantize with a changed descriptor
    reproduces them (the C tests do that)."""
    out = set()
    for ln in (DATA / "dequant" / "manifest.txt").read_text().splitlines():
        f = ln.split()
        if f and not ln.startswith("#") and f[-1] == "mlx_amax":
            out.add(f[0] + ".safetensors")
    return out


def fixture_pairs():
    pairs = []
    skip = mlx_amax_cases()
    assert skip
    for p in sorted((DATA / "dequant" / "mlx").glob("*.safetensors")):
        if p.name not in skip:
            pairs.append((p, DATA / "dequant" / "mlx_expected" / p.name))
    comp = DATA / "companions"
    for p in sorted(comp.glob("ollama_*.safetensors")):
        pairs.append((p, comp / ("expected_" + p.name)))
    for d in sorted(x for x in comp.iterdir() if x.is_dir()):
        pairs.append((d / "model.safetensors", d / "expected.safetensors"))
    return pairs


PAIRS = fixture_pairs()


def bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


def same_values(got: np.ndarray, want: np.ndarray, nan_must_match: bool, what: str) -> None:
    """Bit for bit, except where the oracle holds NaN: there ours must be NaN too (any
    payload: the library writes the canonical quiet NaN), or anything when the oracle's
    special-value preset differs from the model's (the MLX fixtures: mlx 0.32.4 decodes E4M3
    0x7F as NaN, Ollama's MLX as 480)."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    g32 = np.asarray(got, dtype=np.float32)
    w32 = np.asarray(want, dtype=np.float32)
    wnan = np.isnan(w32)
    u = np.uint32 if got.dtype.itemsize == 4 else np.uint16
    same = np.ascontiguousarray(got).view(u) == np.ascontiguousarray(want).view(u)
    ok = np.where(wnan, np.isnan(g32) | (not nan_must_match), same)
    bad = np.flatnonzero(~ok.ravel())
    assert bad.size == 0, f"{what}: {bad.size} elements differ, first at {bad[:5]}"


def test_fixture_set_is_complete():
    assert len(PAIRS) >= 79 + 3 + 4  # 80 MLX cases less the amax one
    assert all(e.exists() for _, e in PAIRS)


@pytest.mark.parametrize("model,expected", PAIRS, ids=lambda p: rel(p))
def test_dequantize_matches_fixture(model, expected):
    ref = st_open(str(expected), framework="np")
    names = [k for k in ref.keys() if not k.endswith((".bf16", ".f16"))]
    assert names
    nan_must_match = "mlx_expected" not in str(expected)
    with tensorblob.safe_open(model) as f:
        for w in names:
            want = ref.get_tensor(w)
            qi = f.quant_info(w)
            assert qi.quantized and qi.status is None, (w, qi)
            assert qi.shape == want.shape
            got = f.dequantize(w, dtype=np.float32)
            assert got.dtype == np.float32 and got.shape == want.shape
            same_values(got, want, nan_must_match, w)
            for threads in (0, 3):  # the multi-threaded call, against the same oracle
                same_values(f.dequantize(w, dtype=np.float32, threads=threads), want,
                            nan_must_match, f"{w} on {threads} threads")
            for stores in ("stream", "cache"):  # how it is stored never changes the values
                same_values(f.dequantize(w, dtype=np.float32, threads=2, stores=stores), want,
                            nan_must_match, f"{w} stores {stores}")
                same_values(f.dequantize(w, dtype=np.float32, stores=stores), want,
                            nan_must_match, f"{w} stores {stores} on one thread")
            for suffix, dt in ((".f16", np.float16), (".bf16", ml_dtypes.bfloat16)):
                if w + suffix in ref.keys():
                    g = f.dequantize(w, dtype=dt)
                    assert g.dtype == np.dtype(dt)
                    same_values(g, ref.get_tensor(w + suffix), nan_must_match, w + suffix)
            rows = want.reshape(-1, want.shape[-1])
            if rows.shape[0] >= 3:
                part = f.dequantize(w, rows=(1, 3))
                assert bits(part) == bits(got.reshape(rows.shape)[1:3])


def test_quant_info_names_the_companions():
    with tensorblob.safe_open(DATA / "dequant" / "mlx" / "affine_b4_g64_bf16.safetensors") as f:
        qi = f.quant_info("w")
        assert (qi.scheme, qi.bits, qi.group_size, qi.source) == ("mlx-affine", 4, 64, "ollama")
        assert (qi.scale, qi.bias, qi.scale_dtype) == ("w.scale", "w.bias", "BF16")
        c = f.quant_info("w.scale")
        assert c.companion and not c.quantized and c.weight == "w"


UQFF_LINES = [ln.split() for ln in (DATA / "uqff" / "real" / "expected_ggml.txt").read_text()
              .splitlines() if ln.strip()]
UQFF_EXPORTS = sorted({ln[0] for ln in UQFF_LINES})


@needs("uqff")
@pytest.mark.parametrize("export", UQFF_EXPORTS)
def test_uqff_ggml_layers_match_gguf_reference(export):
    lines = [ln for ln in UQFF_LINES if ln[0] == export]
    with tensorblob.safe_open(DATA / "uqff" / "real" / export) as f:
        assert f.format == "uqff"
        for _, name, tid, n, h in lines:
            qi = f.quant_info(name)
            assert qi.extra["ggml_type"] == int(tid), name
            y = f.dequantize(name)
            assert y.size == int(n), name
            assert f"{fnv1a64(y.astype('<f4').tobytes()):016x}" == h, name


def load_golden():
    spec = importlib.util.spec_from_file_location("gen_golden", DATA / "slm1" / "gen_golden.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def slm1_expected(g, dtype, dims, values, block):
    """x = f32(q) * f32(scale), one f32 multiply (docs/slm1.md section 6)."""
    cols = dims[-1]
    rows = len(values) // cols
    out = np.empty(len(values), dtype=np.float32)
    for r in range(rows):
        row = [g.f32(v) for v in values[r * cols:(r + 1) * cols]]
        if dtype == g.DTYPE_F32:
            out[r * cols:(r + 1) * cols] = row
            continue
        blk, qmax = (cols, 127) if dtype == g.DTYPE_Q8_0 else (block, 7)
        for b0 in range(0, cols, blk):
            part = row[b0:b0 + blk]
            s = g.quant_scale(max(abs(v) for v in part), qmax)
            q = g.quant_values(part, s, qmax)
            out[r * cols + b0:r * cols + b0 + blk] = np.float32(q) * np.float32(s)
    return out.reshape(dims)


@needs("slm1")
def test_slm1_dequantize_matches_hand_arithmetic():
    g = load_golden()
    names = [t[0] for t in g.TINY_TENSORS]
    with tensorblob.safe_open(DATA / "slm1" / "tiny_btok.slm", names=names) as f:
        assert f.format == "slm1"
        assert sorted(f.keys()) == sorted(names)
        for name, dtype, dims, values, block in g.TINY_TENSORS:
            want = slm1_expected(g, dtype, dims, values, block)
            got = f.dequantize(name)
            assert got.shape == tuple(dims)
            assert bits(got) == bits(want), name
            scheme = {g.DTYPE_F32: "F32", g.DTYPE_Q8_0: "slm1-q8_0", g.DTYPE_Q4_0: "slm1-q4_0"}
            assert f.quant_info(name).scheme == scheme[dtype]


@needs("slm1")
def test_slm1_without_names_lists_hashes():
    g = load_golden()
    with tensorblob.safe_open(DATA / "slm1" / "tiny_btok.slm") as f:
        want = sorted(f"fnv1a:{g.fnv1a64(t[0].encode()):016x}" for t in g.TINY_TENSORS)
        assert f.keys() == want


def test_threads_argument_checked():
    model = PAIRS[0][0]
    with tensorblob.safe_open(model) as f:
        name = next(k for k in f.keys() if f.quant_info(k).quantized)
        for bad in (-1, 2**32, 1.5, True, "2"):
            with pytest.raises(ValueError, match="threads"):
                f.dequantize(name, threads=bad)
        for bad in ("Stream", "", None, 1):
            with pytest.raises(ValueError, match="stores"):
                f.dequantize(name, stores=bad)


def test_output_dtype_checked():
    with tensorblob.safe_open(DATA / "dequant" / "mlx" / "affine_b4_g64_bf16.safetensors") as f:
        with pytest.raises(ValueError):
            f.dequantize("w", dtype=np.int8)


def test_integer_tensor_is_not_dequantizable():
    from safetensors.numpy import save
    buf = save({"ids": np.arange(6, dtype=np.int32).reshape(2, 3)})
    with tensorblob.safe_open(buf) as f:
        with pytest.raises(tensorblob.DequantError) as e:
            f.dequantize("ids")
        assert e.value.status == "TBLOB_E_NOT_DEQUANTIZABLE"
        assert e.value.code == -81
        assert f.quant_info("ids").status == "TBLOB_E_NOT_DEQUANTIZABLE"


def test_calls_release_the_gil():
    # ctypes.CDLL drops the GIL around each foreign call; PyDLL would keep it.
    assert type(_ffi.lib) is ctypes.CDLL
    assert not isinstance(_ffi.lib, ctypes.PyDLL)


def test_concurrent_dequantize_is_consistent():
    path = DATA / "companions" / "hf_fp8" / "model.safetensors"
    with tensorblob.safe_open(path) as f:
        name = "model.layers.0.self_attn.q_proj.weight"
        one = bits(f.dequantize(name))
        with ThreadPoolExecutor(4) as ex:
            outs = list(ex.map(lambda _: bits(f.dequantize(name)), range(16)))
    assert all(o == one for o in outs)
    assert threading.active_count() >= 1


GGUF_TYPES = {2: "Q4_0", 3: "Q4_1", 6: "Q5_0", 7: "Q5_1", 8: "Q8_0", 9: "Q8_1", 10: "Q2_K",
              11: "Q3_K", 12: "Q4_K", 13: "Q5_K", 14: "Q6_K", 15: "Q8_K"}


@needs("uqff")
@pytest.mark.parametrize("export", [e for e in UQFF_EXPORTS if e.startswith("dense/")])
def test_uqff_ggml_layers_match_the_gguf_package(export):
    gguf = pytest.importorskip("gguf")
    from gguf import quants
    checked = 0
    with tensorblob.safe_open(DATA / "uqff" / "real" / export) as f:
        for name in f.keys():
            qi = f.quant_info(name)
            t = qi.extra.get("ggml_type")
            if qi.extra.get("family") != "gguf" or t not in GGUF_TYPES:
                continue
            qt = getattr(gguf.GGMLQuantizationType, GGUF_TYPES[t])
            raw = f.get_tensor(name)
            assert raw.dtype == np.uint8 and raw.ndim == 1
            try:
                want = quants.dequantize(np.asarray(raw), qt)
            except NotImplementedError:  # gguf 0.19 decodes neither Q8_1 nor Q8_K
                continue
            want = want.astype(np.float32).reshape(qi.shape)
            got = f.dequantize(name)
            assert bits(got) == bits(want), name
            checked += 1
    if checked == 0:
        pytest.skip(f"gguf cannot decode the types of {export}")
