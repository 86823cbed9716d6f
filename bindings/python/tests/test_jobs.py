"""Typed metadata, kernel choice, store import and gc through the Python package, each against
an outside oracle: gguf-py's GGUFReader (typed metadata), the safetensors package (imported
tensors) and the filesystem (gc)."""
import shutil

import numpy as np
import pytest
from safetensors.numpy import load_file

import gguf
import tensorblob
from conftest import REPO

GGUF_DIR = REPO / "tests" / "data" / "gguf"
# gguf-py's value types -> the numpy dtype tensorblob gives them.
NP = {gguf.GGUFValueType.UINT8: np.uint8, gguf.GGUFValueType.INT8: np.int8,
      gguf.GGUFValueType.UINT16: np.uint16, gguf.GGUFValueType.INT16: np.int16,
      gguf.GGUFValueType.UINT32: np.uint32, gguf.GGUFValueType.INT32: np.int32,
      gguf.GGUFValueType.FLOAT32: np.float32, gguf.GGUFValueType.UINT64: np.uint64,
      gguf.GGUFValueType.INT64: np.int64, gguf.GGUFValueType.FLOAT64: np.float64,
      gguf.GGUFValueType.BOOL: np.bool_}


def same_bits(ours, want, dtype):
    a, b = np.asarray(ours), np.asarray(want, dtype=dtype)
    assert a.dtype == np.dtype(dtype), (a.dtype, dtype)
    assert a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("name", ["arrays.gguf", "good_v3.gguf", "quant_types.gguf"])
def test_typed_metadata_matches_gguf_reader(name):
    reader = gguf.GGUFReader(GGUF_DIR / name)
    want = {k: f for k, f in reader.fields.items() if not k.startswith("GGUF.")}
    with tensorblob.safe_open(GGUF_DIR / name) as f:
        got = f.typed_metadata()
        assert list(got) == list(want)
        for key, field in want.items():
            ours, types = got[key], field.types
            assert f.typed_metadata_value(key) is not None
            if types[0] == gguf.GGUFValueType.STRING:
                assert ours == field.contents(), key
            elif types[0] == gguf.GGUFValueType.ARRAY and types[1] == gguf.GGUFValueType.STRING:
                assert ours == field.contents(), key
            elif types[0] == gguf.GGUFValueType.ARRAY:
                same_bits(ours, field.contents(), NP[types[1]])
            elif types[0] == gguf.GGUFValueType.BOOL:
                assert type(ours) is bool and ours == field.contents(), key
            else:
                same_bits(ours, field.contents(), NP[types[0]])
        with pytest.raises(tensorblob.NotFoundError):
            f.typed_metadata_value("no.such.key")


def test_kernel_choice():
    try:
        tensorblob.set_kernel("scalar")
        assert (tensorblob.kernel(), tensorblob.ggml_kernel()) == ("scalar", "scalar")
        with pytest.raises(tensorblob.TensorblobError) as e:
            tensorblob.set_kernel("no-such-set")
        assert e.value.status == "TBLOB_E_KERNEL_UNAVAILABLE"
        assert tensorblob.kernel() == "scalar"  # a refused set changes nothing
    finally:
        tensorblob.set_kernel(None)
    assert f"kernel:{tensorblob.kernel()}" in tensorblob.features()


def test_store_import_and_gc(tmp_path):
    root = tmp_path / "store"
    (root / "manifests").mkdir(parents=True)
    (root / "blobs").mkdir()
    src = REPO / "examples" / "tiny-llama"
    with tensorblob.open_store(root) as s:
        class Stop(Exception):
            pass

        def stop(_p):
            raise Stop

        with pytest.raises(Stop):  # cancelled before the first blob: no manifest
            s.import_model("tiny:1", src, progress=stop)
        assert s.models() == []
        seen = []
        r = s.import_model("tiny:1", src, progress=seen.append)
        last = seen[-1]
        assert (last.tensors_done, last.tensors_total, last.bytes_done) == (21, 21, last.bytes_total)
        assert r.manifest_written and r.tensors == 21 and r.blobs_written > 0, r
        again = s.import_model("tiny:1", src)
        assert not again.manifest_written and again.blobs_written == 0, again

        want = load_file(str(src / "model.safetensors"))
        with s.open("tiny:1") as m:
            assert sorted(m.keys()) == sorted(want)
            for k, v in want.items():
                got = m.get_tensor(k)
                assert got.shape == v.shape and got.tobytes() == v.tobytes(), k

        clean = s.gc(min_age_seconds=0)
        assert clean.entries == [] and clean.manifests == 1 and clean.referenced_blobs > 0
        stray = root / "blobs" / ("sha256-" + "cd" * 32)
        stray.write_bytes(b"not referenced")
        dry = s.gc(min_age_seconds=0)
        assert [(e.kind, e.file_name, e.size, e.removed) for e in dry.entries] == \
            [("unreferenced", stray.name, 14, None)]
        assert stray.exists()
        gone = s.gc(remove=True, min_age_seconds=0)
        assert (gone.removed_files, gone.removed_bytes, gone.entries[0].removed) == (1, 14, True)
        assert not stray.exists()
        with s.open("tiny:1") as m:
            assert len(m.keys()) == 21
    shutil.rmtree(root)
