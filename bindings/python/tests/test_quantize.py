"""tensorblob.quantize against mx.quantize (mlx 0.32.4, CPU) and tensorblob.ggml_quantize
against gguf-py's gguf.quants.quantize, byte for byte, shapes and dtypes included."""
import ml_dtypes
import numpy as np
import pytest

import tensorblob

mx = pytest.importorskip("mlx.core")  # installed by scripts/install-deps.sh (mlx[cpu]==0.32.4)
gguf = pytest.importorskip("gguf")


def test_oracle_version():
    assert mx.__version__ == "0.32.4"


def data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape).astype(np.float32) * rng.uniform(0.01, 10)
    a[..., :3] = 0.0  # a group with zeros (and -0 below)
    a[..., 3] = -0.0
    return a.astype(dtype)


def to_mx(a):
    if a.dtype == ml_dtypes.bfloat16:
        return mx.array(a.view(np.uint16)).view(mx.bfloat16)
    return mx.array(a)


def mx_bytes(x):
    if x.dtype == mx.bfloat16:
        return "bfloat16", tuple(x.shape), np.array(x.view(mx.uint16)).tobytes()
    n = np.array(x)
    return str(n.dtype), n.shape, n.tobytes()


def np_bytes(x):
    return str(np.dtype(x.dtype)), x.shape, x.tobytes()


CASES = [("affine", 4, 64), ("affine", 2, 32), ("affine", 3, 32), ("affine", 5, 128),
         ("affine", 6, 64), ("affine", 8, 32), ("mxfp4", 4, 32), ("mxfp8", 8, 32),
         ("nvfp4", 4, 16)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16],
                         ids=["f32", "f16", "bf16"])
@pytest.mark.parametrize("scheme,bits,group", CASES, ids=lambda c: str(c))
def test_quantize_matches_mlx(scheme, bits, group, dtype):
    for seed, shape in enumerate([(4, 128), (2, 3, 256)]):
        a = data(shape, dtype, seed)
        ours = tensorblob.quantize(a, scheme, bits=bits, group_size=group)
        ref = mx.quantize(to_mx(a), group_size=group, bits=bits, mode=scheme)
        assert len(ours) == len(ref)
        for o, r in zip(ours, ref):
            assert np_bytes(o) == mx_bytes(r)


def test_quantize_defaults_and_mx_input():
    a = data((4, 128), np.float32, 7)
    ours = tensorblob.quantize(to_mx(a))  # an mx.array in, MLX's defaults (affine 4 / 64)
    ref = mx.quantize(to_mx(a))
    assert [np_bytes(o) for o in ours] == [mx_bytes(r) for r in ref]


def test_nvfp4_global_scale_matches_mlx():
    a = data((4, 64), np.float32, 3)
    amax = float(np.abs(a).max())
    ours = tensorblob.quantize(a, "nvfp4", global_scale=amax)
    ref = mx.quantize(mx.array(a), mode="nvfp4", global_scale=mx.array(amax, dtype=mx.float32))
    assert [np_bytes(o) for o in ours] == [mx_bytes(r) for r in ref[:2]]


def test_quantize_refuses_nan():
    a = data((2, 64), np.float32, 1)
    a[1, 5] = np.nan
    with pytest.raises(tensorblob.TensorblobError) as ei:
        tensorblob.quantize(a, "affine", bits=4, group_size=64)
    assert ei.value.status == "TBLOB_E_QUANT_NONFINITE"  # the status the header defines for it


@pytest.mark.parametrize("qtype", ["Q8_0", "Q4_0"])
@pytest.mark.parametrize("shape", [(1, 32), (5, 96), (2, 3, 64)], ids=str)
def test_ggml_quantize_matches_gguf(qtype, shape):
    a = data(shape, np.float32, sum(shape))
    t = gguf.GGMLQuantizationType[qtype]
    want = gguf.quants.quantize(a, t)
    for spelled in (qtype, int(t), t):
        got = tensorblob.ggml_quantize(a, spelled)
        assert np_bytes(got) == np_bytes(want)


def test_ggml_quantize_refuses_partial_block():
    with pytest.raises(tensorblob.TensorblobError):
        tensorblob.ggml_quantize(np.zeros((2, 33), np.float32), "Q8_0")


@pytest.mark.parametrize("sdt,mdt", [(np.float16, mx.float16), (ml_dtypes.bfloat16, mx.bfloat16)],
                         ids=["f16", "bf16"])
def test_affine_other_scale_dtype_is_mlx_cast_once(sdt, mdt):
    # docs/quantize.md: another scale dtype is mx.quantize's f32 scales and biases cast once.
    a = data((4, 128), np.float32, 11)
    w, s, b = tensorblob.quantize(a, "affine", bits=4, group_size=64, scale_dtype=sdt)
    rw, rs, rb = mx.quantize(mx.array(a), group_size=64, bits=4)
    assert np_bytes(w) == mx_bytes(rw)
    assert np_bytes(s) == mx_bytes(rs.astype(mdt))
    assert np_bytes(b) == mx_bytes(rb.astype(mdt))


def test_threads_do_not_change_bytes():
    a = data((64, 256), np.float32, 5)
    one = tensorblob.quantize(a, "affine", bits=4, group_size=64, threads=1)
    four = tensorblob.quantize(a, "affine", bits=4, group_size=64, threads=4)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(one, four))
    assert (tensorblob.ggml_quantize(a, "Q4_0", threads=1).tobytes()
            == tensorblob.ggml_quantize(a, "Q4_0", threads=4).tobytes())
