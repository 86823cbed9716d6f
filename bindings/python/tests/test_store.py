"""Ollama stores: listing, models as safe_open objects (each tensor equal to the blob read by
safetensors), verification with progress, damage and cancellation."""
import json
import os
import shutil
from pathlib import Path

import pytest
from safetensors import safe_open as st_open

import tensorblob
from conftest import REPO, needs

pytestmark = needs("ollama")

STORE = REPO / "examples" / "ollama-store" / "store"


@pytest.fixture
def store_copy(tmp_path):
    dst = tmp_path / "store"
    shutil.copytree(STORE, dst)
    return dst


def manifest_layers(root: Path, model: str, tag: str):
    m = json.loads((root / "manifests" / "registry.ollama.ai" / "library" / model / tag).read_text())
    return m["layers"]


def test_models_lists_every_manifest():
    s = tensorblob.open_store(STORE)
    tags = sorted(p.name for p in (STORE / "manifests" / "registry.ollama.ai" / "library" /
                                   "tiny-llama").iterdir())
    assert s.models() == [f"tiny-llama:{t}" for t in tags]
    assert all(e.status is None and len(e.manifest_id) == 64 for e in s.entries())


def test_open_model_matches_its_blobs():
    s = tensorblob.open_store(STORE)
    blobs = [STORE / "blobs" / l["digest"].replace(":", "-")
             for l in manifest_layers(STORE, "tiny-llama", "latest")
             if l["mediaType"] == "application/vnd.ollama.image.tensor"]
    assert blobs
    want = {}
    for b in blobs:
        r = st_open(str(b), framework="np")
        for k in r.keys():
            want[k] = r.get_tensor(k)
    with s.open("tiny-llama:latest") as m:
        assert isinstance(m, tensorblob.SafeOpen)
        assert m.format == "ollama"
        assert sorted(m.keys()) == sorted(want)
        for k, v in want.items():
            got = m.get_tensor(k)
            assert got.dtype == v.dtype and got.shape == v.shape and got.tobytes() == v.tobytes()
        md = m.metadata()
        assert md["ollama.name"].endswith("tiny-llama:latest")


def test_verify_clean_store_reports_progress():
    s = tensorblob.open_store(STORE)
    seen = []
    r = s.verify(progress=seen.append, threads=1)
    assert r.ok and r.error is None and not r.problems
    nblobs = len(list((STORE / "blobs").iterdir()))
    assert r.blobs == nblobs
    assert r.bytes_hashed == sum(p.stat().st_size for p in (STORE / "blobs").iterdir())
    assert seen and seen[-1].blobs_done == seen[-1].blobs_total == nblobs
    assert [p.bytes_done for p in seen] == sorted(p.bytes_done for p in seen)


def test_verify_finds_a_flipped_byte(store_copy):
    blob = max((store_copy / "blobs").iterdir(), key=lambda p: p.stat().st_size)
    data = bytearray(blob.read_bytes())
    data[len(data) // 2] ^= 0x40
    blob.write_bytes(bytes(data))
    r = tensorblob.open_store(store_copy).verify()
    assert not r.ok and r.blobs_bad == 1
    assert isinstance(r.error, tensorblob.DigestError)
    assert r.error.status == "TBLOB_E_DIGEST_MISMATCH"
    (p,) = r.problems
    assert p.status == "TBLOB_E_DIGEST_MISMATCH" and Path(p.path).name == blob.name
    assert p.digest == "sha256:" + blob.name[len("sha256-"):]
    assert p.actual_digest != p.digest


def test_verify_truncated_and_missing_blobs(store_copy):
    blobs = sorted((store_copy / "blobs").iterdir(), key=lambda p: p.stat().st_size)
    os.truncate(blobs[-1], 3)
    blobs[-2].unlink()
    r = tensorblob.open_store(store_copy).verify()
    got = {Path(p.path).name: p.status for p in r.problems}
    assert got[blobs[-1].name] == "TBLOB_E_OLLAMA_BLOB_SIZE"
    assert got[blobs[-2].name] == "TBLOB_E_OLLAMA_BLOB_MISSING"
    assert not r.ok


def test_progress_that_raises_cancels_and_propagates():
    calls = []

    class Stop(Exception):
        pass

    def progress(p):
        calls.append(p)
        raise Stop("enough")

    s = tensorblob.open_store(STORE)
    with pytest.raises(Stop):
        s.verify(progress=progress, threads=1)
    assert len(calls) == 1  # cancelled at once, never called again


def test_missing_model_and_non_store(tmp_path):
    s = tensorblob.open_store(STORE)
    with pytest.raises(tensorblob.NotFoundError) as ei:
        s.open("nope:latest")
    assert ei.value.status == "TBLOB_E_OLLAMA_MODEL_NOT_FOUND"
    with pytest.raises(tensorblob.TensorblobIOError) as ei:
        tensorblob.open_store(tmp_path)
    assert ei.value.status == "TBLOB_E_OLLAMA_NOT_A_STORE"


def test_store_model_through_safe_open_path():
    with tensorblob.safe_open(STORE / "tiny-llama:latest") as f:
        assert f.format == "ollama"
        with tensorblob.open_store(STORE).open("tiny-llama:latest") as g:
            assert f.keys() == g.keys()
