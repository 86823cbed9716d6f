"""tensorblob: a drop-in for safetensors.safe_open (0.8.0: backend=, its slicing rules and
errors; framework numpy, mlx, torch, jax) over the tensorblob C library, which also reads
sharded checkpoints, Ollama stores, UQFF, SLM1 and GGUF, dequantizes quantized tensors and
quantizes (quantize: mx.quantize's layout; ggml_quantize: ggml blocks).

    import tensorblob
    with tensorblob.safe_open("model.safetensors", framework="numpy") as f:
        w = f.get_tensor("lm_head.weight")   # read-only, zero copy
    with open("model.safetensors", "rb") as fh, tensorblob.open(fh) as f:
        w = f.get_tensor("lm_head.weight")   # the header, then only this tensor, is read
"""
from ._core import (BlobProblem, GcEntry, GcResult, ImportProgress, ImportResult, QuantInfo, SafeOpen, SafeSlice,
                    Store, StoreModel, VerifyProgress, VerifyResult, open_store, safe_open)
from ._errors import (CancelledError, ReversedSliceError, SafetensorError, DequantError, DigestError, FormatError,
                      InvalidArgumentError, LimitError, MissingFileError, NotFoundError,
                      TensorblobError, TensorblobIOError, UnsupportedError)
from ._ffi import lib as _lib, library_path
from ._quantize import GGML_TYPES, ggml_quantize, quantize

__version__ = "0.1.0"


# tensorblob.open(path_or_file): the same as safe_open.
open = safe_open  # noqa: A001


def library_version() -> str:
    """The version of the C library actually loaded ("MAJOR.MINOR.PATCH")."""
    return str(_lib.tblob_version_string().decode())


def kernel() -> str:
    """The dequantization kernel set in use ("scalar", "avx2", "avx512", "neon")."""
    return str(_lib.tblob_kernel_active().decode())


def set_kernel(name: "str | None" = None) -> None:
    """Forces the process-wide kernel set ("scalar", "avx2", "avx512", "neon"); None or "auto"
    returns to the automatic choice. A set that is unknown, compiled out or that this host
    cannot run raises (TBLOB_E_KERNEL_UNAVAILABLE), never a silent fallback."""
    import ctypes

    from . import _core, _ffi

    d = _ffi.new(_ffi.Diag)
    _core._check(_lib.tblob_kernel_set(None if name is None else name.encode(), ctypes.byref(d)), d)


def ggml_kernel() -> str:
    """The GGML kernels in use ("scalar", "avx2" or "neon")."""
    return str(_lib.tblob_ggml_kernel_name().decode())


def features() -> "list[str]":
    """What the loaded library was built with: "format:safetensors", "format:gguf", ...,
    "kernel:avx2", "kernel:scalar" (tblob_features)."""
    import ctypes

    n = ctypes.c_size_t(0)
    arr = _lib.tblob_features(ctypes.byref(n))
    return [arr[i].decode() for i in range(n.value)]


__all__ = [
    "safe_open", "open", "open_store", "SafeOpen", "SafeSlice", "Store", "StoreModel", "QuantInfo",
    "VerifyProgress", "VerifyResult", "BlobProblem", "TensorblobError", "TensorblobIOError",
    "MissingFileError", "FormatError", "LimitError", "DigestError", "DequantError",
    "NotFoundError", "InvalidArgumentError", "SafetensorError",
    "ReversedSliceError", "CancelledError", "UnsupportedError",
    "quantize", "ggml_quantize", "GGML_TYPES",
    "library_path", "library_version", "kernel", "set_kernel", "ggml_kernel", "features",
    "ImportProgress", "ImportResult", "GcResult", "GcEntry", "__version__",
]
