"""Damaged inputs raise the family's subclass with the status, code and byte offset the
library documents (docs/safetensors.md order); offsets are worked out by hand below."""
import os
import struct

import pytest

import tensorblob
from tensorblob import (DigestError, FormatError, LimitError, MissingFileError, NotFoundError,
                        TensorblobError, TensorblobIOError)
from conftest import REPO, needs


def st(header: str, data: bytes = b"") -> bytes:
    h = header.encode("utf-8") if isinstance(header, str) else header
    return struct.pack("<Q", len(h)) + h + data


ONE_F32 = '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
TWO_F32_8 = '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
DEPTH = ('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1],"x":' + "[" * 130 + "]" * 130
         + "}}")

# (name, bytes, class, status, code, offset). Offsets count from the file's first byte; the
# header starts at byte 8.
CASES = [
    ("three bytes", b"\x01\x02\x03", FormatError, "TBLOB_E_HEADER_TOO_SMALL", -20, 0),
    ("length above the cap", struct.pack("<Q", 100_000_001) + b"{}", FormatError,
     "TBLOB_E_HEADER_TOO_LARGE", -21, 0),
    ("length past the end", struct.pack("<Q", 50) + b"{}", FormatError,
     "TBLOB_E_HEADER_LENGTH", -22, 0),
    # '{' 8, '"' 9, 'a' 10, 0xff 11
    ("bad utf-8", st(b'{"a\xff":1}'), FormatError, "TBLOB_E_UTF8", -23, 11),
    # the second ',' of '..."F32",,' is byte 8 + 21
    ("bad json", st('{"a": {"dtype":"F32",,}}'), FormatError, "TBLOB_E_JSON", -24, 8 + 21),
    # the dtype value string starts at header byte 14
    ("unknown dtype", st('{"a":{"dtype":"F33","shape":[1],"data_offsets":[0,4]}}', b"abcd"),
     FormatError, "TBLOB_E_DTYPE", -26, 8 + 14),
    # the tensor's key "a" at header byte 1
    ("size mismatch", st('{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}', b"abcd"),
     FormatError, "TBLOB_E_TENSOR_SIZE", -30, 8 + 1),
    ("hole before the first tensor",
     st('{"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"xy"),
     FormatError, "TBLOB_E_OFFSETS", -31, 8 + 1),
    # the stray bytes start where the 4 data bytes end
    ("trailing bytes", st(ONE_F32, b"abcdef"), FormatError, "TBLOB_E_TRAILING_BYTES", -32,
     8 + len(ONE_F32) + 4),
    # the data region ends (file end) 4 bytes short
    ("truncated", st(TWO_F32_8, b"abcd"), FormatError, "TBLOB_E_TRUNCATED", -33,
     8 + len(TWO_F32_8) + 4),
    # the second key, "\u0061", decodes to "a"
    ("duplicate after unescaping",
     st('{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'
        '"\\u0061":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}}', b"xy"),
     FormatError, "TBLOB_E_DUPLICATE_NAME", -34, 8 + 53),
    # the value 1 of "k"
    ("metadata not a string", st('{"__metadata__":{"k":1}}'), FormatError, "TBLOB_E_METADATA",
     -35, 8 + 21),
    # the 128th open container: '{' top level, '{' of "a", then the 126th '['
    ("nesting depth", st(DEPTH, b"x"), LimitError, "TBLOB_E_LIMIT_JSON_DEPTH", -54,
     8 + DEPTH.index("[[") + 125),
]


def test_offsets_worked_out_by_hand_hold():
    # Two of the hand offsets, spelled out against the header text.
    assert '{"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},'[53 - 1] == ","
    assert '{"__metadata__":{"k":1}}'[21] == "1"


@pytest.mark.parametrize("name,data,cls,status,code,offset", CASES, ids=[c[0] for c in CASES])
def test_damaged_buffer(name, data, cls, status, code, offset):
    with pytest.raises(cls) as ei:
        tensorblob.safe_open(data)
    e = ei.value
    assert isinstance(e, TensorblobError)
    assert (e.status, e.code, e.offset) == (status, code, offset), e
    assert e.message


@pytest.mark.parametrize("name,data,cls,status,code,offset", CASES[3:], ids=[c[0] for c in CASES[3:]])
def test_damaged_file_same_as_buffer(tmp_path, name, data, cls, status, code, offset):
    p = tmp_path / "bad.safetensors"
    p.write_bytes(data)
    with pytest.raises(cls) as ei:
        tensorblob.safe_open(p)
    assert (ei.value.status, ei.value.offset) == (status, offset)


def test_missing_file():
    with pytest.raises(MissingFileError) as ei:
        tensorblob.safe_open("/nonexistent/dir/x.safetensors")
    assert isinstance(ei.value, FileNotFoundError)
    assert isinstance(ei.value, TensorblobIOError)
    assert ei.value.status == "TBLOB_E_NOT_FOUND" and ei.value.code == -4


def test_io_error(tmp_path):
    f = tmp_path / "file"
    f.write_bytes(b"x")
    with pytest.raises(TensorblobIOError) as ei:
        tensorblob.safe_open(f / "below-a-file")
    assert ei.value.status == "TBLOB_E_IO" and ei.value.offset is None


def test_directory_without_model(tmp_path):
    with pytest.raises(FormatError) as ei:
        tensorblob.safe_open(tmp_path)
    assert ei.value.status == "TBLOB_E_UNKNOWN_FORMAT"


def test_unknown_tensor_is_a_key_error():
    with tensorblob.safe_open(REPO / "examples" / "tiny-llama" / "model.safetensors") as f:
        with pytest.raises(KeyError):
            f.get_tensor("no.such.tensor")
        with pytest.raises(NotFoundError) as ei:
            f.get_slice("no.such.tensor")
        assert ei.value.status == "TBLOB_E_NOT_FOUND"


@needs("slm1")
def test_slm1_checksum_is_a_digest_error():
    b = bytearray((REPO / "tests" / "data" / "slm1" / "tiny_btok.slm").read_bytes())
    b[-1] ^= 1
    with pytest.raises(DigestError) as ei:
        tensorblob.safe_open(bytes(b))
    # The checksum is stored at byte 100 of the header (docs/slm1.md).
    assert (ei.value.status, ei.value.code, ei.value.offset) == ("TBLOB_E_SLM1_CHECKSUM", -177, 100)


def test_errors_pickle():
    import pickle
    e = FormatError("TBLOB_E_JSON", -24, "bad", 12, None)
    f = pickle.loads(pickle.dumps(e))
    assert type(f) is FormatError and (f.status, f.code, f.offset) == ("TBLOB_E_JSON", -24, 12)


def test_every_status_maps_to_a_family():
    from tensorblob import _ffi
    from tensorblob._errors import family
    seen = 0
    for code in range(-1, -200, -1):
        name = _ffi.lib.tblob_status_name(code).decode()
        if name == "TBLOB_E_UNKNOWN_STATUS":
            continue
        seen += 1
        cls = family(code)
        assert issubclass(cls, TensorblobError), name
        if "LIMIT" in name:
            assert cls is LimitError, name
        if name in ("TBLOB_E_DIGEST_MISMATCH", "TBLOB_E_SLM1_CHECKSUM"):
            assert cls is DigestError, name
        if name in ("TBLOB_E_IO", "TBLOB_E_OLLAMA_BLOB_MISSING"):
            assert cls is TensorblobIOError, name
    assert seen > 100
    assert os.sep


def test_dequantize_row_range_checked():
    path = REPO / "tests" / "data" / "dequant" / "mlx" / "affine_b4_g64_bf16.safetensors"
    with tensorblob.safe_open(path) as f:
        rows = f.quant_info("w").rows
        with pytest.raises(tensorblob.InvalidArgumentError) as ei:
            f.dequantize("w", rows=(0, rows + 1))
        assert ei.value.status == "TBLOB_E_RANGE" and ei.value.tensor_index == f.offset_keys().index("w")
        with pytest.raises(ValueError):
            f.dequantize("w", rows=(-1, 2))
        assert f.dequantize("w", rows=(2, 2)).size == 0


def test_features_list_the_build():
    f = tensorblob.features()
    assert f[:2] == ["format:safetensors", "format:safetensors-sharded"], f
    assert f[-1] == "kernel:scalar" and "kernel:" + tensorblob.kernel() in f, f
    assert all(e.startswith(("format:", "kernel:")) for e in f), f


def test_family_comes_from_the_library():
    # Families as the header documents them (tblob_family), including statuses that sit in
    # another area's number range: a model name missing is NOT_FOUND, a blob's size DIGEST.
    from tensorblob._errors import family
    assert family(-105) is NotFoundError            # TBLOB_E_OLLAMA_MODEL_NOT_FOUND
    assert family(-118) is DigestError              # TBLOB_E_OLLAMA_BLOB_SIZE
    assert family(-80) is tensorblob.InvalidArgumentError  # TBLOB_E_KERNEL_UNAVAILABLE
    assert family(-75) is tensorblob.DequantError   # TBLOB_E_QUANT_SCALE_SIZE
    assert family(-9999) is FormatError             # not a status: the library says unknown
