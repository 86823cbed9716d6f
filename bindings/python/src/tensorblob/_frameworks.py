"""The framework= of safe_open: which array type get_tensor, get_slice and dequantize return.

numpy is the native form (read-only arrays aliasing the file's mapping, BF16/F8 as ml_dtypes
types). The others are built from that array: mlx copies into an mx.array (MLX arrays own
their memory), BF16 through a uint16 view so no value is rounded; torch and jax the same way
through their own dtypes. A framework whose package is not importable raises ImportError
(ModuleNotFoundError) naming the package, as safetensors does for torch.
"""
from __future__ import annotations

import importlib
from typing import Any, Callable

import ml_dtypes
import numpy as np

from ._errors import SafetensorError

Converter = Callable[[np.ndarray], Any]

_BF16 = np.dtype(ml_dtypes.bfloat16)
_F8 = {np.dtype(t) for t in (ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fn,
                              ml_dtypes.float8_e8m0fnu, ml_dtypes.float8_e4m3fnuz,
                              ml_dtypes.float8_e5m2fnuz)}


def _need(module: str, package: str, framework: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:  # ModuleNotFoundError, the class safetensors lets through
        raise ModuleNotFoundError(f"framework={framework!r} needs the {package!r} package, which "
                                  f"is not installed (pip install {package})", name=package) from e


def _numpy(a: np.ndarray) -> np.ndarray:
    return a


def _mlx(framework: str) -> Converter:
    mx = _need("mlx.core", "mlx", framework)

    def conv(a: np.ndarray) -> Any:
        if a.dtype == _BF16:
            return mx.array(np.ascontiguousarray(a).view(np.uint16)).view(mx.bfloat16)
        if a.dtype in _F8:
            raise TypeError(f"MLX has no {a.dtype} dtype; read it with framework='numpy' or "
                            f"dequantize() it")
        return mx.array(a)
    return conv


def _torch(framework: str) -> Converter:
    torch = _need("torch", "torch", framework)
    f8 = {np.dtype(ml_dtypes.float8_e5m2): "float8_e5m2",
          np.dtype(ml_dtypes.float8_e4m3fn): "float8_e4m3fn",
          np.dtype(ml_dtypes.float8_e8m0fnu): "float8_e8m0fnu",
          np.dtype(ml_dtypes.float8_e4m3fnuz): "float8_e4m3fnuz",
          np.dtype(ml_dtypes.float8_e5m2fnuz): "float8_e5m2fnuz"}

    def conv(a: np.ndarray) -> Any:
        # torch has no read-only tensors: a writeable copy, so writing to it can never reach
        # the file's read-only mapping (a segfault) or another reader's data.
        a = np.array(a, copy=True)
        if a.dtype == _BF16:
            return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
        if a.dtype in f8:
            return torch.from_numpy(a.view(np.uint8)).view(getattr(torch, f8[a.dtype]))
        return torch.from_numpy(a)
    return conv


def _jax(framework: str) -> Converter:
    jnp = _need("jax.numpy", "jax", framework)

    def conv(a: np.ndarray) -> Any:
        return jnp.asarray(a)  # jax reads ml_dtypes' bfloat16/float8 types natively
    return conv


def converter(framework: Any) -> Converter:
    """The converter for a framework name as safetensors spells them; SafetensorError for a
    name safetensors does not know either."""
    if framework in ("np", "numpy"):
        return _numpy
    if framework == "mlx":
        return _mlx(framework)
    if framework in ("pt", "torch"):
        return _torch(framework)
    if framework in ("jax", "flax"):
        return _jax(framework)
    if framework in ("tf", "tensorflow", "paddle"):
        raise NotImplementedError(f"tensorblob does not return {framework} tensors; use "
                                  f"framework='numpy' and convert")
    raise SafetensorError(f"framework {framework} is invalid")
