"""Every tracked *.safetensors file against the Python safetensors package (the oracle):
what it accepts, tensorblob reads identically; what it rejects, tensorblob rejects."""
import json
import struct

import ml_dtypes
import numpy as np
import pytest
import safetensors
from safetensors import safe_open as st_open

import tensorblob
from conftest import rel, tracked

FILES = tracked("*.safetensors")
# docs/safetensors.md, "stricter than the reference": the statuses tensorblob may give for a
# file the reference accepts.
STRICTER = {"TBLOB_E_DUPLICATE_NAME", "TBLOB_E_METADATA", "TBLOB_E_SCHEMA"}


def test_corpus_is_there():
    assert len(FILES) >= 100, "git ls-files found too few safetensors files"


# What the numpy framework of safetensors cannot build (its F8 path names numpy types that do
# not exist): the array read straight from the file's header, typed as ml_dtypes.
ML_DTYPES = {"F8_E4M3": ml_dtypes.float8_e4m3fn, "F8_E5M2": ml_dtypes.float8_e5m2,
             "F8_E8M0": ml_dtypes.float8_e8m0fnu, "F8_E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
             "F8_E5M2FNUZ": ml_dtypes.float8_e5m2fnuz, "BF16": ml_dtypes.bfloat16}


def raw_tensor(path, name):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    entry = json.loads(data[8:8 + n])[name]
    b, e = entry["data_offsets"]
    return np.frombuffer(data[8 + n + b:8 + n + e], dtype=ML_DTYPES[entry["dtype"]]).reshape(
        entry["shape"])


def oracle(path):
    try:
        return st_open(str(path), framework="np"), None
    except Exception as e:  # the reference's refusal, whatever its type
        return None, e


def same_bits(a: np.ndarray, b: np.ndarray) -> None:
    assert a.dtype == b.dtype
    assert a.shape == b.shape
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("path", FILES, ids=rel)
def test_file_matches_reference(path):
    ref, refused = oracle(path)
    if ref is None:
        with pytest.raises(tensorblob.TensorblobError):
            tensorblob.safe_open(path, framework="numpy")
        return
    try:
        f = tensorblob.safe_open(path, framework="numpy")
    except tensorblob.TensorblobError as e:
        assert e.status in STRICTER, f"safetensors accepts {rel(path)}, tensorblob: {e}"
        return
    with f:
        assert f.keys() == ref.keys()
        assert f.offset_keys() == ref.offset_keys()
        assert f.metadata() == ref.metadata()
        for k in ref.keys():
            rs, ts = ref.get_slice(k), f.get_slice(k)
            assert ts.get_dtype() == rs.get_dtype(), k
            assert ts.get_shape() == rs.get_shape(), k
            try:
                want = ref.get_tensor(k)
            except Exception:
                if rs.get_dtype() in ML_DTYPES:
                    same_bits(f.get_tensor(k), raw_tensor(path, k))
                else:  # a dtype numpy cannot hold (F4, F6): we refuse too
                    with pytest.raises(tensorblob.TensorblobError):
                        f.get_tensor(k)
                continue
            got = f.get_tensor(k)
            same_bits(got, want)
            assert not got.flags.writeable
            shape = rs.get_shape()
            if shape and shape[0] > 0:
                n = shape[0]
                for sl in (slice(0, 1), slice(1, None), slice(0, n), slice(n // 2, n), -1, 0):
                    try:
                        want_sl = rs[sl]
                    except Exception as e:  # noqa: BLE001  (e.g. [1:] of one row)
                        with pytest.raises(type(e)):  # refused the same way
                            ts[sl]
                        continue
                    same_bits(ts[sl], want_sl)


def test_every_accepted_file_was_compared():
    # Guard against an oracle that refuses everything (which would make the test above vacuous).
    accepted = [p for p in FILES if oracle(p)[0] is not None]
    assert len(accepted) >= 100


def test_safetensors_version_recorded():
    assert safetensors.__version__
