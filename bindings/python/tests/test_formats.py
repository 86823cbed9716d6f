"""Sharded checkpoints and UQFF sets open as one object; the package's public surface is typed
and documented."""
import inspect
from pathlib import Path

import numpy as np
from safetensors import safe_open as st_open

import tensorblob
from conftest import REPO, needs

SHARDED = REPO / "examples" / "sharded"


def test_sharded_directory_and_index_equal_the_shards():
    want, meta = {}, {}
    for shard in sorted(SHARDED.glob("*.safetensors")):
        r = st_open(str(shard), framework="np")
        for k, v in (r.metadata() or {}).items():
            meta.setdefault(k, v)
        for k in r.keys():
            want[k] = r.get_tensor(k)
    for path in (SHARDED, SHARDED / "model.safetensors.index.json"):
        with tensorblob.safe_open(path) as f:
            assert f.format == "safetensors-sharded"
            assert f.keys() == sorted(want)
            assert (f.metadata() or {}) == meta
            assert len(f.files) == 2
            for k, v in want.items():
                g = f.get_tensor(k)
                assert g.dtype == v.dtype and g.shape == v.shape and g.tobytes() == v.tobytes()


@needs("uqff")
def test_uqff_directory_lists_layers_with_families():
    d = REPO / "tests" / "data" / "uqff" / "real" / "dense" / "q4k"
    with tensorblob.safe_open(d) as f:
        assert f.format == "uqff"
        ks = f.keys()
        assert "model.layers.0.self_attn.q_proj.weight" in ks
        qi = f.quant_info("model.layers.0.self_attn.q_proj.weight")
        assert qi.scheme == "q4k" and qi.extra["family"] == "gguf"
        y = f.dequantize("model.layers.0.self_attn.q_proj.weight")
        assert y.dtype == np.float32 and y.shape == tuple(qi.shape)


def test_py_typed_and_docstrings():
    pkg = Path(tensorblob.__file__).parent
    assert (pkg / "py.typed").exists()
    for name in tensorblob.__all__:
        obj = getattr(tensorblob, name)
        if name.startswith("__"):
            continue
        assert inspect.getdoc(obj), name
        if inspect.isclass(obj):
            for m, v in vars(obj).items():
                if not m.startswith("_") and callable(v):
                    assert inspect.getdoc(v), f"{name}.{m}"
        if inspect.isfunction(obj):
            assert obj.__annotations__, name


def test_library_loaded_from_environment():
    import os
    env = os.environ.get("TENSORBLOB_LIBRARY")
    if env:
        assert tensorblob.library_path().startswith(env.rstrip("/"))
    assert tensorblob.library_version().count(".") == 2
    assert tensorblob.kernel() in ("scalar", "avx2", "avx512", "neon")


def test_package_passes_mypy_strict():
    api = __import__("pytest").importorskip("mypy.api")
    src = Path(tensorblob.__file__).parent
    out, err, rc = api.run(["--strict", "--no-incremental", str(src)])
    assert rc == 0, out + err
