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


def test_names_escaped_and_non_ascii(tmp_path):
    # Names read straight from the mapped header (plain, raw UTF-8) and from the library's
    # arena (JSON escapes) in one file; a sharded copy exercises the per-file path.
    import json
    import struct
    from safetensors import safe_open as st_open2
    header = ('{"plain":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
              '"caf\u00e9":{"dtype":"U8","shape":[1],"data_offsets":[1,2]},'
              '"\\u00e9t\\u00e9":{"dtype":"U8","shape":[1],"data_offsets":[2,3]},'
              '"z\\"q":{"dtype":"U8","shape":[1],"data_offsets":[3,4]}}').encode()
    path = tmp_path / "names.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"abcd")
    ref = st_open2(str(path), framework="np")
    for mode in ("map", "read"):
        with tensorblob.safe_open(path, mode=mode) as f:
            assert f.keys() == ref.keys() == sorted(["plain", "caf\u00e9", "\u00e9t\u00e9", 'z"q'])
            assert f.offset_keys() == ref.offset_keys()
            for k in ref.keys():
                assert f.get_tensor(k).tobytes() == ref.get_tensor(k).tobytes()
    with tensorblob.safe_open(path.read_bytes()) as f:
        assert f.offset_keys() == ref.offset_keys()
    shard_dir = tmp_path / "sharded"
    shard_dir.mkdir()
    (shard_dir / "a.safetensors").write_bytes(path.read_bytes())
    h2 = b'{"other":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}'
    (shard_dir / "b.safetensors").write_bytes(struct.pack("<Q", len(h2)) + h2 + b"xy")
    wm = {k: "a.safetensors" for k in ref.keys()}
    wm["other"] = "b.safetensors"
    (shard_dir / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {}, "weight_map": wm}))
    with tensorblob.safe_open(shard_dir) as f:
        assert f.keys() == sorted(wm)
        assert f.get_tensor("other").tobytes() == b"xy"
