"""Arrays alias the mapping: their pointers lie in a mapping of the file, no copy is
allocated, they are read-only and they keep the model open."""
import gc
import os
import tracemalloc
import weakref

import ml_dtypes
import numpy as np
import pytest
from safetensors import safe_open as st_open
from safetensors.numpy import save_file

import tensorblob

from conftest import REPO

TINY = REPO / "examples" / "tiny-llama" / "model.safetensors"


def mappings_of(path):
    """(start, end, file offset) of each mapping of path in this process."""
    real = os.path.realpath(path)
    out = []
    with open("/proc/self/maps") as m:
        for line in m:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == real:
                a, b = (int(x, 16) for x in parts[0].split("-"))
                out.append((a, b, int(parts[2], 16)))
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
def test_pointer_inside_mapping_at_the_tensors_file_offset():
    with tensorblob.safe_open(TINY) as f:
        maps = mappings_of(TINY)
        assert maps, "the file is not mapped"
        for i, k in enumerate(f.offset_keys()):
            a = f.get_tensor(k)
            if a.nbytes == 0:
                continue
            p = a.ctypes.data
            info = f._info(i)
            hit = [(s, e, o) for s, e, o in maps if s <= p < e]
            assert hit, f"{k}: pointer {p:#x} outside every mapping of the file"
            s, e, o = hit[0]
            assert p - s + o == info.file_offset, k
            assert p + a.nbytes <= e


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc/self/maps")
@pytest.mark.parametrize("backend,mapped", [("mmap", True), ("pread", False)])
def test_backend_maps_or_reads(backend, mapped, tmp_path):
    # A private copy, so no other test's mapping of the same file is seen.
    p = tmp_path / "m.safetensors"
    p.write_bytes(TINY.read_bytes())
    with st_open(str(p), framework="np") as ref:
        want = {k: ref.get_tensor(k).tobytes() for k in ref.keys()}
    gc.collect()
    with tensorblob.safe_open(str(p), framework="np", backend=backend) as f:
        assert bool(mappings_of(p)) == mapped
        assert {k: f.get_tensor(k).tobytes() for k in f.keys()} == want


def test_read_mode_copies_and_still_matches():
    ref = st_open(str(TINY), framework="np")
    with tensorblob.safe_open(TINY, mode="read") as f:
        for k in ref.keys():
            assert f.get_tensor(k).tobytes() == ref.get_tensor(k).tobytes()


def test_64mb_tensor_allocates_nothing(tmp_path):
    path = tmp_path / "big.safetensors"
    save_file({"big": np.arange(16 * 1024 * 1024, dtype=np.float32)}, str(path))
    tracemalloc.start()
    try:
        with tensorblob.safe_open(path) as f:
            tracemalloc.reset_peak()
            a = f.get_tensor("big")
            _, ours = tracemalloc.get_traced_memory()
            assert a.nbytes == 64 * 1024 * 1024
            assert a[-1] == 16 * 1024 * 1024 - 1
        ref = st_open(str(path), framework="np")
        tracemalloc.reset_peak()
        b = ref.get_tensor("big")
        _, theirs = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The measurement sees a copy (safetensors makes one); ours stays tiny.
    assert theirs >= 64 * 1024 * 1024
    assert ours < 64 * 1024
    assert b.tobytes() == a.tobytes()


def test_arrays_are_read_only():
    with tensorblob.safe_open(TINY) as f:
        a = f.get_tensor(f.keys()[0])
        with pytest.raises(ValueError):
            a[...] = 0
        with pytest.raises(ValueError):
            a.flags.writeable = True
        assert a.dtype == np.dtype(ml_dtypes.bfloat16)


def test_array_keeps_model_open_and_model_closes_after():
    ref = st_open(str(TINY), framework="np")
    k = ref.keys()[0]
    with tensorblob.safe_open(TINY) as f:
        a = f.get_tensor(k)
        s = f.get_slice(k)[1:3]
        handle = weakref.ref(f._h)
    del f
    gc.collect()
    assert handle() is not None  # arrays alive: still open
    assert a.tobytes() == ref.get_tensor(k).tobytes()
    assert s.tobytes() == ref.get_tensor(k)[1:3].tobytes()
    del a, s
    gc.collect()
    assert handle() is None  # last array gone: closed


def test_closed_object_refuses():
    f = tensorblob.safe_open(TINY)
    f.close()
    with pytest.raises(ValueError):
        f.keys()


def test_buffer_open_borrows_the_buffer():
    data = TINY.read_bytes()
    with tensorblob.safe_open(data) as f:
        k = f.keys()[0]
        a = f.get_tensor(k)
        base = np.frombuffer(data, dtype=np.uint8).ctypes.data
        assert base <= a.ctypes.data < base + len(data)
    ref = st_open(str(TINY), framework="np")
    assert a.tobytes() == ref.get_tensor(k).tobytes()
