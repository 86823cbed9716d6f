"""Models (safe_open), slices, dequantization and Ollama stores over the ctypes layer."""
from __future__ import annotations

import ctypes
import io
import itertools
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import ml_dtypes
import numpy as np

from . import _ffi, _frameworks, _slicing
from ._errors import MissingFileError, SafetensorError, TensorblobError, family
from ._ffi import lib

PathLike = Union[str, "os.PathLike[str]"]
Buffer = Union[bytes, bytearray, memoryview, np.ndarray]

# tblob_dtype -> numpy dtype (little-endian, as safetensors stores them).
_NP_DTYPES: Dict[int, np.dtype] = {
    1: np.dtype(np.bool_), 2: np.dtype("u1"), 3: np.dtype("i1"), 4: np.dtype("<i2"),
    5: np.dtype("<u2"), 6: np.dtype("<f2"), 7: np.dtype(ml_dtypes.bfloat16),
    8: np.dtype("<i4"), 9: np.dtype("<u4"), 10: np.dtype("<f4"), 11: np.dtype("<f8"),
    12: np.dtype("<i8"), 13: np.dtype("<u8"), 14: np.dtype("<c8"),
    15: np.dtype(ml_dtypes.float8_e5m2), 16: np.dtype(ml_dtypes.float8_e4m3fn),
    17: np.dtype(ml_dtypes.float8_e8m0fnu), 18: np.dtype(ml_dtypes.float8_e4m3fnuz),
    19: np.dtype(ml_dtypes.float8_e5m2fnuz),
}
_OUT_DTYPES = {np.dtype(np.float32): 10, np.dtype(np.float16): 6,
               np.dtype(ml_dtypes.bfloat16): 7}
_DTYPE_NAMES: Dict[int, str] = {}

# The fields of tblob_tensor_info read in bulk, as a numpy view over the ctypes array.
_TI = _ffi.TensorInfo
_INFO_NP = np.dtype({
    "names": ["dtype", "name", "name_len", "shape", "rank", "file_index", "data_offset",
              "data_length", "file_offset"],
    "formats": ["<u4", "<u8", "<u8", "<u8", "<u4", "<u4", "<u8", "<u8", "<u8"],
    "offsets": [_TI.dtype.offset, _TI.name.offset, _TI.name_len.offset, _TI.shape.offset,
                _TI.rank.offset, _TI.file_index.offset, _TI.data_offset.offset,
                _TI.data_length.offset, _TI.file_offset.offset],
    "itemsize": ctypes.sizeof(_TI)})


# tblob_meta_type numbers (GGUF's) and the numpy types of the numeric ones.
_META_BOOL, _META_STRING, _META_ARRAY = 7, 8, 9
_META_NUMPY = {0: np.dtype(np.uint8), 1: np.dtype(np.int8), 2: np.dtype(np.uint16),
               3: np.dtype(np.int16), 4: np.dtype(np.uint32), 5: np.dtype(np.int32),
               6: np.dtype(np.float32), 10: np.dtype(np.uint64), 11: np.dtype(np.int64),
               12: np.dtype(np.float64)}


def _info_columns(table: Any, count: int) -> np.ndarray:
    """A structured numpy view of a tblob_tensor_info array (no copy)."""
    if not count:
        return np.zeros(0, _INFO_NP)
    return np.frombuffer(memoryview(table).cast("B"), dtype=_INFO_NP)


def _dtype_name(code: int) -> str:
    n = _DTYPE_NAMES.get(code)
    if n is None:
        n = _DTYPE_NAMES[code] = _ffi.cstr(lib.tblob_dtype_name(code)) or f"<{code}>"
    return n


def _error(diag: _ffi.Diag, status: int, cls: Optional[type] = None) -> TensorblobError:
    code = diag.status if diag.status else status
    name = _ffi.cstr(lib.tblob_status_name(code))
    msg = diag.message.decode("utf-8", "replace") or _ffi.cstr(lib.tblob_status_message(code))
    off = None if diag.offset == _ffi.NO_OFFSET else int(diag.offset)
    ti = None if diag.tensor_index < 0 else int(diag.tensor_index)
    err: TensorblobError = (cls or family(code))(name, code, msg, off, ti)
    return err


def _check(status: int, diag: _ffi.Diag) -> None:
    if status != 0:
        raise _error(diag, status)


class _Handle:
    """Owns one tblob_model*; closed when the last SafeOpen or array referring to it goes."""

    __slots__ = ("ptr", "keep", "mapped", "__weakref__")

    def __init__(self, ptr: Optional[int], keep: Any = None, mapped: bool = False) -> None:
        self.ptr = ptr
        self.keep = keep  # a caller buffer the model borrows
        self.mapped = mapped  # the whole file (or buffer) is addressable: map mode or memory

    def close(self) -> None:
        p, self.ptr = self.ptr, None
        if p:
            lib.tblob_model_close(p)

    def __del__(self) -> None:
        self.close()


def _options(mode: str) -> _ffi.OpenOptions:
    o = _ffi.new(_ffi.OpenOptions)
    if mode not in ("map", "read"):
        raise ValueError(f"mode must be 'map' or 'read', not {mode!r}")
    o.mode = 0 if mode == "map" else 1
    return o


def _slm1_options(names: Sequence[str]) -> Tuple[_ffi.Slm1OpenOptions, Any]:
    enc = [n.encode("utf-8", "surrogateescape") for n in names]
    so = _ffi.new(_ffi.Slm1OpenOptions)
    arr = (ctypes.c_char_p * len(enc))(*enc)
    lens = (ctypes.c_size_t * len(enc))(*[len(e) for e in enc])
    so.required_names = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p))
    so.required_name_lens = ctypes.cast(lens, ctypes.POINTER(ctypes.c_size_t))
    so.required_name_count = len(enc)
    return so, (enc, arr, lens)  # the second value keeps the arrays alive for the call


def _open_path(path: PathLike, mode: str, names: Optional[Sequence[str]]) -> _Handle:
    p = os.fsencode(path)
    out = ctypes.c_void_p()
    d = _ffi.new(_ffi.Diag)
    opts = _options(mode)
    if names is not None:
        so, _keep = _slm1_options(names)
        st = lib.tblob_slm1_open_path(p, ctypes.byref(opts), ctypes.byref(so), ctypes.byref(out),
                                      ctypes.byref(d))
    else:
        st = lib.tblob_model_open(p, ctypes.byref(opts), ctypes.byref(out), ctypes.byref(d))
    if st != 0:
        raise _error(d, st, MissingFileError if st == -4 else None)
    return _Handle(out.value, mapped=(mode == "map"))


def _open_buffer(data: Buffer, names: Optional[Sequence[str]]) -> _Handle:
    arr = np.frombuffer(data, dtype=np.uint8)  # zero copy; keeps `data` alive
    out = ctypes.c_void_p()
    d = _ffi.new(_ffi.Diag)
    ptr = arr.ctypes.data if arr.size else None
    # tblob_model_open_memory reads safetensors; SLM1 buffers have their own entry point.
    if names is not None or bytes(arr[:4]) == b"SLM1":
        so, _keep = _slm1_options(names or [])
        st = lib.tblob_slm1_open_memory(ptr, arr.size, None, ctypes.byref(so), ctypes.byref(out),
                                        ctypes.byref(d))
    else:
        st = lib.tblob_model_open_memory(ptr, arr.size, None, ctypes.byref(out), ctypes.byref(d))
    _check(st, d)
    return _Handle(out.value, keep=arr, mapped=True)


# ---- models read through a binary file object (tblob_model_open_source) ----

_E_IO, _E_NOT_FOUND, _E_SOURCE_OVERREAD, _E_NOT_MAPPED = -3, -4, -12, -14


class _SourceState:
    """Shared by a file object, its siblings and the model: the latest exception a reader
    raised, chained to the error of the call that needed the bytes."""

    __slots__ = ("error",)

    def __init__(self) -> None:
        self.error: Optional[BaseException] = None

    def take(self) -> Optional[BaseException]:
        e, self.error = self.error, None
        return e


class _FileSource:
    __slots__ = ("f", "siblings", "state", "lock")

    def __init__(self, f: Any, siblings: Optional[Callable[[str], Any]], state: _SourceState) -> None:
        self.f = f
        self.siblings = siblings
        self.state = state
        self.lock = threading.Lock()  # seek + read must not interleave between threads


# The C source's user pointer is a key into this table, never a Python object address; the
# library's close callback removes the entry (exactly once per source).
_SOURCES: Dict[int, _FileSource] = {}
_SOURCE_KEYS = itertools.count(1)


def _read_into(src: _FileSource, offset: int, dst: int, n: int) -> int:
    mv = memoryview((ctypes.c_char * n).from_address(dst)).cast("B")
    readinto = getattr(src.f, "readinto", None)
    with src.lock:
        src.f.seek(offset)
        done = 0
        while done < n:
            if readinto is not None:
                k = readinto(mv[done:])
            else:
                b = src.f.read(n - done)
                k = len(b)
                if k > n - done:
                    return _E_SOURCE_OVERREAD
                mv[done:done + k] = b
            if k is None:
                raise BlockingIOError("a non-blocking file object had no data")
            if k > n - done:
                return _E_SOURCE_OVERREAD
            if k == 0:
                break
            done += k
    return done


# ctypes takes the GIL for the callbacks (the library calls them from whichever thread called
# it, with the GIL released around every foreign call). Nothing may propagate into C: an
# exception becomes TBLOB_E_IO, kept for the error the caller then sees.
@_ffi.READ_FN
def _read_cb(user: Optional[int], offset: int, dst: Optional[int], n: int) -> int:
    src = _SOURCES.get(user or 0)
    if src is None:
        return _E_IO
    if n == 0:
        return 0
    try:
        return _read_into(src, offset, dst or 0, n)
    except BaseException as e:  # noqa: BLE001 - must not unwind into C
        src.state.error = e
        return _E_IO


@_ffi.CLOSE_FN
def _close_cb(user: Optional[int]) -> None:
    _SOURCES.pop(user or 0, None)


@_ffi.OPEN_SIBLING_FN
def _sibling_cb(user: Optional[int], name: Optional[int], n: int, out: Any) -> int:
    src = _SOURCES.get(user or 0)
    if src is None or src.siblings is None:
        return _E_NOT_FOUND
    try:
        nm = ctypes.string_at(name, n).decode("utf-8", "surrogateescape") if n else ""
        f = src.siblings(nm)
        if f is None:
            return _E_NOT_FOUND
        _fill_source(out.contents, f, src.siblings, src.state)
        return 0
    except FileNotFoundError as e:
        src.state.error = e
        return _E_NOT_FOUND
    except BaseException as e:  # noqa: BLE001
        src.state.error = e
        return _E_IO


def _fill_source(s: _ffi.ByteSource, f: Any, siblings: Optional[Callable[[str], Any]],
                 state: _SourceState) -> None:
    with_lock = _FileSource(f, siblings, state)
    size = f.seek(0, os.SEEK_END)
    key = next(_SOURCE_KEYS)
    _SOURCES[key] = with_lock
    s.size = size if isinstance(size, int) and size >= 0 else _ffi.SOURCE_SIZE_UNKNOWN
    s.read = _read_cb
    s.open_sibling = _sibling_cb if siblings is not None else _ffi.OPEN_SIBLING_FN()
    s.close = _close_cb
    s.user = key


def _open_fileobj(f: Any, siblings: Optional[Callable[[str], Any]]) -> _Handle:
    state = _SourceState()
    src = _ffi.new(_ffi.ByteSource)
    _fill_source(src, f, siblings, state)
    out = ctypes.c_void_p()
    d = _ffi.new(_ffi.Diag)
    # The library owns the source from here: it calls _close_cb once, also when this fails.
    st = lib.tblob_model_open_source(ctypes.byref(src), None, ctypes.byref(out), ctypes.byref(d))
    if st != 0:
        raise _error(d, st) from state.take()
    return _Handle(out.value, keep=state, mapped=False)


@dataclass(frozen=True)
class QuantInfo:
    """How a tensor dequantizes (tblob_tensor_quant_info; UQFF layers add their family).

    scheme: "mlx-affine", "mxfp4", "nvfp4", "block-fp8", "slm1-q8_0", "F16", ... or, for UQFF
    layers, mistral.rs's label ("q4k", "afq4", "hqq8", ...); "none" when not dequantizable.
    status: None when dequantize() works on it, else the status name it would raise.
    """
    scheme: str
    quantized: bool
    companion: bool
    source: str
    bits: int
    group_size: int
    scale_dtype: Optional[str]
    bias_dtype: Optional[str]
    shape: Tuple[int, ...]
    rows: int
    cols: int
    status: Optional[str]
    weight: Optional[str] = None
    scale: Optional[str] = None
    bias: Optional[str] = None
    global_scale: Optional[str] = None
    special: int = 0
    extra: Dict[str, Any] = field(default_factory=dict)


_SOURCES = {0: "plain", 1: "ollama", 2: "mlx-community", 3: "hf-block-fp8", 4: "slm1"}
_UQFF_FAMILIES = {0: "gguf", 1: "unquant", 2: "hqq", 3: "fp8", 4: "afq", 5: "f8q8",
                  6: "mxfp4", 255: "plain"}


class SafeSlice:
    """A lazily read tensor (what safe_open().get_slice returns): shape, dtype and indexing.

    Indexing (``s[1:3]``, ``s[0]``, ``s[:, 2:]``, ``s[..., 0]``, ``s[::2]``) accepts and refuses
    what safetensors 0.8.0 does (see _slicing.py: no negative steps, no None, no index lists,
    out-of-range starts and stops refused rather than clipped) and returns a read-only view of
    the mapped bytes, no copy.
    """

    __slots__ = ("_f", "_i")

    def __init__(self, f: "SafeOpen", index: int) -> None:
        self._f = f
        self._i = index

    def get_shape(self) -> List[int]:
        """The stored shape, outermost first."""
        f = self._f
        dims = f._dims
        if dims is None:
            f._columns()
            dims = f._dims
        i = self._i
        s = f._dim_start[i]  # type: ignore[index]
        return dims[s:s + f._ranks[i]]  # type: ignore[index]

    def get_dtype(self) -> str:
        """The stored dtype as the safetensors header spells it ("F32", "BF16", ...)."""
        d = self._f._dtypes
        if d is None:
            self._f._columns()
            d = self._f._dtypes
        return d[self._i]  # type: ignore[index]

    def __len__(self) -> int:
        s = self.get_shape()
        if not s:
            raise TypeError("len() of a 0-d tensor")
        return s[0]

    def __getitem__(self, key: Any) -> np.ndarray:
        a = self._f._array(self._i)
        out: np.ndarray = a[_slicing.normalize(key, a.shape)]
        return self._f._convert(out)

    def __repr__(self) -> str:
        return f"SafeSlice({self.get_dtype()}, {self.get_shape()})"


class SafeOpen:
    """An open model: a safetensors file or buffer, a sharded checkpoint, an Ollama store
    model, a UQFF shard set, an SLM1 or a GGUF file, all with the safetensors.safe_open methods.

    Arrays it returns alias the file's mapping (read-only, no copy) and keep the model open
    while they live, also after the ``with`` block ends.
    """

    def __init__(self, handle: _Handle, framework: str = "numpy") -> None:
        self._convert = _frameworks.converter(framework)
        self._h: Optional[_Handle] = handle
        self._count = int(lib.tblob_model_tensor_count(handle.ptr))
        self._infos: Optional["ctypes.Array[_ffi.TensorInfo]"] = None
        self._names: Optional[List[str]] = None
        self._index: Optional[Dict[str, int]] = None
        self._format = int(lib.tblob_model_format(handle.ptr))
        self._mapped = handle.mapped  # names can be read from the mapped header
        self._dtypes: Optional[List[str]] = None
        self._dims: Optional[List[int]] = None
        self._dim_start: Optional[List[int]] = None
        self._ranks: Optional[List[int]] = None

    # ---- context manager ----
    def __enter__(self) -> "SafeOpen":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Drops this object's hold on the model; arrays still alive keep it open."""
        self._h = None
        self._infos = None

    @property
    def _ptr(self) -> int:
        h = self._h
        if h is None or not h.ptr:
            raise ValueError("the model is closed")
        return h.ptr

    # ---- the table ----
    def _table(self) -> "ctypes.Array[_ffi.TensorInfo]":
        t = self._infos
        if t is None:
            n = self._count
            t = (_ffi.TensorInfo * n)()
            size = ctypes.sizeof(_ffi.TensorInfo)
            d = _ffi.new(_ffi.Diag)
            # One foreign call for the whole table.
            _check(lib.tblob_tensors_at(self._ptr, 0, n, t, size, ctypes.byref(d)), d)
            self._infos = t
        return t

    def _info(self, i: int) -> _ffi.TensorInfo:
        info: _ffi.TensorInfo = self._table()[i]
        return info

    def _columns(self) -> None:
        """dtype names, ranks and every dimension as Python lists, from one numpy view."""
        t = self._table()
        cols = _info_columns(t, self._count)
        codes = cols["dtype"]
        table = [_dtype_name(c) for c in range(int(codes.max()) + 1)] if codes.size else []
        self._dtypes = [table[c] for c in codes.tolist()]
        ranks = cols["rank"].astype(np.uint64)
        self._ranks = ranks.tolist()
        start = np.zeros(len(ranks), dtype=np.uint64)
        if len(ranks) > 1:
            np.cumsum(ranks[:-1], out=start[1:])
        self._dim_start = start.tolist()
        # The library keeps shapes in an arena, mostly back to back: one read per run of
        # adjacent shapes.
        idx = np.flatnonzero(ranks > 0)
        dims = np.zeros(int(ranks.sum()), dtype=np.uint64)
        if idx.size:
            p = cols["shape"][idx]
            r = ranks[idx]
            breaks = np.flatnonzero(p[1:] != p[:-1] + 8 * r[:-1]) + 1
            bounds = [0] + breaks.tolist() + [idx.size]
            for a, b in zip(bounds[:-1], bounds[1:]):
                first = int(idx[a])
                n = int(r[a:b].sum())
                raw = ctypes.string_at(int(p[a]), 8 * n)
                s0 = int(start[first])
                dims[s0:s0 + n] = np.frombuffer(raw, dtype="<u8")
        self._dims = dims.tolist()

    def _shape(self, i: int) -> List[int]:
        if self._dims is None:
            self._columns()
        s = self._dim_start[i]  # type: ignore[index]
        return self._dims[s:s + self._ranks[i]]  # type: ignore[index]

    def _dtype_str(self, i: int) -> str:
        if self._dtypes is None:
            self._columns()
        return self._dtypes[i]  # type: ignore[index]

    def _header_names(self, cols: np.ndarray) -> Optional[List[Optional[str]]]:
        """Names read from each file's header in one piece (they point into the mapping
        unless they had JSON escapes); None entries are read one by one."""
        if not self._mapped or self._format not in (1, 2, 3) or not self._count:
            return None
        names: List[Optional[str]] = [None] * self._count
        ptrs, lens = cols["name"], cols["name_len"]
        fidx = cols["file_index"]
        single = int(lib.tblob_model_file_count(self._ptr)) == 1
        for fi in [0] if single else sorted(set(fidx.tolist())):
            mine = np.arange(self._count) if single else np.flatnonzero(fidx == fi)
            with_data = mine[cols["data_length"][mine] > 0]
            if with_data.size == 0:
                continue
            k = int(with_data[0])
            data = ctypes.c_void_p()
            n = ctypes.c_uint64()
            if lib.tblob_tensor_data(self._ptr, k, ctypes.byref(data), ctypes.byref(n), None) != 0:
                return None
            fo, do = int(cols["file_offset"][k]), int(cols["data_offset"][k])
            hdr_len = fo - do - 8
            lo = int(data.value or 0) - fo + 8  # the header's first byte in the mapping
            if hdr_len <= 0:
                continue
            off = ptrs[mine].astype(np.int64) - lo
            end = off + lens[mine].astype(np.int64)
            inside = (off >= 0) & (end <= hdr_len)
            everything = bool(inside.all())
            if not everything and not inside.any():
                continue
            hb = ctypes.string_at(lo, hdr_len)
            offs = (off if everything else off[inside]).tolist()
            ends = (end if everything else end[inside]).tolist()
            if hb.isascii():
                hs = hb.decode("ascii")
                got = [hs[a:b] for a, b in zip(offs, ends)]
            else:
                got = [hb[a:b].decode("utf-8", "surrogateescape") for a, b in zip(offs, ends)]
            if single and everything:
                return got  # type: ignore[return-value]
            for j, v in zip(mine[inside].tolist(), got):
                names[j] = v
        return names

    def _names_list(self) -> List[str]:
        if self._names is None:
            t = self._table()
            cols = _info_columns(t, self._count)
            fast = self._header_names(cols)
            sa = ctypes.string_at
            if fast is None:
                names = [sa(p, n).decode("utf-8", "surrogateescape") if n else ""
                         for p, n in zip(cols["name"].tolist(), cols["name_len"].tolist())]
            else:
                names = fast  # type: ignore[assignment]
                if any(v is None for v in fast):
                    for j, v in enumerate(fast):
                        if v is None:
                            n = int(cols["name_len"][j])
                            names[j] = sa(int(cols["name"][j]), n).decode(
                                "utf-8", "surrogateescape") if n else ""
            self._names = names
        return self._names

    def _name_index(self) -> Dict[str, int]:
        if self._index is None:
            self._index = dict(zip(self._names_list(), range(self._count)))
        return self._index

    def _find(self, name: str) -> int:
        idx = self._index
        if idx is None and self._names is not None:
            idx = self._name_index()  # keys() was called: names are at hand
        if idx is not None:
            i = idx.get(name)
            if i is not None:
                return i
        b = name.encode("utf-8", "surrogateescape")
        out = ctypes.c_uint64()
        d = _ffi.new(_ffi.Diag)
        _check(lib.tblob_tensor_find(self._ptr, b, len(b), ctypes.byref(out), ctypes.byref(d)), d)
        return out.value

    def _array(self, i: int) -> np.ndarray:
        info = self._table()[i]
        dt = _NP_DTYPES.get(info.dtype)
        if dt is None:
            raise TensorblobError("TBLOB_E_UNSUPPORTED", -9,
                                  f"dtype {_dtype_name(info.dtype)} has no numpy equivalent "
                                  f"(sub-byte elements); use dequantize()")
        shape = tuple(info.shape[: info.rank]) if info.rank else ()
        ptr = ctypes.c_void_p()
        length = ctypes.c_uint64()
        d = _ffi.new(_ffi.Diag)
        st = lib.tblob_tensor_data(self._ptr, i, ctypes.byref(ptr), ctypes.byref(length),
                                   ctypes.byref(d))
        if st == _E_NOT_MAPPED:  # read through a file object: a copy, writeable
            a = np.frombuffer(bytearray(self.read_index(i)), dtype=dt)
            if a.size == int(np.prod(shape, dtype=np.uint64)):
                a = a.reshape(shape)
            return a
        _check(st, d)
        n = length.value
        if n == 0 or not ptr.value:
            a = np.empty(shape, dtype=dt)
        else:
            raw = (ctypes.c_char * n).from_address(ptr.value)
            raw._tblob_model = self._h  # type: ignore[attr-defined]  # keeps the model open
            a = np.frombuffer(memoryview(raw).cast("B").toreadonly(), dtype=dt)
            # A UQFF layer row describes its logical shape but holds the stored entry's bytes
            # (ggml blocks, packed words): those come back flat.
            if a.size == int(np.prod(shape, dtype=np.uint64)):
                a = a.reshape(shape)
        a.flags.writeable = False
        return a

    def _raise(self, st: int, d: _ffi.Diag) -> None:
        """The error of a failed call, chained to a file object's exception if one caused it."""
        h = self._h
        cause = h.keep.take() if h is not None and isinstance(h.keep, _SourceState) else None
        raise _error(d, st) from cause

    def read_index(self, i: int, offset: int = 0, size: Optional[int] = None) -> bytes:
        """Stored bytes of tensor number i: ``size`` bytes from ``offset`` (default: to the end)."""
        length = int(self._info(i).data_length)
        if size is None:
            size = length - offset
        if offset < 0 or size < 0 or offset + size > length:
            raise ValueError(f"bytes [{offset}, {offset + size}) are outside the tensor's {length}")
        buf = ctypes.create_string_buffer(size) if size else None
        d = _ffi.new(_ffi.Diag)
        st = lib.tblob_tensor_read(self._ptr, i, offset, buf, size, ctypes.byref(d))
        if st != 0:
            self._raise(st, d)
        return buf.raw if buf is not None else b""

    def read(self, name: str, offset: int = 0, size: Optional[int] = None) -> bytes:
        """The stored bytes of tensor ``name`` (``size`` bytes from ``offset``; default all),
        copied: from the mapping, or through the file object of a model opened from one,
        which then reads only these bytes."""
        return self.read_index(self._find(name), offset, size)

    # ---- safetensors.safe_open methods ----
    def keys(self) -> List[str]:
        """Tensor names, sorted (as safetensors returns them)."""
        self._ptr
        return sorted(self._names_list())

    def offset_keys(self) -> List[str]:
        """Tensor names in the table's order (data offsets, file by file)."""
        self._ptr
        return list(self._names_list())

    def metadata(self) -> Optional[Dict[str, str]]:
        """The ``__metadata__`` string pairs (for a sharded model, the shards' union; for a
        store model also ollama.name and ollama.manifest_id), or None when there are none."""
        ptr = self._ptr
        n = int(lib.tblob_metadata_count(ptr))
        if n == 0:
            return None
        out: Dict[str, str] = {}
        k, kl, v, vl = ctypes.c_void_p(), ctypes.c_size_t(), ctypes.c_void_p(), ctypes.c_size_t()
        d = _ffi.new(_ffi.Diag)
        for i in range(n):
            _check(lib.tblob_metadata_at(ptr, i, ctypes.byref(k), ctypes.byref(kl), ctypes.byref(v),
                                         ctypes.byref(vl), ctypes.byref(d)), d)
            out.setdefault(_ffi.text(k.value, kl.value), _ffi.text(v.value, vl.value))
        return out

    def typed_metadata(self) -> Dict[str, Any]:
        """Every typed key/value (GGUF's, with their types; other formats' ``__metadata__`` as
        str), first occurrence of a key, in file order: integers and floats as numpy scalars of
        their stored type (np.uint8 ... np.float64), bool, str (UTF-8, undecodable bytes as
        surrogate escapes), numeric and bool arrays as numpy arrays, string arrays as lists."""
        ptr = self._ptr
        out: Dict[str, Any] = {}
        for i in range(int(lib.tblob_metadata_typed_count(ptr))):
            v = _ffi.new(_ffi.MetadataValue)
            d = _ffi.new(_ffi.Diag)
            _check(lib.tblob_metadata_typed_at(ptr, i, ctypes.byref(v), ctypes.byref(d)), d)
            out.setdefault(_ffi.text(v.key, v.key_len), self._typed_value(v))
        return out

    def typed_metadata_value(self, key: str) -> Any:
        """The typed value of key (as typed_metadata gives it); NotFoundError if absent."""
        b = key.encode("utf-8", "surrogateescape")
        v = _ffi.new(_ffi.MetadataValue)
        d = _ffi.new(_ffi.Diag)
        _check(lib.tblob_metadata_typed_find(self._ptr, b, len(b), ctypes.byref(v), ctypes.byref(d)), d)
        return self._typed_value(v)

    def _typed_value(self, v: Any) -> Any:
        t = int(v.value_type)
        if t == _META_ARRAY:
            return self._typed_array(int(v.index), int(v.element_type), int(v.count))
        if t == _META_STRING:
            return _ffi.text(v.string, v.string_len)
        if t == _META_BOOL:
            return bool(v.uint_value)
        np_type = _META_NUMPY[t]
        if np_type.kind == "f":
            return np_type.type(v.float_value)
        return np_type.type(v.int_value if np_type.kind == "i" else v.uint_value)

    def _typed_array(self, index: int, element: int, count: int) -> Any:
        d = _ffi.new(_ffi.Diag)
        if element == _META_STRING:
            got: List[str] = []

            def cb(_u: Any, _i: int, s: Optional[int], n: int) -> int:
                got.append(_ffi.text(s, n))
                return 0

            fn = _ffi.METADATA_STRING_FN(cb)
            _check(lib.tblob_metadata_array_strings(self._ptr, index, 0, _ffi.ALL_ROWS, None, fn,
                                                    None, ctypes.byref(d)), d)
            return got
        dt = np.dtype(np.bool_) if element == _META_BOOL else _META_NUMPY[element]
        arr = np.empty(count, dtype=dt)
        _check(lib.tblob_metadata_array_get(self._ptr, index, 0, count, arr.ctypes.data, arr.nbytes,
                                            ctypes.byref(d)), d)
        return arr

    def get_tensor(self, name: str) -> np.ndarray:
        """The tensor's stored values as a read-only numpy array aliasing the file (BF16 and
        FP8 as ml_dtypes types). Raises NotFoundError (a KeyError) for an unknown name.
        A quantized UQFF layer gives its stored entry's bytes as a flat array of the stored
        dtype (its shape is the logical one); dequantize() decodes it.
        Other frameworks: that array converted (see _frameworks.py)."""
        return self._convert(self._array(self._find(name)))

    def get_slice(self, name: str) -> SafeSlice:
        """A lazy view: get_shape(), get_dtype() and numpy indexing."""
        idx = self._index
        if idx is not None and self._h is not None:
            i = idx.get(name)
            if i is not None:
                return SafeSlice(self, i)
        return SafeSlice(self, self._find(name))

    def get_tensors(self) -> Dict[str, np.ndarray]:
        """Every tensor, keyed by name, in offset order."""
        return {n: self._convert(self._array(i)) for i, n in enumerate(self._names_list())}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        return name in self._name_index()

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    # ---- beyond safetensors ----
    @property
    def format(self) -> str:
        """"safetensors", "safetensors-sharded", "ollama", "uqff", "slm1" or "gguf"."""
        return _ffi.cstr(lib.tblob_format_name(self._format))

    @property
    def files(self) -> List[str]:
        """Paths of the files behind the model ("" for a memory buffer)."""
        ptr = self._ptr
        out = []
        p, n = ctypes.c_void_p(), ctypes.c_size_t()
        d = _ffi.new(_ffi.Diag)
        for i in range(int(lib.tblob_model_file_count(ptr))):
            _check(lib.tblob_model_file_path(ptr, i, ctypes.byref(p), ctypes.byref(n),
                                             ctypes.byref(d)), d)
            out.append(_ffi.text(p.value, n.value))
        return out

    def get_dtype(self, name: str) -> str:
        """Shortcut for get_slice(name).get_dtype()."""
        return self._dtype_str(self._find(name))

    def get_shape(self, name: str) -> List[int]:
        """Shortcut for get_slice(name).get_shape()."""
        return self._shape(self._find(name))

    def _dequant_bytes(self, i: int, code: int, begin: int, end: int) -> int:
        d = _ffi.new(_ffi.Diag)
        out = ctypes.c_uint64()
        _check(lib.tblob_tensor_dequant_size(self._ptr, i, code, begin, end, ctypes.byref(out),
                                             ctypes.byref(d)), d)
        return int(out.value)

    def _logical_shape(self, i: int) -> Tuple[int, ...]:
        if self._format == 4:
            return tuple(self._shape(i))
        q = _ffi.new(_ffi.QuantInfo)
        d = _ffi.new(_ffi.Diag)
        _check(lib.tblob_tensor_quant_info(self._ptr, i, ctypes.byref(q), ctypes.byref(d)), d)
        return tuple(q.shape[: q.rank]) if q.rank else ()

    def dequantize(self, name: str, dtype: Any = np.float32,
                   rows: Optional[Tuple[int, int]] = None, threads: int = 1,
                   stores: str = "auto") -> np.ndarray:
        """Decodes a quantized (or plain float/FP8/F4) tensor to float32, float16 or bfloat16.

        Every scheme the C library knows: MLX affine, mxfp4/8, nvfp4, block FP8, GGML blocks
        and the other UQFF families, SLM1 q8_0/q4_0. Give the packed weight's name. The whole
        tensor comes back in its logical shape; ``rows=(a, b)`` decodes rows [a, b) of the
        logical matrix (leading axes folded) as a 2-D array. The GIL is released meanwhile.
        ``threads``: 1 decodes on the calling thread; 0 uses one thread per online core, n
        uses n (threads the call starts and joins; the bytes never depend on the count).
        ``stores``: how the output is written, the values being the same: "auto" streams
        (non-temporal stores) pieces of 4 MiB or more, "stream" every piece of 64 KiB or more
        (output not read back soon, e.g. a whole model), "cache" none (output read right away).
        """
        dt = np.dtype(dtype)
        code = _OUT_DTYPES.get(dt)
        if code is None:
            raise ValueError(f"dequantize: dtype must be float32, float16 or bfloat16, not {dt}")
        i = self._find(name)
        begin, end = (0, _ffi.ALL_ROWS) if rows is None else (int(rows[0]), int(rows[1]))
        if begin < 0 or end < 0:
            raise ValueError(f"dequantize: rows must be non-negative, not {rows!r}")
        if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads < 2**32:
            raise ValueError(f"dequantize: threads must be an int in [0, 2**32), not {threads!r}")
        store_code = _ffi.STORES.get(stores) if isinstance(stores, str) else None
        if store_code is None:
            raise ValueError(f"dequantize: stores must be 'auto', 'stream' or 'cache', not {stores!r}")
        nbytes = self._dequant_bytes(i, code, begin, end)
        out = np.empty(nbytes // dt.itemsize, dtype=dt)
        d = _ffi.new(_ffi.Diag)
        dst = out.ctypes.data if nbytes else None
        if threads == 1 and store_code == 0:
            st = lib.tblob_tensor_dequantize(self._ptr, i, code, begin, end, dst, nbytes,
                                             ctypes.byref(d))
        else:
            opts = _ffi.new(_ffi.DequantOptions)
            opts.threads = threads
            opts.stores = store_code
            st = lib.tblob_tensor_dequantize_opts(self._ptr, i, code, begin, end, dst, nbytes,
                                                  ctypes.byref(opts), ctypes.byref(d))
        _check(st, d)
        if rows is None:
            shape = self._logical_shape(i)
            if int(np.prod(shape, dtype=np.uint64)) == out.size:
                return self._convert(out.reshape(shape))
            return self._convert(out)
        cols = (out.size // (end - begin)) if end > begin else 0
        return self._convert(out.reshape(end - begin, cols) if end > begin else out)

    def quant_info(self, name: str) -> QuantInfo:
        """How the tensor dequantizes: scheme, bits, group size, logical shape, companions."""
        i = self._find(name)
        d = _ffi.new(_ffi.Diag)
        if self._format == 4:
            u = _ffi.new(_ffi.UqffLayerInfo)
            _check(lib.tblob_uqff_layer_info_at(self._ptr, i, ctypes.byref(u), ctypes.byref(d)), d)
            shape = tuple(self._shape(i))
            return QuantInfo(
                scheme=_ffi.cstr(u.label), quantized=u.family != 255, companion=False,
                source="uqff", bits=u.bits, group_size=u.group_size,
                scale_dtype=_dtype_name(u.scale_dtype) if u.scale_dtype else None,
                bias_dtype=None, shape=shape, rows=int(u.rows), cols=int(u.cols), status=None,
                extra={"family": _UQFF_FAMILIES.get(u.family, str(u.family)),
                       "ggml_type": None if u.ggml_type == 0xFFFFFFFF else int(u.ggml_type),
                       "experts": int(u.experts), "shard": int(u.shard),
                       "weight_dtype": _dtype_name(u.weight_dtype),
                       "stored_bytes": int(u.stored_bytes), "has_bias": bool(u.has_bias)})
        q = _ffi.new(_ffi.QuantInfo)
        _check(lib.tblob_tensor_quant_info(self._ptr, i, ctypes.byref(q), ctypes.byref(d)), d)
        names = self._names_list()

        def nm(ix: int) -> Optional[str]:
            return names[ix] if 0 <= ix < len(names) else None

        return QuantInfo(
            scheme=_ffi.cstr(lib.tblob_quant_scheme_name(q.scheme)),
            quantized=bool(q.flags & 1), companion=bool(q.flags & 2),
            source=_SOURCES.get(q.source, str(q.source)), bits=q.bits, group_size=q.group_size,
            scale_dtype=_dtype_name(q.scale_dtype) if q.scale_dtype else None,
            bias_dtype=_dtype_name(q.bias_dtype) if q.bias_dtype else None,
            shape=tuple(q.shape[: q.rank]) if q.rank else (), rows=int(q.rows), cols=int(q.cols),
            status=None if q.status == 0 else _ffi.cstr(lib.tblob_status_name(q.status)),
            weight=nm(q.weight_index), scale=nm(q.scale_index), bias=nm(q.bias_index),
            global_scale=nm(q.global_scale_index), special=q.special)

    def __repr__(self) -> str:
        state = "closed" if self._h is None else f"{self._count} tensors"
        return f"<tensorblob.SafeOpen {self.format if self._h else ''} {state}>"


_UNSET: Any = object()


def _backend_mode(backend: Any, mode: Optional[str]) -> str:
    """mode ("map"/"read") from safetensors' backend= ("mmap"/"pread") and tensorblob's mode=."""
    if backend is _UNSET:
        return "map" if mode is None else mode
    if not isinstance(backend, str):
        raise TypeError(f"argument 'backend': {backend!r} is not an instance of 'str'")
    if backend not in ("mmap", "pread"):
        raise SafetensorError(f'backend "{backend}" is invalid (expected one of: "mmap", "pread")')
    chosen = "map" if backend == "mmap" else "read"
    if mode is not None and mode != chosen:
        raise ValueError(f"backend={backend!r} and mode={mode!r} disagree; give one of them")
    return chosen


def safe_open(path: Union[PathLike, Buffer, Any], framework: str = "numpy", device: str = "cpu",
              backend: str = _UNSET, *, mode: Optional[str] = None,
              names: Optional[Sequence[str]] = None,
              siblings: Optional[Callable[[str], Any]] = None) -> SafeOpen:
    """Opens a model, a drop-in for ``safetensors.safe_open`` (0.8.0).

    path: a safetensors file; a directory with model.safetensors.index.json or that index; an
    Ollama store manifest, or "<store root>/<name:tag>"; a UQFF directory or shard; an SLM1
    file; or a bytes-like buffer holding a safetensors or SLM1 file (borrowed: do not modify
    it while the model lives). The format is detected from the content.
    Or a binary file object with seek() and read() (or readinto()): the model reads through
    it, the header at open and then only the tensors asked for (get_tensor returns copies;
    the file object must stay open while the model lives and is used under a lock, so the
    model may be shared between threads). A text-mode file object raises TypeError, as
    safetensors does for every file object.
    framework: "numpy"/"np" (read-only arrays aliasing the mapping), "mlx" (mx.array copies),
    "pt"/"torch", "jax"/"flax" (ImportError naming the package when it is not installed);
    another name raises SafetensorError as safetensors does.
    backend: as safetensors, "mmap" (default: the file is mapped, get_tensor is zero copy) or
    "pread" (the C library's read mode: the file's bytes are read into memory the model owns
    and the file is closed; nothing stays mapped, so a file replaced or truncated later cannot
    fault a reader). Another string raises SafetensorError, a non-string TypeError.
    mode: tensorblob's older spelling of backend: "map" (= "mmap") or "read" (= "pread").
    names: SLM1 only, the tensor names a runtime will look up (SLM1 stores only hashes).
    siblings: file objects only: called with a shard name of a sharded checkpoint's index,
    returns that file opened for binary reading (FileNotFoundError or None: no such file).
    """
    mode = _backend_mode(backend, mode)
    _frameworks.converter(framework)  # an unknown or missing framework fails before opening
    if device != "cpu":
        raise ValueError(f"tensorblob reads to the CPU only, not {device!r}")
    if isinstance(path, io.TextIOBase):
        raise TypeError(f"argument 'filename': expected str, bytes or os.PathLike object or a "
                        f"binary file object, not {type(path).__name__} (a text-mode file)")
    if hasattr(path, "seek") and (hasattr(path, "readinto") or hasattr(path, "read")):
        return SafeOpen(_open_fileobj(path, siblings), framework)
    if isinstance(path, (bytes, bytearray, memoryview, np.ndarray)):
        return SafeOpen(_open_buffer(path, names), framework)
    return SafeOpen(_open_path(path, mode, names), framework)


# ---- Ollama stores ----

@dataclass(frozen=True)
class VerifyProgress:
    """Passed to the verify progress callable after each blob."""
    blobs_done: int
    blobs_total: int
    bytes_done: int
    bytes_total: int


@dataclass(frozen=True)
class BlobProblem:
    """A blob that failed verification."""
    status: str
    digest: str
    actual_digest: str
    expected_size: int
    actual_size: Optional[int]
    path: str
    message: str


@dataclass
class VerifyResult:
    """What Store.verify found. ok is False when any blob or manifest is bad."""
    ok: bool
    manifests: int
    manifests_bad: int
    blobs: int
    blobs_bad: int
    bytes_hashed: int
    threads_used: int
    problems: List[BlobProblem]
    error: Optional[TensorblobError] = None


@dataclass(frozen=True)
class StoreModel:
    """One manifest of a store, as Store.entries lists it."""
    name: str
    short_name: str
    manifest_id: str
    total_bytes: int
    layer_count: int
    tensor_layer_count: int
    modified_unix: int
    status: Optional[str]
    message: str


class Store:
    """An Ollama model store (its manifests/ and blobs/ directories)."""

    def __init__(self, root: Optional[PathLike] = None) -> None:
        self._ptr: Optional[int] = None
        out = ctypes.c_void_p()
        d = _ffi.new(_ffi.Diag)
        opts = _ffi.new(_ffi.StoreOptions)
        r = None if root is None else os.fsencode(root)
        st = lib.tblob_store_open(r, ctypes.byref(opts), ctypes.byref(out), ctypes.byref(d))
        if st != 0:
            raise _error(d, st, MissingFileError if st == -4 else None)
        self._ptr = out.value

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Closes the store; models opened from it stay usable."""
        p, self._ptr = self._ptr, None
        if p:
            lib.tblob_store_close(p)

    def __del__(self) -> None:
        self.close()

    def _p(self) -> int:
        if not self._ptr:
            raise ValueError("the store is closed")
        return self._ptr

    def entries(self) -> List[StoreModel]:
        """Every manifest, in name order, readable or not (status says)."""
        got: List[StoreModel] = []
        err: List[BaseException] = []

        def cb(_user: Any, e: Any) -> int:
            if err:
                return 1
            try:
                x = e.contents
                got.append(StoreModel(
                    _ffi.text(x.name, x.name_len), _ffi.text(x.short_name, x.short_name_len),
                    _ffi.text(x.manifest_id, x.manifest_id_len), int(x.total_bytes),
                    int(x.layer_count), int(x.tensor_layer_count), int(x.modified_unix),
                    None if x.status == 0 else _ffi.cstr(lib.tblob_status_name(x.status)),
                    _ffi.cstr(x.message)))
                return 0
            except BaseException as ex:  # noqa: BLE001 - re-raised after the C call
                err.append(ex)
                return 1

        fn = _ffi.STORE_ENTRY_FN(cb)
        d = _ffi.new(_ffi.Diag)
        st = lib.tblob_store_list(self._p(), fn, None, ctypes.byref(d))
        if err:
            raise err[0]
        _check(st, d)
        return got

    def models(self) -> List[str]:
        """The models' names as `ollama list` shows them ("name:tag")."""
        return [e.short_name for e in self.entries()]

    def open(self, name: str, *, component: Optional[str] = None, mode: str = "map") -> SafeOpen:
        """Opens model "name[:tag]" as one SafeOpen over all its tensor blobs; component
        ("text_encoder", "vae", ...) keeps only that component's layers."""
        b = name.encode()
        so = _ffi.new(_ffi.StoreOpenOptions)
        oo = _options(mode)
        so.open = ctypes.pointer(oo)
        if component is not None:
            c = component.encode()
            so.component, so.component_len = c, len(c)
        out = ctypes.c_void_p()
        d = _ffi.new(_ffi.Diag)
        _check(lib.tblob_store_open_model(self._p(), b, len(b), ctypes.byref(so), ctypes.byref(out),
                                          ctypes.byref(d)), d)
        return SafeOpen(_Handle(out.value, mapped=(mode == "map")))

    def import_model(self, name: str, source_dir: PathLike, *,
                     progress: Optional[Callable[["ImportProgress"], Any]] = None) -> "ImportResult":
        """Imports source_dir (config.json, *.safetensors or a sharded checkpoint, other *.json,
        component subdirectories) as model name, the way `ollama create` does: one blob per
        tensor, de-duplicated by content, the manifest written last. Running it again changes
        nothing (manifest_written False, blobs_written 0). progress is called on this thread
        before the first blob and after each tensor blob; if it raises, the import is cancelled
        (no manifest is written) and the exception propagates."""
        return _store_import(self, name, source_dir, progress)

    def gc(self, *, remove: bool = False, min_age_seconds: int = 3600) -> "GcResult":
        """Lists the files of blobs/ no manifest references, partial downloads and temporary
        files older than min_age_seconds; with remove=True deletes them. Raises when a
        manifest cannot be read (its blobs would look unreferenced)."""
        return _store_gc(self, remove, min_age_seconds)

    def verify(self, name: Optional[str] = None, *,
               progress: Optional[Callable[[VerifyProgress], Any]] = None,
               threads: int = 0, map: bool = False) -> VerifyResult:
        """SHA-256 and size of every blob of one model (or of all models when name is None).

        The GIL is released while hashing. progress is called on this thread after each blob;
        if it raises, verification is cancelled and the exception propagates. Bad blobs are
        reported in the result (ok False); other failures raise.
        """
        errs: List[BaseException] = []
        problems: List[BlobProblem] = []

        def on_progress(_u: Any, p: Any) -> int:
            if errs:  # already cancelled: never call back into a callable that raised
                return 1
            try:
                x = p.contents
                if progress is not None:
                    progress(VerifyProgress(int(x.blobs_done), int(x.blobs_total),
                                            int(x.bytes_done), int(x.bytes_total)))
                return 0
            except BaseException as ex:  # noqa: BLE001 - re-raised after the C call
                errs.append(ex)
                return 1

        def on_blob(_u: Any, r: Any) -> int:
            if errs:
                return 1
            try:
                x = r.contents
                if x.status != 0:
                    problems.append(BlobProblem(
                        _ffi.cstr(lib.tblob_status_name(x.status)),
                        _ffi.text(x.digest, x.digest_len),
                        _ffi.text(x.actual_digest, x.actual_digest_len), int(x.expected_size),
                        None if x.actual_size == 0xFFFFFFFFFFFFFFFF else int(x.actual_size),
                        _ffi.text(x.path, x.path_len), _ffi.cstr(x.message)))
                return 0
            except BaseException as ex:  # noqa: BLE001
                errs.append(ex)
                return 1

        o = _ffi.new(_ffi.VerifyOptions)
        o.threads = threads
        pf, bf = _ffi.VERIFY_PROGRESS_FN(on_progress), _ffi.BLOB_RESULT_FN(on_blob)
        o.progress, o.on_blob = pf, bf
        o.flags = 1 if map else 0
        s = _ffi.new(_ffi.VerifySummary)
        d = _ffi.new(_ffi.Diag)
        b = None if name is None else name.encode()
        st = lib.tblob_store_verify(self._p(), b, 0 if b is None else len(b), ctypes.byref(o),
                                    ctypes.byref(s), ctypes.byref(d))
        if errs:
            raise errs[0]
        res = VerifyResult(st == 0, int(s.manifests), int(s.manifests_bad), int(s.blobs),
                           int(s.blobs_bad), int(s.bytes_hashed), int(s.threads_used), problems)
        if st != 0:
            e = _error(d, st)
            if not (problems or s.manifests_bad):
                raise e
            res.error = e
        return res


@dataclass
class ImportResult:
    """What Store.import_model did."""
    manifest_written: bool
    layers: int
    tensors: int
    blobs_written: int
    blobs_reused: int
    bytes_written: int


@dataclass
class GcEntry:
    """One file Store.gc listed: kind "unreferenced", "partial" or "temp"; removed is None
    (dry run), True, or the status name of the failed unlink."""
    kind: str
    file_name: str
    size: int
    removed: Any


@dataclass
class GcResult:
    """Store.gc's totals and the files it listed."""
    manifests: int
    referenced_blobs: int
    listed_files: int
    listed_bytes: int
    removed_files: int
    removed_bytes: int
    entries: List[GcEntry] = field(default_factory=list)


_GC_KINDS = {1: "unreferenced", 2: "partial", 3: "temp"}


@dataclass
class ImportProgress:
    """Store.import_model's progress: tensors and their data bytes done so far."""
    tensors_done: int
    tensors_total: int
    bytes_done: int
    bytes_total: int


def _store_import(store: Store, name: str, source_dir: PathLike,
                  progress: Optional[Callable[[ImportProgress], Any]]) -> ImportResult:
    errs: List[BaseException] = []

    def cb(_u: Any, p: Any) -> int:
        if errs:  # already cancelled: never call back into a callable that raised
            return 1
        try:
            x = p.contents
            if progress is not None:
                progress(ImportProgress(int(x.tensors_done), int(x.tensors_total),
                                        int(x.bytes_done), int(x.bytes_total)))
            return 0
        except BaseException as ex:  # noqa: BLE001 - re-raised after the C call
            errs.append(ex)
            return 1

    b = name.encode()
    o = _ffi.new(_ffi.ImportOptions)
    fn = _ffi.IMPORT_PROGRESS_FN(cb)
    o.progress = fn
    r = _ffi.new(_ffi.ImportResult)
    d = _ffi.new(_ffi.Diag)
    st = lib.tblob_store_import(store._p(), b, len(b), os.fsencode(source_dir), ctypes.byref(o),
                                ctypes.byref(r), ctypes.byref(d))
    if errs:
        raise errs[0]
    _check(st, d)
    return ImportResult(bool(r.manifest_written), int(r.layers), int(r.tensors),
                        int(r.blobs_written), int(r.blobs_reused), int(r.bytes_written))


def _store_gc(store: Store, remove: bool, min_age_seconds: int) -> GcResult:
    entries: List[GcEntry] = []
    errs: List[BaseException] = []

    def cb(_u: Any, e: Any) -> int:
        try:
            x = e.contents
            removed: Any = None
            if remove:
                removed = True if x.removed == 0 else _ffi.cstr(lib.tblob_status_name(x.removed))
            entries.append(GcEntry(_GC_KINDS.get(int(x.kind), str(int(x.kind))),
                                   _ffi.text(x.file_name, x.file_name_len), int(x.size), removed))
            return 0
        except BaseException as ex:  # noqa: BLE001 - re-raised after the C call
            errs.append(ex)
            return 1

    o = _ffi.new(_ffi.GcOptions)
    o.flags = 1 if remove else 0  # TBLOB_GC_REMOVE
    o.min_age_seconds = min_age_seconds
    fn = _ffi.GC_FN(cb)
    o.on_entry = fn
    r = _ffi.new(_ffi.GcResult)
    d = _ffi.new(_ffi.Diag)
    st = lib.tblob_store_gc(store._p(), ctypes.byref(o), ctypes.byref(r), ctypes.byref(d))
    if errs:
        raise errs[0]
    _check(st, d)
    return GcResult(int(r.manifests), int(r.referenced_blobs), int(r.listed_files),
                    int(r.listed_bytes), int(r.removed_files), int(r.removed_bytes), entries)


def open_store(root: Optional[PathLike] = None) -> Store:
    """Opens an Ollama store: root, else $OLLAMA_MODELS, else ~/.ollama/models."""
    return Store(root)
