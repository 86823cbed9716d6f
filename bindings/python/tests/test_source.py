"""Models read through a binary file object (tensorblob.open(fileobj)): only the header is read
at open, a tensor read adds exactly its bytes, values equal the path-opened model's and the
safetensors package's, a lying reader gets its status, and threads share such a model."""
import io
import json
import struct
import threading

import numpy as np
import pytest
from safetensors import safe_open as st_safe_open

import tensorblob
from tensorblob import TensorblobError, TensorblobIOError


class Counting:
    """A binary file object over bytes that counts the bytes it hands out. lie: "short"
    returns half of each read and then end of file; "over" claims more than asked; "raise"
    raises. plain_read: no readinto (read() only)."""

    def __init__(self, data: bytes, plain_read: bool = False):
        self.b = io.BytesIO(data)
        self.read_bytes = 0
        self.lie = None
        if not plain_read:
            self.readinto = self._readinto

    def seek(self, off, whence=0):
        return self.b.seek(off, whence)

    def tell(self):
        return self.b.tell()

    def _readinto(self, mv):
        if self.lie == "raise":
            raise OSError("disk on fire")
        if self.lie == "over":
            self.read_bytes += len(mv)
            return len(mv) + 5
        want = len(mv) if self.lie != "short" else max(1, len(mv) // 2)
        k = self.b.readinto(mv[:want])
        if self.lie == "short":
            self.b.seek(0, 2)
        self.read_bytes += k
        return k

    def read(self, n=-1):
        if self.lie == "raise":
            raise OSError("disk on fire")
        if self.lie == "over":
            return b"\0" * (n + 5)
        data = self.b.read(n if self.lie != "short" else max(1, n // 2))
        if self.lie == "short":
            self.b.seek(0, 2)
        self.read_bytes += len(data)
        return data


@pytest.fixture
def tiny(repo):
    p = repo / "examples" / "tiny-llama" / "model.safetensors"
    return p, p.read_bytes()


def header_end(data: bytes) -> int:
    """8 + the header length the file's first 8 bytes give (the safetensors definition)."""
    return 8 + struct.unpack("<Q", data[:8])[0]


@pytest.mark.parametrize("plain_read", [False, True])
def test_open_reads_only_the_header(tiny, plain_read):
    path, data = tiny
    f = Counting(data, plain_read)
    with tensorblob.open(f) as m, tensorblob.safe_open(path) as ref:
        assert f.read_bytes == header_end(data)
        assert m.keys() == ref.keys()
        assert m.format == ref.format
        for k in ref.keys():
            assert m.get_dtype(k) == ref.get_dtype(k) and m.get_shape(k) == ref.get_shape(k)


def test_tensor_read_adds_its_bytes_and_values_match(tiny):
    path, data = tiny
    f = Counting(data)
    with tensorblob.open(f) as m, tensorblob.safe_open(path) as ref, \
            st_safe_open(str(path), framework="numpy") as oracle:
        for name in ["lm_head.weight", "model.norm.weight"]:
            before = f.read_bytes
            raw = m.read(name)
            length = json.loads(data[8:header_end(data)])[name]["data_offsets"]
            assert f.read_bytes - before == length[1] - length[0] == len(raw)
            assert raw == ref.get_tensor(name).tobytes()
            before = f.read_bytes
            a = m.get_tensor(name)
            assert f.read_bytes - before == len(raw)
            np.testing.assert_array_equal(a, oracle.get_tensor(name))
            assert a.dtype == oracle.get_tensor(name).dtype and a.shape == oracle.get_tensor(name).shape
            np.testing.assert_array_equal(m.dequantize(name), ref.dequantize(name))
            assert m.read(name, 4, 6) == raw[4:10]
            with pytest.raises(ValueError):
                m.read(name, len(raw) - 2, 6)


def test_read_on_a_mapped_model(tiny):
    path, _ = tiny
    with tensorblob.safe_open(path) as m:
        assert m.read("lm_head.weight") == m.get_tensor("lm_head.weight").tobytes()
        assert m.read("lm_head.weight", 2, 3) == m.get_tensor("lm_head.weight").tobytes()[2:5]


def test_lying_readers(tiny):
    _, data = tiny
    f = Counting(data)
    f.lie = "short"
    with pytest.raises(TensorblobIOError) as e:
        tensorblob.open(f)
    assert e.value.status == "TBLOB_E_SOURCE_SHORT_READ"
    f = Counting(data)
    m = tensorblob.open(f)
    f.lie = "short"
    with pytest.raises(TensorblobError) as e:
        m.get_tensor("lm_head.weight")
    assert e.value.status == "TBLOB_E_SOURCE_SHORT_READ"
    for plain in (False, True):
        f = Counting(data, plain)
        m = tensorblob.open(f)
        f.lie = "over"
        with pytest.raises(TensorblobError) as e:
            m.read("lm_head.weight")
        assert e.value.status == "TBLOB_E_SOURCE_OVERREAD"
    f.lie = "raise"
    with pytest.raises(TensorblobIOError) as e:
        m.read("lm_head.weight")
    assert e.value.status == "TBLOB_E_IO"
    assert isinstance(e.value.__cause__, OSError) and "disk on fire" in str(e.value.__cause__)


def test_sharded_index_with_siblings(repo):
    d = repo / "examples" / "sharded"
    opened = []

    def siblings(name):
        opened.append(name)
        return open(d / name, "rb")

    index = io.BytesIO((d / "model.safetensors.index.json").read_bytes())
    with tensorblob.open(index, siblings=siblings) as m, tensorblob.safe_open(d) as ref:
        assert sorted(opened) == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
        assert m.keys() == ref.keys()
        for k in ref.keys():
            assert m.read(k) == ref.get_tensor(k).tobytes()
    with pytest.raises(TensorblobError):
        tensorblob.open(io.BytesIO((d / "model.safetensors.index.json").read_bytes()))

    def missing(name):
        raise FileNotFoundError(name)

    with pytest.raises(TensorblobError) as e:
        tensorblob.open(io.BytesIO((d / "model.safetensors.index.json").read_bytes()), siblings=missing)
    assert e.value.status == "TBLOB_E_NOT_FOUND"


def test_threads_share_a_file_model(tiny):
    path, data = tiny
    m = tensorblob.open(Counting(data))
    ref = tensorblob.safe_open(path)
    want = {k: ref.get_tensor(k).tobytes() for k in ref.keys()}
    errors = []

    def work():
        try:
            for _ in range(5):
                for k in want:
                    assert m.read(k) == want[k]
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work) for _ in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors


def test_file_on_disk(tiny):
    path, data = tiny
    with open(path, "rb") as fh, tensorblob.open(fh) as m:
        np.testing.assert_array_equal(m.get_tensor("model.norm.weight"),
                                      tensorblob.safe_open(path).get_tensor("model.norm.weight"))
