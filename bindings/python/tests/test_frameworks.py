"""framework= of safe_open: "mlx" against safetensors' own framework="mlx" output, bit for bit,
for every tracked safetensors file under examples/ and tests/data; "np"/"numpy" alike; torch
and jax raise an ImportError naming the package when it is not installed."""
import importlib.util

import numpy as np
import pytest
from safetensors import safe_open as st_open

import tensorblob
from conftest import rel, tracked

mx = pytest.importorskip("mlx.core")  # installed by scripts/install-deps.sh (mlx[cpu])

FILES = [p for p in tracked("*.safetensors")
         if rel(p).startswith(("examples/", "tests/data/"))]


def mlx_bits(a):
    """dtype name, shape and bytes of an mx.array (through an unsigned view: numpy cannot
    hold bfloat16)."""
    a = mx.array(a)
    view = {1: mx.uint8, 2: mx.uint16, 4: mx.uint32, 8: mx.uint64}[a.dtype.size]
    if a.dtype == mx.bool_:
        view = mx.uint8
    return str(a.dtype), tuple(a.shape), np.array(a.view(view) if a.dtype != mx.bool_
                                                  else a.astype(mx.uint8)).tobytes()


def test_corpus_is_there():
    assert len(FILES) >= 50


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_mlx_matches_safetensors(path):
    try:
        with st_open(str(path), framework="mlx") as ref:
            ref.keys()
    except Exception:  # noqa: BLE001  (rejected files: test_safetensors_parity covers them)
        return
    with st_open(str(path), framework="mlx") as ref, \
            tensorblob.safe_open(str(path), framework="mlx") as f:
        assert sorted(f.keys()) == sorted(ref.keys())
        for k in ref.keys():
            try:
                want = ref.get_tensor(k)
            except Exception:  # noqa: BLE001  (dtypes safetensors' mlx path cannot build)
                continue
            assert mlx_bits(f.get_tensor(k)) == mlx_bits(want), k


def test_mlx_compared_enough():
    # The comparison above must not be vacuous: count the tensors safetensors' mlx path builds.
    n = 0
    for p in FILES:
        try:
            with st_open(str(p), framework="mlx") as ref:
                for k in ref.keys():
                    try:
                        ref.get_tensor(k)
                        n += 1
                    except Exception:  # noqa: BLE001
                        pass
        except Exception:  # noqa: BLE001
            pass
    assert n >= 200


def test_mlx_bfloat16_is_mlx_bfloat16(tmp_path):
    import ml_dtypes
    from safetensors.numpy import save_file
    a = (np.arange(12, dtype=np.float32) / 7).astype(ml_dtypes.bfloat16).reshape(3, 4)
    p = str(tmp_path / "bf.safetensors")
    save_file({"w": a}, p)
    with tensorblob.safe_open(p, framework="mlx") as f:
        got = f.get_tensor("w")
    assert got.dtype == mx.bfloat16
    assert np.array(got.view(mx.uint16)).tobytes() == a.view(np.uint16).tobytes()


@pytest.mark.parametrize("fw", ["mlx", "np", "numpy"])
def test_slice_and_get_tensors(fw, tmp_path):
    from safetensors.numpy import save_file
    p = str(tmp_path / "t.safetensors")
    save_file({"a": np.arange(30, dtype=np.float32).reshape(10, 3)}, p)
    with st_open(p, framework=fw) as ref, tensorblob.safe_open(p, framework=fw) as f:
        assert mlx_bits(f.get_slice("a")[2:5, 1]) == mlx_bits(ref.get_slice("a")[2:5, 1])
        assert mlx_bits(f.get_tensors()["a"]) == mlx_bits(ref.get_tensor("a"))


@pytest.mark.parametrize("fw,package", [("pt", "torch"), ("torch", "torch"),
                                        ("jax", "jax"), ("flax", "jax")])
def test_missing_framework_names_package(fw, package, tmp_path):
    from safetensors.numpy import save_file
    p = str(tmp_path / "t.safetensors")
    save_file({"a": np.arange(6, dtype=np.float32)}, p)
    if importlib.util.find_spec(package) is not None:
        with tensorblob.safe_open(p, framework=fw) as f:
            assert np.asarray(f.get_tensor("a")).tobytes() == np.arange(6, dtype=np.float32).tobytes()
        return
    with pytest.raises(ImportError, match=package):
        tensorblob.safe_open(p, framework=fw)
