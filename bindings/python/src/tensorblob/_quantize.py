"""tensorblob.quantize and tensorblob.ggml_quantize: the C library's quantizers
(tblob_quant_quantize, tblob_ggml_quantize; rules and oracles in docs/quantize.md) on numpy
arrays, returning what the formats' own tools return:

- quantize(w, "affine"|"mxfp4"|"mxfp8"|"nvfp4", ...) -> the tuple mx.quantize returns, as numpy
  arrays: (w_q uint32 (..., cols * bits / 32), scales (..., cols / group_size)[, biases]);
  affine scales/biases in the input's dtype unless scale_dtype says otherwise, the FP schemes'
  scales as uint8 (E8M0 / E4M3 bytes, as MLX stores them); "block-fp8" (2-D only) ->
  (codes float8_e4m3fn (rows, cols), scales (ceil(rows/G), ceil(cols/G))).
- ggml_quantize(w, "Q8_0"|... or ggml type id) -> uint8 (..., row bytes), as
  gguf.quants.quantize returns.
The input is float32, float16 or bfloat16 (ml_dtypes), an mx.array or anything numpy can
read as one of them; quantization runs over the last axis, rows are the other axes.
"""
from __future__ import annotations

import ctypes
from typing import Any, Optional, Tuple

import ml_dtypes
import numpy as np

from . import _ffi
from ._core import _check
from ._errors import TensorblobError
from ._ffi import lib

_SRC_DTYPES = {np.dtype(np.float32): 10, np.dtype(np.float16): 6, np.dtype(ml_dtypes.bfloat16): 7}
_DTYPE_CODES = {**_SRC_DTYPES}
_CODE_DTYPES = {v: k for k, v in _SRC_DTYPES.items()}
_F8_E8M0, _F8_E4M3 = 17, 16

# scheme name -> (tblob_quant_scheme, default bits, default group size), MLX's defaults.
_SCHEMES = {
    "affine": (1, 4, 64), "mlx-affine": (1, 4, 64),
    "mxfp4": (2, 4, 32), "mxfp8": (3, 8, 32), "nvfp4": (4, 4, 16),
    "block-fp8": (14, 8, 128),
}

# ggml's type numbering (ggml.h's enum ggml_type, as gguf-py's GGMLQuantizationType).
GGML_TYPES = {
    "F32": 0, "F16": 1, "Q4_0": 2, "Q4_1": 3, "Q5_0": 6, "Q5_1": 7, "Q8_0": 8, "Q8_1": 9,
    "Q2_K": 10, "Q3_K": 11, "Q4_K": 12, "Q5_K": 13, "Q6_K": 14, "Q8_K": 15, "IQ2_XXS": 16,
    "IQ2_XS": 17, "IQ3_XXS": 18, "IQ1_S": 19, "IQ4_NL": 20, "IQ3_S": 21, "IQ2_S": 22,
    "IQ4_XS": 23, "I8": 24, "I16": 25, "I32": 26, "I64": 27, "F64": 28, "IQ1_M": 29,
    "BF16": 30, "TQ1_0": 34, "TQ2_0": 35, "MXFP4": 39, "NVFP4": 40, "Q1_0": 41,
}


def _as_numpy(a: Any) -> np.ndarray:
    """A C-contiguous float32/float16/bfloat16 numpy array of `a` (an mx.array's bfloat16
    through its uint16 bits, since numpy cannot read it directly)."""
    if type(a).__module__.startswith("mlx"):
        import mlx.core as mx
        if a.dtype == mx.bfloat16:
            a = np.array(a.view(mx.uint16)).view(ml_dtypes.bfloat16)
        else:
            a = np.array(a)
    a = np.ascontiguousarray(a)
    if a.dtype not in _SRC_DTYPES:
        raise TypeError(f"quantize: input must be float32, float16 or bfloat16, not {a.dtype}")
    if a.ndim < 1:
        raise ValueError("quantize: input needs at least one dimension (the row)")
    return a


def _buf(n: int, dtype: Any) -> np.ndarray:
    dt = np.dtype(dtype)
    return np.empty(n // dt.itemsize, dtype=dt)


def quantize(array: Any, scheme: str = "affine", bits: Optional[int] = None,
             group_size: Optional[int] = None, *, scale_dtype: Any = None,
             global_scale: Optional[float] = None, threads: int = 1) -> Tuple[np.ndarray, ...]:
    """Quantizes over the last axis like ``mx.quantize(array, group_size, bits, mode=scheme)``
    (mlx 0.32.4, CPU), byte for byte. scheme: "affine" (bits 2, 3, 4, 5, 6, 8; group size 32,
    64, 128), "mxfp4", "mxfp8" (group 32), "nvfp4" (group 16; global_scale: MLX's
    ``global_scale`` argument), "block-fp8" (2-D, group_size = block edge). Defaults are
    MLX's. scale_dtype: affine/block-fp8 only (float32, float16 or bfloat16; default the
    input's). Returns (w_q, scales, biases) for affine, (w_q, scales) otherwise. Errors are
    the library's (e.g. NaN input: DequantError TBLOB_E_QUANT_NONFINITE)."""
    if scheme not in _SCHEMES:
        raise ValueError(f"quantize: scheme must be one of {sorted(_SCHEMES)}, not {scheme!r}")
    code, dbits, dgroup = _SCHEMES[scheme]
    a = _as_numpy(array)
    cols = a.shape[-1]
    rows = a.size // cols if cols else 0
    if code == 14 and a.ndim != 2:
        raise ValueError("quantize: block-fp8 takes a 2-D array")
    desc = _ffi.new(_ffi.QuantDesc)
    desc.scheme = code
    desc.bits = dbits if bits is None else int(bits)
    desc.group_size = dgroup if group_size is None else int(group_size)
    desc.rows, desc.cols = rows, cols
    if code in (1, 14):
        sdt = a.dtype if scale_dtype is None else np.dtype(scale_dtype)
        if sdt not in _DTYPE_CODES:
            raise TypeError(f"quantize: scale_dtype must be float32, float16 or bfloat16, not {sdt}")
        desc.scale_dtype = _DTYPE_CODES[sdt]
        desc.bias_dtype = desc.scale_dtype if code == 1 else 0
    else:
        if scale_dtype is not None:
            raise ValueError(f"quantize: {scheme} has fixed scales (scale_dtype is not taken)")
        desc.scale_dtype = _F8_E4M3 if code == 4 else _F8_E8M0
    gs = None
    if global_scale is not None:
        if code != 4:
            raise ValueError("quantize: global_scale is for nvfp4 only")
        gs = np.array([global_scale], dtype=np.float32)
        desc.global_scale_mode = 2  # TBLOB_GLOBAL_SCALE_MLX_AMAX: MLX's argument
        desc.global_scale = gs.ctypes.data
        desc.global_scale_bytes = 4
    d = _ffi.new(_ffi.Diag)
    _check(lib.tblob_quant_size(ctypes.byref(desc), ctypes.byref(d)), d)
    if code == 14:
        data = _buf(desc.data_bytes, ml_dtypes.float8_e4m3fn)
        scales = _buf(desc.scales_bytes, _CODE_DTYPES[desc.scale_dtype])
    else:
        data = _buf(desc.data_bytes, np.uint32)
        scales = _buf(desc.scales_bytes, np.uint8 if code in (2, 3, 4)
                      else _CODE_DTYPES[desc.scale_dtype])
    biases = _buf(desc.biases_bytes, _CODE_DTYPES[desc.bias_dtype]) if code == 1 else None
    desc.data = data.ctypes.data if data.size else None
    desc.scales = scales.ctypes.data if scales.size else None
    desc.biases = biases.ctypes.data if biases is not None and biases.size else None
    opts = _ffi.new(_ffi.QuantizeOptions)
    opts.threads = int(threads)
    st = lib.tblob_quant_quantize(ctypes.byref(desc), _SRC_DTYPES[a.dtype],
                                  a.ctypes.data if a.size else None, a.nbytes,
                                  ctypes.byref(opts), ctypes.byref(d))
    _check(st, d)
    lead = a.shape[:-1]
    if code == 14:
        g = desc.group_size
        return data.reshape(a.shape), scales.reshape(-(-a.shape[0] // g), -(-cols // g))
    out = [data.reshape(lead + (-1,) if rows else lead + (0,)),
           scales.reshape(lead + (-1,) if rows else lead + (0,))]
    if biases is not None:
        out.append(biases.reshape(lead + (-1,) if rows else lead + (0,)))
    return tuple(out)


def ggml_quantize(array: Any, type: Any, importance: Any = None, *,  # noqa: A002
                  threads: int = 1) -> np.ndarray:
    """Quantizes over the last axis into ggml blocks, bit-exact with ggml's
    ggml_quantize_chunk (docs/quantize.md "GGML blocks"). type: a name ("Q8_0", "Q4_K", ...),
    a ggml type id, or gguf's GGMLQuantizationType. importance: None, or one non-negative
    weight per column for the types that take them (imatrix). Returns uint8 of shape
    array.shape[:-1] + (row bytes,), the layout gguf.quants.quantize returns."""
    if isinstance(type, str):
        if type.upper() not in GGML_TYPES:
            raise ValueError(f"ggml_quantize: unknown ggml type {type!r}")
        t = GGML_TYPES[type.upper()]
    else:
        t = int(type)
    a = _as_numpy(array)
    cols = a.shape[-1]
    rows = a.size // cols if cols else 0
    d = _ffi.new(_ffi.Diag)
    row = ctypes.c_uint64()
    _check(lib.tblob_ggml_row_size(t, cols, ctypes.byref(row), ctypes.byref(d)), d)
    out = np.empty(a.shape[:-1] + (row.value,), dtype=np.uint8)
    imp = None
    if importance is not None:
        imp = np.ascontiguousarray(importance, dtype=np.float32).reshape(-1)
        if imp.size != cols:
            raise ValueError(f"ggml_quantize: importance needs {cols} weights, not {imp.size}")
    opts = _ffi.new(_ffi.QuantizeOptions)
    opts.threads = int(threads)
    st = lib.tblob_ggml_quantize(
        t, _SRC_DTYPES[a.dtype], a.ctypes.data if a.size else None, a.nbytes, rows, cols,
        imp.ctypes.data_as(ctypes.POINTER(ctypes.c_float)) if imp is not None else None,
        out.ctypes.data if out.size else None, out.nbytes, ctypes.byref(opts), ctypes.byref(d))
    _check(st, d)
    return out


__all__ = ["quantize", "ggml_quantize", "GGML_TYPES", "TensorblobError"]
