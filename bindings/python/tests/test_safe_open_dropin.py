"""safe_open's keyword arguments, get_slice keys and path arguments, each case run through
safetensors.safe_open (0.8.0, the oracle) and tensorblob.safe_open: the same values, or an
exception of a class that is (or subclasses) the one safetensors raised."""
import io

import numpy as np
import pytest
import safetensors
from safetensors import safe_open as st_open
from safetensors.numpy import save_file

import tensorblob

TENSORS = {
    "a": np.arange(30, dtype=np.float32).reshape(10, 3),
    "v": np.arange(5, dtype=np.int32),
    "s": np.array(3.0, dtype=np.float32),
    "e": np.zeros((0, 3), dtype=np.float32),
    "z": np.zeros((3, 0), dtype=np.float32),
    "c": np.arange(24, dtype=np.int16).reshape(2, 3, 4),
}


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("dropin") / "t.safetensors"
    save_file(TENSORS, str(p))
    return str(p)


def outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the class is what is compared)
        return "raised", e
    except BaseException as e:  # safetensors' Rust panics (pyo3 PanicException)
        if type(e).__name__ != "PanicException":
            raise
        return "panicked", e


def same(ours, theirs):
    """ours matches theirs: equal arrays (values, dtype, shape), or an exception whose class
    is theirs' or a subclass of it."""
    if theirs[0] == "panicked":  # a safetensors bug (reversed slices): an error, not a panic
        assert ours[0] == "raised" and isinstance(ours[1], tensorblob.ReversedSliceError), ours
        return
    if theirs[0] == "raised":
        assert ours[0] == "raised", f"safetensors raised {theirs[1]!r}, tensorblob returned"
        assert isinstance(ours[1], type(theirs[1])), (ours[1], theirs[1])
        return
    assert ours[0] == "ok", f"safetensors returned, tensorblob raised {ours[1]!r}"
    a, b = np.asarray(ours[1]), np.asarray(theirs[1])
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes()


KEYS = [
    # ints, negative ints, past the end, ellipses
    0, 1, 9, 10, 20, -1, -10, -11, np.int64(2), np.int64(-1), np.array(1), True,
    (1, 2), (0, 0, 0), (-11, 5), (20, -11), (..., 1), (1, ..., 1), (..., -1), (..., -4),
    (-1, ...), ..., (..., ...), (), (1,),
    # slices: clipped by numpy, refused by safetensors; negative bounds and steps
    slice(None), slice(None, 20), slice(5, 20), slice(10, None), slice(20, None), slice(3, 3),
    slice(0, 0), slice(3, 1), slice(9, 10), slice(None, None, 2), slice(1, 9, 3),
    slice(None, None, -1), slice(1, 3, 0), slice(2, 1, -1), slice(-3, None), slice(None, -1),
    slice(-1, None, -1), slice(None, 2**70), slice(None, 2**64), slice(2**64 - 1, None),
    slice(None, None, 2**70), slice(None, None, -2**70), slice(1.5, None), slice("a", None),
    slice(None, None, 1.5), slice(np.int64(1), np.int64(3)), slice(None, None, np.int64(-1)),
    (0, ..., ...), (..., None), slice(1, 0, 2), slice(9, 0, 2), slice(1, 0, 3),
    (slice(None), slice(2, 1, 2)), (..., 0, -1, slice(None, -1)), (-1, slice(None, -1)),
    (-1, slice(None, -1), ...), (..., -1, slice(None, -1)), (..., -4, None), (-11, None, ...), (slice(None), 5), (slice(None), -1),
    (slice(None), slice(0, 0)), (slice(3, 1), 20), (20, slice(3, 1)), (1, slice(3, 1)),
    (slice(None, None, -1), slice(-1, None)), (slice(None, None, 3), slice(None, None, 2)),
    # what safetensors does not index with
    [0, 1], [0], [], [None], None, (None, 20), (20, None), 0.5, np.float64(1.0), "a",
    np.array([0]), 2**70, -2**70, (slice(1, 2), [0]), ([], 0),
]


@pytest.mark.parametrize("backend", ["mmap", "pread"])
@pytest.mark.parametrize("name", sorted(TENSORS))
@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_get_slice(path, backend, name, key):
    with st_open(path, framework="numpy", backend=backend) as f:
        theirs = outcome(lambda: f.get_slice(name)[key])
    with tensorblob.safe_open(path, framework="numpy", backend=backend) as f:
        ours = outcome(lambda: f.get_slice(name)[key])
    same(ours, theirs)


@pytest.mark.parametrize("name", sorted(TENSORS))
def test_slice_shape_dtype(path, name):
    with st_open(path, framework="numpy") as f, tensorblob.safe_open(path, "numpy") as g:
        assert g.get_slice(name).get_shape() == f.get_slice(name).get_shape()
        assert g.get_slice(name).get_dtype() == f.get_slice(name).get_dtype()


@pytest.mark.parametrize("kwargs", [
    {"backend": "mmap"}, {"backend": "pread"}, {"backend": "x"}, {"backend": ""},
    {"backend": None}, {"backend": 1}, {"framework": "np"}, {"framework": "numpy"},
    {"framework": "foo"}, {"framework": ""}, {"device": "cpu"}, {"framework": "mlx"},
    {"framework": "pt"}, {"framework": "torch"}, {"framework": "jax"}, {"framework": "flax"},
], ids=repr)
def test_open_arguments(path, kwargs):
    kw = {"framework": "numpy", **kwargs}
    if kw["framework"] == "mlx":
        pytest.importorskip("mlx.core")  # safetensors' mlx path needs it imported first

    def run(opener):
        def fn():
            with opener(path, **kw) as f:
                return f.get_tensor("a")
        return outcome(fn)
    same(run(tensorblob.safe_open), run(st_open))


def test_error_is_safetensors_error(path):
    with tensorblob.safe_open(path, framework="numpy") as f:
        with pytest.raises(safetensors.SafetensorError):
            f.get_slice("a")[:20]
    assert issubclass(tensorblob.SafetensorError, safetensors.SafetensorError)


def test_text_mode_file_object(path):
    def run(opener):
        with open(path, "r", encoding="latin-1") as fh:
            return outcome(lambda: opener(fh, framework="numpy"))
    theirs, ours = run(st_open), run(tensorblob.safe_open)
    assert theirs[0] == "raised"
    same(ours, theirs)


@pytest.mark.parametrize("arg", [3, 3.5, None], ids=repr)
def test_not_a_path(arg):
    same(outcome(lambda: tensorblob.safe_open(arg, framework="numpy")),
         outcome(lambda: st_open(arg, framework="numpy")))


def test_binary_file_object_extension(path):
    # safetensors takes no file objects (TypeError); tensorblob reads binary ones (documented
    # extension): the values are safetensors' values for the path.
    with st_open(path, framework="numpy") as f:
        want = {k: f.get_tensor(k) for k in f.keys()}
    for fh in (open(path, "rb"), io.BytesIO(open(path, "rb").read())):
        with fh, tensorblob.safe_open(fh, framework="numpy") as g:
            for k, v in want.items():
                same(("ok", g.get_tensor(k)), ("ok", v))


# Random keys, built from the same parts, through both implementations.
from hypothesis import given, settings, strategies as hst  # noqa: E402

_bound = hst.one_of(hst.none(), hst.integers(-4, 14))
_part = hst.one_of(hst.integers(-14, 14), hst.just(...), hst.none(),
                   hst.builds(slice, _bound, _bound, hst.one_of(hst.none(), hst.integers(-2, 3))))
_key = hst.one_of(_part, hst.lists(_part, max_size=4).map(tuple),
                  hst.lists(hst.integers(0, 3), max_size=2))


@settings(max_examples=300, deadline=None)
@given(name=hst.sampled_from(sorted(TENSORS)), key=_key)
def test_random_keys(path, name, key):
    with st_open(path, framework="numpy") as f:
        theirs = outcome(lambda: f.get_slice(name)[key])
    with tensorblob.safe_open(path, framework="numpy") as f:
        ours = outcome(lambda: f.get_slice(name)[key])
    same(ours, theirs)
